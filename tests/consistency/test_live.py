"""A live stream (standard input) is checked as it comes: a report is written once a later time closes its time,
not at the end of an input that may never end."""
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

TEX = str(Path(__file__).resolve().parents[2] / "examples" / "tex.ttl")
TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
NS = "http://example.org/tex#"


def test_a_report_on_standard_input_is_written_before_the_input_ends():
    proc = subprocess.Popen([sys.executable, "-m", "srtopo", "check", "--tbox", TEX, "--stream", "-", "--window",
                             "5"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines = [f"1\t<http://x/bob> <{TYPE}> <{NS}Student> .", f"3\t<http://x/bob> <{TYPE}> <{NS}Faculty> .",
             f"4\t<http://x/ann> <{TYPE}> <{NS}Book> ."]           # time 4 closes time 3
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        got = []
        reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(120)                      # the stream is still open: the report must come before its end
        assert got and got[0], "no report before the end of input"
        report = json.loads(got[0])
        assert (report["subject"], report["time"]) == ("http://x/bob", 3)
    finally:
        proc.stdin.close()
        proc.wait(60)
    assert proc.returncode == 0
    assert "a live stream without a lateness: using 0" in proc.stderr.read()
