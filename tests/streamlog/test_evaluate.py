"""The evaluator's state: retention bounds it without changing what rules within the bound derive; a silent
stream is punctuated after an idle time so that it does not hold the output back."""
from __future__ import annotations

import gc
import os
import random
import threading

from srtopo.streamlog import Streamlog, parse_program, run_streams

RECENT = ("again(T,X) :- msg(T,X), msg(T0,X), T0 < T, T0 >= T - 3.\n"
          "count(T,N) :- msg(T,_), N = #count{ X : msg(T0,X), T0 < T, T0 >= T - 2 }.\n")


def _run(streamlog: Streamlog, lines):
    out = []
    for n, line in enumerate(lines, start=1):
        out += streamlog.push(0, line, n)
    return [(m.time, m.atoms) for m in out + streamlog.finish()]


def test_retention_keeps_what_rules_looking_back_within_it_derive():
    rng = random.Random(7)
    lines = [f"msg({t},{rng.choice('abcde')})." for t in range(1, 400) for _ in range(rng.randrange(3))]
    program = parse_program(RECENT).check()
    unbounded = Streamlog(program)
    bounded = Streamlog(program, retain=4)
    assert _run(bounded, lines) == _run(unbounded, lines)
    assert bounded.evaluator.solver.stats["rebuilds"] > 50        # the Control was really rebuilt, state dropped
    # unbounded: rebuilt only every Evaluator.STEPS steps (keeping everything), not every 4 timestamps
    assert unbounded.evaluator.solver.stats["rebuilds"] <= 1 + 400 // unbounded.evaluator.STEPS


def test_a_silent_stream_is_punctuated_after_the_idle_time(tmp_path):
    program = parse_program("msg(T,S) :- sensr1(T,S).\nmsg(T,S) :- sensr2(T,S).\n").check()
    first = tmp_path / "s1.txt"
    first.write_text("sensr1(1,a).\nsensr1(2,b).\n")
    fifo = str(tmp_path / "s2")
    os.mkfifo(fifo)
    streamlog = Streamlog(program, ("s1", "s2"))
    out = []
    released = threading.Event()

    def emit(model):
        out.append(model.time)
        if model.time == 1:
            released.set()

    runner = threading.Thread(target=run_streams, args=(streamlog, [str(first), fifo], emit), kwargs={"idle": 0.3},
                              daemon=True)
    runner.start()
    with open(fifo, "w") as writer:            # stream 2 is open but says nothing
        assert released.wait(30), "the silent stream held the output back"
        assert out == [1]                      # 2 is the largest timestamp reached: stream 1 may still send it
        writer.write("sensr2(3,c).\n")
    runner.join(30)
    assert out == [1, 2, 3]


def test_mutated_lines_never_raise_and_each_bad_line_is_one_rejected_record():
    """Seeded mutations of valid lines (bytes flipped, cut, repeated, punctuation mangled): every line is used,
    skipped as blank or comment, or rejected once; the evaluator never raises."""
    from srtopo.io.tnt import decoded_lines
    rng = random.Random(11)
    seeds = [b"msg(3,red).", b"#punctuation 7.", b'msg(4,"x;y").', b"msg(5,f(g(1),-2)).", b"% note"]
    alphabet = b'()[]{},.;:#%"\\ \t-_aZ09\x00\xff\xc3\xa9'
    program = parse_program(RECENT).check()
    for round_ in range(20):
        streamlog = Streamlog(program)
        lines = []
        for _ in range(100):
            raw = bytearray(rng.choice(seeds))
            for _ in range(rng.randrange(4)):
                at = rng.randrange(len(raw) + 1)
                op = rng.randrange(3)
                if op == 0:
                    raw[at:at] = bytes([rng.choice(alphabet)])
                elif op == 1:
                    del raw[at:at + 1]
                else:
                    raw[at:at] = raw[:rng.randrange(len(raw) + 1)]
            lines.append(bytes(raw).replace(b"\n", b" ") + b"\n")
        for number, text in enumerate(decoded_lines(lines), start=1):
            before = (streamlog.counters.facts, streamlog.counters.punctuations, streamlog.counters.unused,
                      len(streamlog.rejected))
            streamlog.push(0, text, number)
            after = (streamlog.counters.facts, streamlog.counters.punctuations, streamlog.counters.unused,
                     len(streamlog.rejected))
            changed = sum(b != a for a, b in zip(before, after))
            blank = not text.strip() or text.strip().startswith("%")
            assert changed == (0 if blank else 1), (round_, number, text)
        streamlog.finish()
        assert all(r.line and r.reason for r in streamlog.rejected)


def test_the_step_program_is_made_once_per_program_and_never_served_to_another(monkeypatch):
    """A key partition's evaluator is made anew at each restore from the same Program: its step program and
    grounding check are computed once for that Program, and an equal text parsed again is a Program of its own."""
    from srtopo.streamlog import evaluate
    calls = []
    original = evaluate.step_program
    monkeypatch.setattr(evaluate, "step_program", lambda *a, **k: calls.append(a[0]) or original(*a, **k))
    program = parse_program(RECENT).check()
    lines = [f"msg({t},{'ab'[t % 2]})." for t in range(6)]
    first = _run(Streamlog(program), lines)
    assert _run(Streamlog(program), lines) == first and _run(Streamlog(program, retain=2), lines) == first
    assert calls == [program]
    other = parse_program("seen(T,X) :- msg(T,X), msg(T0,X), T0 < T.\n").check()
    assert _run(Streamlog(other), lines) == [(t, (f"seen({t},{'ab'[t % 2]})",)) for t in range(2, 6)]
    assert calls == [program, other]
    kept = id(other)
    assert kept in evaluate._PLANS
    del other, calls[:]
    gc.collect()
    assert kept not in evaluate._PLANS          # the step program goes with its Program
