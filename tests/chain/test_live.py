"""A chain over a live stream (standard input) hands a time point to the program as soon as the stream closes it,
a later statement or a punctuation, not at the end of an input that may never end."""
import json
import os
import subprocess
import sys
import threading

from tests.chain.cases import PROGRAM, TBOX, TYPE, atom, line


def _first_model_before_the_end(tmp_path, lines: list[str], *flags: str) -> dict:
    (tmp_path / "u.ttl").write_text(TBOX, encoding="utf-8")
    (tmp_path / "p.idlvsr").write_text(PROGRAM, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "srtopo", "reason", "--tbox", str(tmp_path / "u.ttl"),
                             "--program", str(tmp_path / "p.idlvsr"), "--stream", "-", *flags],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        got = []
        reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(120)                      # the stream is still open: the model must come before its end
        assert got and got[0], "no model before the end of input"
        return json.loads(got[0])
    finally:
        proc.stdin.close()
        proc.wait(60)


def test_a_punctuation_closes_a_time_point(tmp_path):
    # lateness 10: time 0 waits for the stream to be 11 past it, or for a punctuation past it
    model = _first_model_before_the_end(tmp_path, [line(0, "a", TYPE, "Student"), "# watermark 5"],
                                        "--lateness", "10")
    assert model["time"] == 0
    assert atom("a", TYPE, "Person") in model["atoms"]


def test_a_later_statement_closes_a_time_point(tmp_path):
    model = _first_model_before_the_end(tmp_path, [line(0, "a", TYPE, "Student"), line(1, "b", TYPE, "Course")])
    assert model["time"] == 0
