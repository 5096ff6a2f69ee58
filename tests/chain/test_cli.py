"""``srtopo reason --tbox``: models on standard output, reports only in --reports-out (exactly check's), counts on
stderr, a warning for a program that never reads triple/3, rejected lines as in check, and one-line refusals of
what a chain cannot take."""
from __future__ import annotations

import json

import pytest

from srtopo.cli import main
from tests.chain.cases import PROGRAM, TBOX, TYPE, atom, line


def _exit(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


@pytest.fixture
def files(tmp_path):
    (tmp_path / "u.ttl").write_text(TBOX, encoding="utf-8")
    (tmp_path / "p.idlvsr").write_text(PROGRAM, encoding="utf-8")
    stream = [line(0, "a", TYPE, "Student"), line(1, "c", TYPE, "Course"), line(1, "c", TYPE, "Person"),
              line(1, "a", "takes", "c"), "not a line", line(2, "b", TYPE, "Teacher")]
    (tmp_path / "s.tnt").write_text("\n".join(stream) + "\n", encoding="utf-8")
    return tmp_path


def chain_args(d, *extra):
    return ["reason", "--tbox", str(d / "u.ttl"), "--program", str(d / "p.idlvsr"), "--stream", str(d / "s.tnt"),
            "--window", "3", *extra]


def test_models_go_to_stdout_and_reports_only_to_reports_out_as_check_writes_them(files, capsys):
    assert main(chain_args(files, "--reports-out", str(files / "r.jsonl"),
                           "--rejected-out", str(files / "x.jsonl"))) == 0
    captured = capsys.readouterr()
    models = [json.loads(x) for x in captured.out.splitlines()]
    assert [m["time"] for m in models] == [0, 1, 2]
    assert models[1] == {"time": 1, "atoms": ["quiet"]}
    assert atom("b", TYPE, "Person") in models[2]["atoms"]
    assert "subject" not in captured.out
    assert ("srtopo: 1 report (written to " in captured.err and "3 statements withheld at 1 time point (drop)"
            in captured.err and "3 models written" in captured.err), captured.err
    rejected = [json.loads(x) for x in (files / "x.jsonl").read_text().splitlines()]
    assert [(r["line"], r["text"]) for r in rejected] == [(5, "not a line")]
    assert main(["check", "--tbox", str(files / "u.ttl"), "--stream", str(files / "s.tnt"), "--window", "3",
                 "--out", str(files / "c.jsonl"), "--lateness", "0"]) == 0
    assert (files / "r.jsonl").read_text() == (files / "c.jsonl").read_text() != ""


def test_a_program_that_never_reads_triples_gets_a_warning(files, capsys):
    (files / "q.idlvsr").write_text("a(1).\nb(X) :- a(X).\n", encoding="utf-8")
    argv = chain_args(files)
    argv[argv.index(str(files / "p.idlvsr"))] = str(files / "q.idlvsr")
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "never reads triple/3" in err


@pytest.mark.parametrize("extra,said", [
    (["--stream-format", "log"], "--stream-format log: a chain reads timestamped N-Triples"),
    (["--reports-out", "-"], "--reports-out -: reports never go to standard output"),
    (["--max-gap", "10"], "--max-gap does nothing with --tbox"),
    (["--t-duplicate"], "--t-duplicate does nothing with --tbox"),
])
def test_what_a_chain_cannot_take_is_one_line(files, capsys, extra, said):
    assert _exit(chain_args(files, *extra)) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and said in err[0], err


@pytest.mark.parametrize("flag", [["--window", "3"], ["--inconsistent", "keep"], ["--reports-out", "r.jsonl"],
                                  ["--method", "ntm"]])
def test_a_chain_flag_without_tbox_is_refused(files, capsys, flag):
    argv = ["reason", "--program", str(files / "p.idlvsr"), "--stream", str(files / "s.tnt"), *flag]
    assert _exit(argv) == 2
    err = capsys.readouterr().err
    assert f"{flag[0]} acts on the consistency check of a chain: it needs --tbox" in err


def test_reports_out_may_not_be_an_input_or_another_output(files, capsys):
    assert _exit(chain_args(files, "--reports-out", str(files / "s.tnt"))) == 2
    assert "--reports-out" in capsys.readouterr().err and (files / "s.tnt").read_text().startswith("0\t")
    assert _exit(chain_args(files, "--reports-out", str(files / "o.jsonl"), "--out", str(files / "o.jsonl"))) == 2
    assert "--reports-out" in capsys.readouterr().err


@pytest.mark.parametrize("output", [["--reports-out", "u.ttl"], ["--out", "u.ttl"], ["--rejected-out", "p.idlvsr"],
                                    ["--reports-out", "ck/reports.jsonl", "--checkpoint", "ck"]])
def test_no_output_may_be_the_tbox_the_program_or_another_output(files, capsys, output):
    given = [str(files / x) if not x.startswith("-") else x for x in output]
    tbox, program = (files / "u.ttl").read_text(), (files / "p.idlvsr").read_text()
    assert _exit(chain_args(files, *given)) == 2
    err = capsys.readouterr().err
    assert output[0] in err and err.count("\n") == 1
    assert (files / "u.ttl").read_text() == tbox and (files / "p.idlvsr").read_text() == program
