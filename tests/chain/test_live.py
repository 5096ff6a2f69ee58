"""A chain over a live stream (standard input) hands a time point to the program as soon as the stream closes it,
a later statement or a punctuation, not at the end of an input that may never end."""
import json

from tests.chain.cases import PROGRAM, TBOX, TYPE, atom, line
from tests.live import first_line_before_the_end


def _first_model_before_the_end(tmp_path, lines: list[str], *flags: str) -> dict:
    (tmp_path / "u.ttl").write_text(TBOX, encoding="utf-8")
    (tmp_path / "p.idlvsr").write_text(PROGRAM, encoding="utf-8")
    first, _status, _err = first_line_before_the_end(
        ["reason", "--tbox", str(tmp_path / "u.ttl"), "--program", str(tmp_path / "p.idlvsr"), *flags], lines)
    assert first, "no model before the end of input"
    return json.loads(first)


def test_a_punctuation_closes_a_time_point(tmp_path):
    # lateness 10: time 0 waits for the stream to be 11 past it, or for a punctuation past it
    model = _first_model_before_the_end(tmp_path, [line(0, "a", TYPE, "Student"), "# watermark 5"],
                                        "--lateness", "10")
    assert model["time"] == 0
    assert atom("a", TYPE, "Person") in model["atoms"]


def test_a_later_statement_closes_a_time_point(tmp_path):
    model = _first_model_before_the_end(tmp_path, [line(0, "a", TYPE, "Student"), line(1, "b", TYPE, "Course")])
    assert model["time"] == 0
