"""Stream input and the ``srtopo reason`` command: formats, time points, malformed records, sockets."""
from __future__ import annotations

import io
import json
import socket
import threading

import pytest

from srtopo.cli import main
from srtopo.logic.atoms import split_atoms
from srtopo.rules.log import read_records
from srtopo.rules.points import time_points
from srtopo.solving import restart
from tests.rules.conftest import reason_cli


def _points(text: str, unit: str = "sec", duplicates: bool = False, lateness: int = 0):
    rejected = []
    records = read_records(io.StringIO(text), unit=unit, rejected=rejected, duplicates=duplicates)
    points = list(time_points(records, rejected, lateness=lateness))
    return [(t, sorted(map(str, atoms))) for t, _s, atoms in points], rejected


def _evaluated_after(text: str, duplicates: bool = False) -> list[tuple[int, int]]:
    """(time point, lines read when it was evaluated): when each time point is complete."""
    read = [0]

    def lines():
        for line in text.splitlines(keepends=True):
            read[0] += 1
            yield line
    return [(t, read[0]) for t, _s, _a in time_points(read_records(lines(), duplicates=duplicates), [])]


def test_log_lines_become_time_points_with_gaps_and_minutes_without_seconds():
    points, rejects = _points("2021-04-30T19:44 a(1);\n2021-04-30T19:44:02 b(\"x;y\"); c\n")
    assert points == [(0, ["a(1)"]), (1, []), (2, ['b("x;y")', "c"])]
    assert len(rejects) == 0
    points, _ = _points("2021-04-30T19:44:00 a\n2021-04-30T19:46:30 b\n", unit="min")
    assert [t for t, _ in points] == [0, 1, 2]


def test_time_points_are_units_of_the_clock_not_units_from_the_first_line():
    """00:00:59 and 00:01:01 are two minutes: with --t-unit min they are time points 0 and 1, not one time point
    whose second line is late; two lines within one minute share it (late, or gathered by --t-duplicate)."""
    text = "2021-05-17T00:00:59 a(1);\n2021-05-17T00:01:01 a(2);\n2021-05-17T00:01:40 a(3);\n"
    points, rejects = _points(text, unit="min")
    assert points == [(0, ["a(1)"]), (1, ["a(2)"])] and [r.line for r in rejects] == [3]
    points, rejects = _points(text, unit="min", duplicates=True)
    assert points == [(0, ["a(1)"]), (1, ["a(2)", "a(3)"])] and not rejects
    points, _ = _points("1999 a;\n2001 b;\n", unit="sec")      # numbers count time points: unchanged
    assert [t for t, _ in points] == [0, 1, 2]


def test_a_log_line_is_its_time_point_whole_as_in_idlvsr():
    """Evaluated as soon as its line is read; a second line for it is late unless --t-duplicate or lateness."""
    text = "0 a\n1 b\n1 c\n3 d\n"
    assert _evaluated_after(text) == [(0, 1), (1, 2), (2, 4), (3, 4)]
    points, rejects = _points(text)
    assert points == [(0, ["a"]), (1, ["b"]), (2, []), (3, ["d"])]
    assert [(r.line, r.reason) for r in rejects] == [(3, "late: time point 1 arrives after its source completed it "
                                                         "(a log line is a whole time point: --t-duplicate lets "
                                                         "consecutive lines make one)")]
    points, rejects = _points(text, lateness=1)
    assert points == [(0, ["a"]), (1, ["b", "c"]), (2, []), (3, ["d"])] and not rejects


def test_t_duplicate_collects_a_time_point_until_at_end_or_a_later_one():
    """The I-DLV-sr README's example: 18 ends with '@end;', 19 waits for 24."""
    text = ("2020-05-26T12:16:18 a;\n2020-05-26T12:16:18 b; @end;\n2020-05-26T12:16:19 a;\n"
            "2020-05-26T12:16:19 c;\n2020-05-26T12:16:24 b;\n2020-05-26T12:16:24 @end;\n")
    assert _evaluated_after(text, duplicates=True) == [(0, 2), (1, 5), (2, 5), (3, 5), (4, 5), (5, 5), (6, 6)]
    points, rejects = _points(text, duplicates=True)
    assert points == [(0, ["a", "b"]), (1, ["a", "c"]), (2, []), (3, []), (4, []), (5, []), (6, ["b"])]
    assert not rejects


def test_json_records_are_fragments_unless_they_say_end():
    text = '{"time": 0, "atoms": ["p"]}\n{"time": 0, "atoms": ["q"], "end": true}\n{"time": 1, "atoms": []}\n'
    assert _evaluated_after(text) == [(0, 2), (1, 3)]
    points, _ = _points(text)
    assert points == [(0, ["p", "q"]), (1, [])]


def test_json_lines_input():
    points, _ = _points('{"time": 0, "atoms": ["p(1)"]}\n{"time": 2, "atoms": ["q(a,\\"s\\")"]}\n')
    assert points == [(0, ["p(1)"]), (1, []), (2, ['q(a,"s")'])]


@pytest.mark.parametrize("bad", ["p(1). bad :- x.", "#script (python) import os #end", "p(X)", "1+2",
                                 "__sr_keep(p)", "p(1", "-p(1)"])
def test_malformed_atoms_reject_the_whole_line(bad):
    points, rejects = _points(f"2021-01-01T00:00:00 ok(1)\n2021-01-01T00:00:01 ok(2); {bad}\n"
                              f"2021-01-01T00:00:02 ok(3)\n")
    assert len(rejects) == 1 and rejects[0].line == 2
    assert points == [(0, ["ok(1)"]), (1, []), (2, ["ok(3)"])]


def test_out_of_order_and_bad_timestamp_are_rejected():
    points, rejects = _points("2021-01-01T00:00:05 a\n2021-01-01T00:00:03 b\nyesterday c\n2021-01-01T00:00:06 d\n")
    assert [r.line for r in rejects] == [2, 3]
    assert points == [(0, ["a"]), (1, ["d"])]


def test_injection_text_never_reaches_clingo(tmp_path, monkeypatch, capsys):
    seen: list[str] = []
    original = restart.RestartSolver.solve

    def spy(self, inputs):
        seen.extend(str(a) for atoms in inputs.values() for a in atoms)
        return original(self, inputs)

    monkeypatch.setattr(restart.RestartSolver, "solve", spy)
    code, lines = reason_cli(tmp_path, "c(X) :- b(X).\n",
                             "2021-01-01T00:00:00 b(1)\n"
                             "2021-01-01T00:00:01 b(2); b(3)). bad :- x.\n"
                             "2021-01-01T00:00:02 b(4); #script (python) print(1) #end\n"
                             "2021-01-01T00:00:03 b(5)\n",
                             "--strategy", "restart", "--rejected-out", str(tmp_path / "rej.jsonl"))
    assert code == 0
    err = capsys.readouterr().err
    # with --rejected-out the rejected lines go there, and stderr only counts them
    assert "line 2" not in err and "2 rejected record(s) written to" in err
    rejected = [json.loads(x) for x in (tmp_path / "rej.jsonl").read_text().splitlines()]
    assert [r["line"] for r in rejected] == [2, 3]
    assert set(seen) == {"b(1)", "b(5)"}                      # nothing of lines 2 and 3 was given to clingo
    assert lines == [{"time": 0, "atoms": ["b(1)", "c(1)"], "timestamp": "2021-01-01T00:00:00"},
                     {"time": 3, "atoms": ["b(5)", "c(5)"], "timestamp": "2021-01-01T00:00:03"}]


def test_cli_respects_show_and_reports_program_errors(tmp_path, capsys):
    code, lines = reason_cli(tmp_path, "c(X) :- b(X).\n#show c/1.\n", "1 b(1)\n2 b(2)\n")
    assert code == 0 and [l["atoms"] for l in lines] == [["c(1)"], ["c(2)"]]
    prog = tmp_path / "bad.idlvsr"
    prog.write_text("a(X) :- b(X) at least 2 in [3 sec],\n   &f(X;Y).\n")
    assert main(["reason", "--program", str(prog), "--stream", str(tmp_path / "s.log")]) == 2
    assert f"external atom &f(X;Y) at {prog}:2:4: no function 'f' in the scripts (no --py-script given)" \
        in capsys.readouterr().err


@pytest.mark.parametrize("spelling", ["tcp", "idlvsr"])
def test_cli_reads_a_socket(tmp_path, capsys, spelling):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def serve():
        conn, _ = server.accept()
        with conn:
            conn.sendall(b'{"time": 0, "atoms": ["b(1)"]}\n{"time": 1, "atoms": ["b(2)"]}\n')
        server.close()

    threading.Thread(target=serve, daemon=True).start()
    prog = tmp_path / "p.idlvsr"
    prog.write_text("d(X) :- b(X) in [1].\n")
    where = ["--stream", f"tcp://127.0.0.1:{port}"] if spelling == "tcp" else \
        ["--hostname=127.0.0.1", f"--port-number={port}"]          # I-DLV-sr's socket options
    assert main(["reason", "--program", str(prog), *where]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["atoms"] for o in out] == [["b(1)", "d(1)"], ["b(2)", "d(1)", "d(2)"]]


def test_split_atoms_respects_strings_and_brackets():
    assert split_atoms('a(1); b("x;y"); c((1;2)) ;') == ["a(1)", 'b("x;y")', "c((1;2))"]


def test_careless_log_lines_are_rejected_one_line_each(tmp_path, capsys):
    """A BOM, a line that is not UTF-8, an integer beyond clingo's 32 bits: the BOM is dropped, each bad line is
    one rejected record, nothing else changes, no traceback."""
    prog = tmp_path / "p.idlvsr"
    prog.write_text("c(X) :- b(X).\n")
    log = tmp_path / "s.log"
    log.write_bytes(b"\xef\xbb\xbf2021-01-01T00:00:00 b(1)\n2021-01-01T00:00:01 b(\xff)\n"
                    b"2021-01-01T00:00:02 b(4294967296)\n2021-01-01T00:00:03 b(\"caf\xc3\xa9\"); b(2147483647)\n")
    out = tmp_path / "out.jsonl"
    assert main(["reason", "--program", str(prog), "--stream", str(log), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "line 2 of" in err and "not UTF-8 text" in err
    assert "line 3 of" in err and "beyond clingo's 32-bit integers" in err and "Traceback" not in err
    assert "2 rejected records (0 late)" in err
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [x["atoms"] for x in lines] == [["b(1)", "c(1)"],
                                           ['b("café")', "b(2147483647)", 'c("café")', "c(2147483647)"]]


def test_timestamped_n_triples_become_triple_atoms():
    """One .tnt stream feeds a program: each statement is triple(S, P, O) at its time point (IRIs as strings,
    integer literals within clingo's range as numbers, other literals as their lexical form)."""
    rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    text = (f"0\t<http://ex/bob> {rdf_type} <http://ex/Student> .\n"
            f'0\t_:b1 <http://ex/age> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
            f'2\t<http://ex/bob> <http://ex/name> "Bob \\"B\\" \\u00e9"@en .\n'
            f'2\t<http://ex/bob> <http://ex/age> "4294967296"^^<http://www.w3.org/2001/XMLSchema#long> .\n'
            f"3\t<http://ex/bob> <http://ex/knows> .\n")
    points, rejects = _points(text)
    assert points == [
        (0, ['triple("_:b1","http://ex/age",42)',
             'triple("http://ex/bob","http://www.w3.org/1999/02/22-rdf-syntax-ns#type","http://ex/Student")']),
        (1, []),
        (2, ['triple("http://ex/bob","http://ex/age","4294967296")',
             'triple("http://ex/bob","http://ex/name","Bob \\"B\\" é")'])]
    assert [(r.line, r.reason) for r in rejects] == [
        (5, "not a valid N-Triples statement (subject: IRI or blank node; predicate: IRI; object: IRI, blank node "
            "or literal)")]
