"""A live stream (standard input) is checked as it comes: a report is written once a later time closes its time,
not at the end of an input that may never end."""
import json
from pathlib import Path

from tests.live import first_line_before_the_end

TEX = str(Path(__file__).resolve().parents[2] / "examples" / "tex.ttl")
TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
NS = "http://example.org/tex#"


def test_a_report_on_standard_input_is_written_before_the_input_ends():
    lines = [f"1\t<http://x/bob> <{TYPE}> <{NS}Student> .", f"3\t<http://x/bob> <{TYPE}> <{NS}Faculty> .",
             f"4\t<http://x/ann> <{TYPE}> <{NS}Book> ."]           # time 4 closes time 3
    first, status, err = first_line_before_the_end(["check", "--tbox", TEX, "--window", "5"], lines)
    assert first, "no report before the end of input"
    report = json.loads(first)
    assert (report["subject"], report["time"]) == ("http://x/bob", 3)
    assert status == 0
    assert "a live stream without a lateness: using 0" in err
