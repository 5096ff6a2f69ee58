"""``srtopo streamlog``: output, rejected input, blocking programs, --explain, and output as soon as a timestamp is
complete (a stream fed line by line through a pipe)."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest

from srtopo.cli import main

FIRST = ("first(T,X) :- msg(T,X), not previous(T,X).\n"
         "previous(T,X) :- msg(T,_), msg(T0,X), T0 < T.\n#show first/2.\n")
LAST = "last(T,Z) :- msg(T,Z), not next(T,Z).\nnext(T,Z) :- msg(T,Z), msg(T1,Z), T1 > T.\n"


def _write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return str(path)


def test_outputs_json_lines_per_timestamp_with_derived_facts(tmp_path, capsys):
    program = _write(tmp_path, "first.sl", FIRST)
    stream = _write(tmp_path, "s.txt", "msg(1,red).\nmsg(2,blue).\nmsg(2,red).\n% a comment\n\nmsg(5,red).\n")
    assert main(["streamlog", "--program", program, "--stream", stream]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert out == [{"time": 1, "atoms": ["first(1,red)"]}, {"time": 2, "atoms": ["first(2,blue)"]}]


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_a_blocking_program_exits_2_with_one_line_saying_blocking(tmp_path, engine):
    program = _write(tmp_path, "last.sl", LAST)
    stream = _write(tmp_path, "s.txt", "msg(1,red).\n")
    run = subprocess.run([sys.executable, "-m", "srtopo", "streamlog", "--program", program, "--stream", stream,
                          "--engine", engine, "--checkpoint", str(tmp_path / "ck")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "blocking" in lines[0] and f"{program}:1:1" in lines[0]


def test_explain_prints_every_rule_predicate_and_the_bistate_program(tmp_path, capsys):
    program = _write(tmp_path, "first.sl", FIRST)
    assert main(["streamlog", "--program", program, "--explain"]) == 0
    text = capsys.readouterr().out
    assert f"{program}:1:1: sequential: first(T,X) :- msg(T,X), not previous(T,X)." in text
    assert "previous/2: sequential" in text and "msg/2: input" in text
    assert "first_new(X) :- msg_new(X); not previous_new(X)." in text
    # a rejected program is explained, then refused
    warped = _write(tmp_path, "warp.sl", "repeated(T0,X) :- msg(T,X), msg(T0,X), T > T0.\n")
    assert main(["streamlog", "--program", warped, "--explain"]) == 2
    captured = capsys.readouterr()
    assert "time-warping: repeated(T0,X)" in captured.out and "time-warping" in captured.err


def test_hostile_lines_are_rejected_one_each_and_the_good_lines_give_the_clean_output(tmp_path, capsys):
    program = _write(tmp_path, "first.sl", FIRST)
    good = b"msg(1,red).\nmsg(2,blue).\nmsg(3,\"caf\xc3\xa9\").\n"
    bad = [b"\xff\xfe\x00 garbage\n", b"msg(2,x\n", b"msg(99999999999,red).\n", b"msg(red,1).\n",
           b"msg(2,\"a\"). msg(3,b).\n", b"#punctuation soon.\n", b"p :- q.\n", b"msg(" + b"x" * 200_000 + b").\n",
           b"__sl_now(2).\n", b"msg(2,caf\xc3\xa9).\n"]
    clean = _write(tmp_path, "clean.txt", b"\xef\xbb\xbf" + good)
    assert main(["streamlog", "--program", program, "--stream", clean]) == 0
    expected = capsys.readouterr().out
    first_two = good.index(b"msg(3")
    mixed = b"\xef\xbb\xbf" + good[:first_two] + b"".join(bad) + good[first_two:]
    stream = _write(tmp_path, "mixed.txt", mixed)
    rejected = str(tmp_path / "rejected.jsonl")
    assert main(["streamlog", "--program", program, "--stream", stream, "--rejected-out", rejected]) == 0
    assert capsys.readouterr().out == expected
    assert json.loads(expected.splitlines()[-1]) == {"time": 3, "atoms": ['first(3,"café")']}
    records = [json.loads(line) for line in open(rejected, encoding="utf-8")]
    assert len(records) == len(bad) and all(r["reason"] and r["line"] for r in records)
    reasons = " ".join(r["reason"] for r in records)
    assert "32-bit" in reasons and "not UTF-8" in reasons and "clingo names are ASCII" in reasons


def test_a_run_that_read_nothing_usable_exits_non_zero(tmp_path, capsys):
    program = _write(tmp_path, "first.sl", FIRST)
    stream = _write(tmp_path, "s.txt", "not a fact\n")
    assert main(["streamlog", "--program", program, "--stream", stream]) != 0
    assert "no usable fact" in capsys.readouterr().err


def _read_line(proc, timeout: float) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no output within the time limit"
    return proc.stdout.readline()


@pytest.mark.slow
def test_each_timestamp_is_written_before_the_input_passes_the_next_punctuation(tmp_path):
    """Fed through a pipe: a timestamp's facts appear once the stream passed it, before any later line is sent."""
    program = _write(tmp_path, "first.sl", FIRST)
    proc = subprocess.Popen([sys.executable, "-m", "srtopo", "streamlog", "--program", program, "--stream", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        seen = []
        for line, expect in [("msg(1,red).", None), ("msg(2,blue).", {"time": 1, "atoms": ["first(1,red)"]}),
                             ("#punctuation 5.", {"time": 2, "atoms": ["first(2,blue)"]}),
                             ("msg(7,green).", None), ("#punctuation 8.", {"time": 7, "atoms": ["first(7,green)"]})]:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            if expect is not None:
                seen.append(json.loads(_read_line(proc, 60)))
                assert seen[-1] == expect
            else:
                time.sleep(0.2)
                assert not select.select([proc.stdout], [], [], 0)[0], "output before its timestamp was complete"
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        assert proc.stdout.read() == ""
    finally:
        proc.kill()


def test_the_bundled_shortest_paths_example(capsys):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert main(["streamlog", "--program", os.path.join(root, "examples", "shortest-paths.sl"),
                 "--stream", os.path.join(root, "examples", "arcs.txt")]) == 0
    out = {d["time"]: d["atoms"] for d in map(json.loads, capsys.readouterr().out.splitlines())}
    # 2: b->c and c->d arrive together and extend a->b; 4: a->c of 3 beats a->b->c of 5, and so a->d
    assert out[2] == ["minpath(2,a,c,5)", "minpath(2,a,d,7)", "minpath(2,b,c,1)", "minpath(2,b,d,3)",
                      "minpath(2,c,d,2)"]
    assert out[4] == ["minpath(4,a,c,3)", "minpath(4,a,d,5)"]
    assert "minpath(7,a,d,1)" in out[7] and sorted(out) == [1, 2, 4, 6, 7]


def test_compile_prints_the_streamlog_topology_with_its_analysis(tmp_path, capsys):
    program = _write(tmp_path, "first.sl", FIRST)
    assert main(["compile", "--program", program, "--format", "json"]) == 0
    topology = json.loads(capsys.readouterr().out)
    assert topology["kind"] == "streamlog" and topology["source"] == {"kind": "facts", "inputs": ["msg/2"],
                                                                     "union": "synchronized"}
    (stage,) = topology["stages"]
    assert ["first(T,X) :- msg(T,X), not previous(T,X).", "sequential"] in stage["rules"]
    assert stage["heads"] == ["first/2", "previous/2"] and stage["history"] == ["msg/2"]
    assert ["previous/2", "sequential"] in topology["notes"]["predicates"]
    assert "first_new(X) :- msg_new(X); not previous_new(X)." in topology["notes"]["bistate"]
    assert topology["output"]["shows"] == ["first/2"]
    assert main(["compile", "--program", program, "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph")


def test_a_streamlog_program_is_never_read_as_i_dlv_sr(tmp_path, capsys):
    program = _write(tmp_path, "first.sl", FIRST)
    stream = _write(tmp_path, "s.txt", "1 msg(1,red)\n")
    assert main(["reason", "--program", program, "--stream", stream]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a streamlog program, not an I-DLV-sr one" in err[0] and "srtopo streamlog" in err[0]
    blocking = _write(tmp_path, "last.sl", LAST)
    assert main(["compile", "--program", blocking]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "blocking" in err[0] and f"{blocking}:1:1" in err[0]


@pytest.mark.parametrize("name", ["p.idlvsr", "p.lp"])
def test_an_i_dlv_sr_program_is_never_read_as_streamlog(tmp_path, capsys, name):
    """The mirror of the test above: ``streamlog`` names the command that runs an I-DLV-sr program (by its
    .idlvsr suffix, or a rules suffix and text that only I-DLV-sr reads) instead of a syntax error."""
    program = _write(tmp_path, name, "c(X) :- b(X).\nd :- b(X) always in [3].\n")
    stream = _write(tmp_path, "s.txt", "msg(1,red).\n")
    assert main(["streamlog", "--program", program, "--stream", stream]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{program} is an I-DLV-sr program, not a Streamlog one" in err[0], err
    assert "srtopo reason" in err[0]
    plain = _write(tmp_path, "first.lp", FIRST)         # a Streamlog program under a generic ASP suffix runs
    assert main(["streamlog", "--program", plain, "--stream", stream]) == 0


@pytest.mark.parametrize("text", ["", "% nothing but a comment\n"])
def test_an_empty_program_is_named_as_empty_not_the_stream(tmp_path, capsys, text):
    program = _write(tmp_path, "empty.sl", text)
    stream = _write(tmp_path, "s.txt", "msg(1,red).\n")
    assert main(["streamlog", "--program", program, "--stream", stream]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{program}: the program is empty" in err[0] and "stream" not in err[0].split("(")[0]


@pytest.mark.slow
def test_the_spark_runner_refuses_what_it_cannot_replay_in_one_line(tmp_path):
    """--idle punctuates by the wall clock, which a replayed micro-batch cannot repeat; stdin cannot be replayed."""
    program = _write(tmp_path, "first.sl", FIRST)
    stream = _write(tmp_path, "s.txt", "msg(1,red).\n")
    for extra, said in ((["--stream", stream, "--idle", "2"], "--idle"), (["--stream", "-"], "standard input")):
        run = subprocess.run([sys.executable, "-m", "srtopo", "streamlog", "--program", program, *extra,
                              "--engine", "spark"], capture_output=True, text=True, timeout=120)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and run.stdout == "" and len(lines) == 1 and said in lines[0], run.stderr
