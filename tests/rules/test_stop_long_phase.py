"""Ctrl-C stops a run in every phase, however long: a program that reads ``@now`` evaluates every time point of a
gap of 10^9 seconds, which takes days; a SIGINT sent while it does stops ``srtopo reason`` with status 130 and one
line, on the local runner, on Spark while a micro-batch evaluates on the driver, and on Spark while the end of
input is closed in executor tasks (``--once``; a micro-batch in executor tasks is stopped by cancelling its
Spark jobs, as it was before). The signal is sent once the evaluation is inside the gap: the
program's external atom leaves a mark when it sees a time point there."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow

#: (name, flags): the local runner; a streaming Spark query whose micro-batch evaluates on the driver; a Spark
#: run to the end of input whose lateness keeps every time point open until the close, which evaluates them in
#: executor tasks
CASES = [("local", []), ("spark-batch", ["--engine", "spark", "--master", "local[2]"]),
         ("spark-close", ["--engine", "spark", "--master", "local[2]", "--once", "--lateness", "2000000000"])]


@pytest.mark.parametrize("name,flags", CASES, ids=[c[0] for c in CASES])
def test_a_signal_in_a_long_phase_stops_the_run_with_one_line(name, flags, tmp_path):
    mark = tmp_path / "inside-the-gap"
    (tmp_path / "mark.py").write_text(
        "import os\n"
        "def mark(now):\n"
        f"    if now >= 10 and not os.path.exists({str(mark)!r}):\n"
        f"        open({str(mark)!r}, 'w').close()\n"
        "    return 1\n")
    (tmp_path / "p.idlvsr").write_text("tick(N) :- &mark(@now;N).\n")
    (tmp_path / "s.jsonl").write_text(json.dumps({"time": 0, "atoms": ["b(1)"]}) + "\n"
                                      + json.dumps({"time": 10 ** 9, "atoms": ["b(2)"]}) + "\n")
    env = dict(os.environ, PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON") or sys.executable)
    out = ["--out", str(tmp_path / "out"), "--checkpoint", str(tmp_path / "ck")] if flags else \
        ["--out", str(tmp_path / "out.json")]
    proc = subprocess.Popen([sys.executable, "-m", "srtopo", "reason", "--program", str(tmp_path / "p.idlvsr"),
                             "--stream", str(tmp_path / "s.jsonl"), "--py-script", str(tmp_path / "mark.py"),
                             "--now-format", "sec", "--max-gap", "none", *out, *flags],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 900          # a JVM starting on a loaded machine
        while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert mark.exists() and proc.poll() is None, proc.stderr.read() if proc.poll() is not None else "no mark"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # a streaming run's opening note (it keeps watching its input) aside, the stop is one line
    lines = [x for x in err.splitlines() if x.strip() and "keeps watching its input" not in x]
    assert proc.returncode == 130, err
    assert len(lines) == 1 and lines[0].startswith("srtopo: stopped by SIGINT"), err
