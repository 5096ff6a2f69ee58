"""Ctrl-C and SIGTERM stop every command cleanly: exit 130 / 143, one line saying what was committed, no
traceback, no process left, only whole outputs (the fast slice of experiments/interrupt_campaign.py, which
tries 20 random moments per command and runner)."""
import random
import re
import signal

import pytest

from experiments.interrupt_campaign import CASES, trial

#: (case, moment in seconds, SIGTERM?): local runs once each way; Spark after its first batches (check, streamlog)
#: and during the JVM's start-up (reason) (restarts from a checkpoint: tests/spark/test_kill.py and the campaign)
SLICE = [("check-local", 1.5, False), ("reason-local", 1.5, True), ("streamlog-local", 1.5, False),
         ("check-spark", 14.0, False), ("reason-spark", 1.0, True), ("streamlog-spark", 12.0, True)]


@pytest.mark.parametrize("name,moment,sigterm", SLICE, ids=[f"{c}-{'term' if t else 'int'}" for c, _, t in SLICE])
def test_a_signal_stops_the_run_cleanly(tmp_path, name, moment, sigterm):
    case = CASES[name]
    rng = random.Random(0)
    fixed = type(case)(case.command, case.engine, case.lines, case.args, case.per_feed, (moment, moment))
    row = trial(fixed, tmp_path, rng, use_sigterm=sigterm, restart=False)
    sent = signal.SIGTERM if sigterm else signal.SIGINT
    assert not row["ended_before_signal"]
    assert row["exit"] == 128 + sent.value, row.get("stderr")
    assert row["one_line"] and row["quiet"], row.get("stderr")
    assert row["left_processes"] == 0
    assert row["whole_outputs"] and not row["litter"]       # no spark-warehouse, no log in the working folder
    assert row["clean"]
    if case.engine == "spark":      # --metrics-out has a line per micro-batch the stopped run committed
        committed = re.search(r"(\d+) micro-batch", row["last_line"])
        assert row["metrics_lines"] == (int(committed.group(1)) if committed else 0), row["last_line"]
