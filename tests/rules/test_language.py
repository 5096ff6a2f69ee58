"""The I-DLV-sr extensions (external atoms, @now, #trigger_frequency, variable counting terms), the time options
and long empty stretches: hand-computed expectations, the oracle, and the command line."""
from __future__ import annotations

import json

import pytest
from clingo import Function, Number, String

from srtopo.cli import main
from srtopo.rules.compile import Options
from srtopo.rules.evaluate import Reasoner
from srtopo.rules.parse import parse_file, parse_program
from srtopo.rules.log import read_records
from srtopo.rules.points import time_points
from srtopo.solving.externals import ExternalFunctions
from tests.rules.conftest import oracle, reason_cli

SCRIPT = "external_definition/external_atoms.py"


def _cli(tmp_path, name, log, *extra, examples):
    out = tmp_path / f"{name}.jsonl"
    code = main(["reason", "--program", str(examples / "programs" / f"{name}.idlvsr"),
                 "--stream", str(examples / "logs" / log), "--out", str(out), *extra])
    assert code == 0
    return [(x["time"], x["atoms"]) for x in map(json.loads, out.read_text().splitlines())]


# ---------------------------------------------------------------- the three shipped examples, by hand

def test_now_example(tmp_path, examples_dir):
    """b(1), b(2) at 12:15:57, :58, :59. a(X,@now) :- b(X) at most X in [2 sec], not c(X): X=1 is blocked by the
    fact c(1); b(2) occurs 1, 2, 3 times in the window, so a(2,@now) holds at :57 and :58 only; c(X,T,T2) pairs
    two a(X,_) of the last second, at :58."""
    got = _cli(tmp_path, "now_example", "now_examples.log", examples=examples_dir)
    t57, t58 = '"2020-05-26T12:15:57"', '"2020-05-26T12:15:58"'
    assert got == [(0, [f"a(2,{t57})", "b(1)", "b(2)", "c(1)"]),
                   (1, [f"a(2,{t58})", "b(1)", "b(2)", "c(1)", f"c(2,{t58},{t57})"]),
                   (2, ["b(1)", "b(2)", "c(1)"])]
    # in seconds since 1970-01-01 (the date-time read as UTC): 2020-05-26T12:15:57 is 1590495357
    got = _cli(tmp_path, "now_example", "now_examples.log", "--now-format", "sec", examples=examples_dir)
    assert got[1][1][-1] == "c(2,1590495358,1590495357)" and got[0][1][0] == "a(2,1590495357)"
    got = _cli(tmp_path, "now_example", "now_examples.log", "--now-format", "min", examples=examples_dir)
    assert got[0][1][0] == "a(2,26508255)" and len(got[1][1]) == 4      # both time points in one minute: no c/3


def test_exe_trigger(tmp_path, examples_dir):
    """#trigger_frequency(4 sec): d/2 is derived at time points 0, 4 and 8 only (every 4 s from the first); there
    b in [1 sec] and c in [3 sec] pair up. f/2 reads d/2 and e/1 over the last 10 seconds."""
    got = dict(_cli(tmp_path, "exe_trigger", "exe_trigger.log", examples=examples_dir))
    d = {t: [a for a in atoms if a.startswith("d(")] for t, atoms in got.items()}
    assert d == {0: ["d(1,2)"], 1: [], 2: [], 3: [], 4: ["d(1,4)", "d(1,6)", "d(1,8)"], 5: [], 6: [], 7: [],
                 8: ["d(1,10)", "d(1,12)", "d(1,20)", "d(1,6)", "d(2,10)", "d(2,12)", "d(2,20)", "d(2,6)"], 9: []}
    f = {t: [a for a in atoms if a.startswith("f(")] for t, atoms in got.items()}
    assert f[0] == ["f(1,1)"] and f[4] == ["f(1,1)", "f(1,2)"] and f[7] == ["f(1,1)", "f(1,2)", "f(1,3)"]
    assert f[9] == [f"f({x},{y})" for x in (1, 2) for y in (1, 2, 3)]


def test_external_atoms(tmp_path, examples_dir):
    """b(1), b(1), b(3), b(3): a(X) = sub(J, Y) for J in the last second's b and Y the current b; a_abs, w = sum."""
    got = _cli(tmp_path, "external_atoms", "external_atoms.log", "--py-script",
               str(examples_dir / SCRIPT), examples=examples_dir)
    assert got == [(0, ["a(0)", "a_abs(0)", "b(1)", "p(1)", "w(1)"]),
                   (1, ["a(0)", "a_abs(0)", "b(1)", "p(1)", "w(1)"]),
                   (2, ["a(-2)", "a(0)", "a_abs(0)", "a_abs(2)", "b(3)", "p(1)", "p(3)", "w(1)", "w(3)"]),
                   (3, ["a(0)", "a_abs(0)", "b(3)", "p(1)", "p(3)", "w(1)", "w(3)"])]


@pytest.mark.parametrize("name, log, options", [
    ("now_example", "now_examples.log", Options()),
    ("now_example", "now_examples.log", Options(now_format="sec")),
    ("exe_trigger", "exe_trigger.log", Options()),
    ("external_atoms", "external_atoms.log", None)])
@pytest.mark.parametrize("strategy", ["restart", "incremental-strict"])
def test_extensions_match_the_oracle(examples_dir, name, log, options, strategy):
    if options is None:
        options = Options(scripts=(str(examples_dir / SCRIPT),))
    program = parse_file(examples_dir / "programs" / f"{name}.idlvsr")
    with open(examples_dir / "logs" / log, encoding="utf-8") as handle:
        points = list(time_points(read_records(handle)))
    reasoner = Reasoner(program, strategy=strategy, options=options)
    if reasoner.clock is not None:
        reasoner.clock.set_origin_text(points[0][1])
    got = [reasoner.step(atoms).atoms for _t, _s, atoms in points]
    clock, context = reasoner.clock, None
    now = None
    if clock is not None and clock.uses_now:
        from srtopo.rules.clock import now_symbol
        now = lambda t: now_symbol(clock.origin + t * clock.unit_micros, clock.now_format, clock.unit_micros)  # noqa
    if options.scripts:
        functions = ExternalFunctions(options.scripts)

        class Context:
            def __getattr__(self, name):
                return functions.wrapper(name)
        context = Context()
    expected = oracle(program, [atoms for _t, _s, atoms in points], now=now,
                      periods=reasoner.topology.source.triggers, context=context)
    assert got == expected and any(expected)


# ---------------------------------------------------------------- external atoms: conventions and errors

def test_external_values_tuples_lists_and_truth(tmp_path):
    script = tmp_path / "f.py"
    script.write_text("def split(s):\n    return [(s[0], len(s)), (s[-1], len(s))]\n"
                      "def big(n):\n    return n > 2\n"
                      "def name(c):\n    return c.upper()\n")
    program = ('w(A,N) :- word(W), &split(W;A,N).\nbig(N) :- n(N), &big(N;).\nsmall(N) :- n(N), not &big(N;).\n'
               "up(U) :- k(C), &name(C;U).\n")
    code, lines = reason_cli(tmp_path, program, '0 word("hello"); n(1); n(3); k(red)\n', "--py-script", str(script))
    assert code == 0
    assert lines[0]["atoms"] == ["big(3)", "k(red)", "n(1)", "n(3)", "small(1)", 'up("RED")', 'w("h",5)', 'w("o",5)',
                                 'word("hello")']


@pytest.mark.parametrize("body, message", [
    ("def f(x):\n    return 1 // x\n", "external atom &f(X;Y) at {prog}:1:15: f(0) in {script} raised ZeroDivisionError"),
    ("def f(x):\n    return 1.5\n", "f(0) in {script} returned 1.5 (float); an int or a str is expected"),
    ("def f(x):\n    return 2 ** 40\n", "beyond clingo's 32-bit integers"),
    ("def g(x):\n    return x\n", "external atom &f(X;Y) at {prog}:1:15: no function 'f' in the scripts ({script})"),
    ("", "no function 'f' in the scripts ({script})"),
    ("import not_a_module_xyz\n", "{script}: external-atom script cannot import 'not_a_module_xyz' "
                                  "(install it into the environment srtopo runs in: pip install not_a_module_xyz)"),
    (None, "{script}: external-atom script not found")])
def test_external_script_failures_are_one_located_line(tmp_path, capsys, body, message):
    script = tmp_path / "ext.py"
    if body is not None:
        script.write_text(body)
    prog = tmp_path / "p.idlvsr"
    prog.write_text("a(Y) :- b(X), &f(X;Y).\n")
    code, _lines = reason_cli(tmp_path, None, "0 b(0)\n", "--py-script", str(script), program_path=prog)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert message.format(prog=prog, script=script) in err


def test_stream_text_reaches_external_functions_as_values_only(tmp_path):
    script = tmp_path / "echo.py"
    script.write_text("def echo(s):\n    return s\n")
    code, lines = reason_cli(tmp_path, "e(Y) :- x(S), &echo(S;Y).\n",
                          '0 x(").\\n#script (python) import os #end.")\n', "--py-script", str(script))
    assert code == 0 and lines[0]["atoms"][0] == 'e(").\\n#script (python) import os #end.")'


# ---------------------------------------------------------------- counting terms

def test_variable_counting_terms_match_the_oracle():
    program = parse_program("hi(X) :- p(X) at least N in [3], lim(N).\nlo(X) :- q(X), p(X) at most N in [3], lim(N).\n"
                            "no(X) :- q(X), not p(X) at least N in [2], lim(N).\nfree(X) :- p(X) at most 1 in [2].\n"
                            "lim(2).\n")
    timeline = [[Function("p", [Number(1)]), Function("q", [Number(1)]), Function("q", [Number(2)])],
                [Function("p", [Number(1)]), Function("p", [Number(2)]), Function("q", [Number(2)])],
                [Function("p", [Number(1)]), Function("q", [Number(1)])], []]
    got = [Reasoner(program, strategy="restart").run(timeline)]
    expected = oracle(program, timeline)
    assert [r.atoms for r in got[0]] == expected
    shown = [sorted(str(a) for a in s if a.name in ("hi", "lo", "no", "free")) for s in expected]
    # by hand: p(1) at 0,1,2; p(2) at 1; q(X) binds X, so lo(2) holds at 0 with p(2) counted 0 times, while
    # free(X) binds X to atoms its window observes ([2]: time points t-2..t)
    assert shown == [["free(1)", "lo(1)", "lo(2)", "no(1)", "no(2)"], ["free(2)", "hi(1)", "lo(2)", "no(2)"],
                     ["free(2)", "hi(1)"], ["free(2)", "hi(1)"]]


# ---------------------------------------------------------------- time options

def test_numeric_timestamps_in_milliseconds_and_windows_in_seconds(tmp_path):
    program = "seen(X) :- b(X) in [1 sec].\nrecent(X) :- b(X) in [1].\n"
    log = "1000 b(1)\n1500 b(2)\n2600 b(3)\n"
    code, lines = reason_cli(tmp_path, program, log, "--t-format", "msec", "--t-unit", "sec")
    # 1000 ms -> 0, 1500 ms -> 0 (one time point of a second), 2600 ms -> 1
    assert code == 0 and [x["time"] for x in lines] == [0, 1]
    code, lines = reason_cli(tmp_path, program, log, "--t-format", "msec", "--t-unit", "msec", "--windows-unit", "sec")
    assert [x["time"] for x in lines] == [0, 500, 1600]
    # [1] is one second = 1000 time points of a millisecond: b(2) at 500 is still recent at 1600? no: 1100 ms
    assert lines[2]["atoms"] == ["b(3)", "recent(3)", "seen(3)"]
    assert "recent(1)" in lines[1]["atoms"]


def test_complete_windows_and_print_empty(tmp_path):
    program = "steady :- b always in [2].\n"
    log = "0 b\n1 b\n2 b\n"
    _code, lines = reason_cli(tmp_path, program, log)
    assert [x["atoms"] for x in lines] == [["b", "steady"], ["b", "steady"], ["b", "steady"]]
    _code, lines = reason_cli(tmp_path, program, log, "--complete-windows")
    assert [x["atoms"] for x in lines] == [["b"], ["b"], ["b", "steady"]]
    _code, lines = reason_cli(tmp_path, "q :- not b in [1].\n", "0 b\n3 b\n")
    assert [x["time"] for x in lines] == [0, 3]
    _code, lines = reason_cli(tmp_path, "q :- not b in [1].\n", "0 b\n3 b\n", "--print-empty")
    assert [x["atoms"] for x in lines] == [["b"], [], ["q"], ["b"]]


def test_idlvsr_command_line_spellings(tmp_path, capsys):
    prog = tmp_path / "p.idlvsr"
    prog.write_text("a(X) :- b(X) in [1].\n")
    log = tmp_path / "s.log"
    log.write_text("2020-01-01T00:00:00 b(1)\n")
    graphs = tmp_path / "g"
    assert main(["reason", f"--program={prog}", f"--log={log}", "--t-unit=sec", "--window-unit=sec",
                 "--now-format=hrs", f"--export-graphs={graphs}"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["atoms"] == ["a(1)", "b(1)"]
    assert sorted(p.name for p in graphs.iterdir()) == ["macro_nodes.gv", "stream_component.gv",
                                                         "stream_dependency.gv"]


# ---------------------------------------------------------------- long gaps

GAP = 3600     # a multiple of the trigger's period, 3


def test_a_long_gap_costs_what_its_windows_need(tmp_path):
    """An hour of seconds between two records: the models printed are those of every time point evaluated one by one,
    and the evaluator runs a handful of empty time points, not 3,600 (the reference evaluates all of them)."""
    program = parse_program("alarm(X) :- t(X) at least 2 in [3].\nquiet :- not t(_) in [5].\n"
                            "#temp seen(X) :- t(X) in [10].\none.\n#trigger_frequency(3) beat :- one.\n"
                            "echo :- beat in {1}.\n")
    reasoner = Reasoner(program, strategy="restart")
    first = [reasoner.step([Function("t", [Number(1)])]) for _ in range(2)]
    skipped = list(reasoner.advance(GAP, every=False))
    after = reasoner.step([Function("t", [Number(2)])])
    solves = sum(s["solves"] for s in reasoner.stage_stats())
    slow = Reasoner(program, strategy="restart")
    steps = [slow.step([Function("t", [Number(1)])]) for _ in range(2)] + [slow.step([]) for _ in range(GAP - 1)]
    reference = slow.step([Function("t", [Number(2)])])
    assert skipped == [] and after.time == reference.time == GAP + 1
    assert [r.atoms for r in first] == [r.atoms for r in steps[:2]] and after.atoms == reference.atoms
    assert [{str(a) for a in steps[t].atoms} >= {"beat"} for t in (GAP - 2, GAP - 1, GAP)] == [False, False, True]
    assert {str(a) for a in reference.atoms} >= {"echo"}      # beat at GAP, observed one time point later
    assert solves < 200          # a few dozen time points (the trigger's period over the largest window)
    again = Reasoner(program, strategy="restart")
    [again.step([Function("t", [Number(1)])]) for _ in range(2)]
    every = list(again.advance(GAP, every=True))
    assert [r.atoms for r in every] == [r.atoms for r in steps[2:]]


@pytest.mark.parametrize("program,period", [("on :- not on in {1}.\n", 2),
                                            ("a :- not a in {1,2}.\n", 3)])
def test_a_gap_whose_models_come_and_go_is_jumped_over_too(program, period):
    """At the empty time points of a gap an atom may come and go (period 2, 3, ...): the evaluator finds the
    repeat and jumps as it does when the models settle, with the models of evaluating every time point."""
    parsed = parse_program(program + "seen(X) :- t(X) in [3].\n")
    reasoner = Reasoner(parsed, strategy="restart")
    reasoner.step([Function("t", [Number(1)])])
    every = list(reasoner.advance(GAP, every=True))
    after = reasoner.step([Function("t", [Number(2)])])
    solves = sum(s["solves"] for s in reasoner.stage_stats())
    slow = Reasoner(parsed, strategy="restart")
    steps = [slow.step([Function("t", [Number(1)])])] + [slow.step([]) for _ in range(GAP)]
    reference = slow.step([Function("t", [Number(2)])])
    assert [r.atoms for r in every] == [r.atoms for r in steps[1:]] and after.atoms == reference.atoms
    assert len({r.atoms for r in every[-2 * period:]}) > 1        # the gap's models do come and go
    assert solves < 200, solves


def test_a_record_at_time_ten_to_the_twelve(tmp_path):
    code, lines = reason_cli(tmp_path, "a(X) :- b(X) at least 2 in [3].\nq :- not b(_) in [2].\n",
                          '{"time": 0, "atoms": ["b(1)"]}\n{"time": 1000000000000, "atoms": ["b(1)"]}\n'
                          '{"time": 1000000000001, "atoms": ["b(1)"]}\n', "--max-gap", "none")
    assert code == 0
    assert lines == [{"time": 0, "atoms": ["b(1)"]}, {"time": 10 ** 12, "atoms": ["b(1)"]},
                     {"time": 10 ** 12 + 1, "atoms": ["a(1)", "b(1)"]}]


def test_now_reads_the_first_timestamp_and_time_zones_are_rejected(tmp_path):
    code, lines = reason_cli(tmp_path, "t(@now) :- b.\n", "2021-01-01T00:00:00 b\n2021-01-01T00:00:02+01:00 b\n"
                          "2021-01-01T00:00:03 b\n", "--now-format", "datetime")
    assert code == 0
    assert [x["atoms"] for x in lines] == [["b", 't("2021-01-01T00:00:00")'], ["b", 't("2021-01-01T00:00:03")']]
    assert String("x").string == "x"
