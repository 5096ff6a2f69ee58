"""Ctrl-C and SIGTERM stop every command cleanly: exit 130 / 143, one line saying what was committed, no
traceback, no process left, only whole outputs (the fast slice of experiments/interrupt_campaign.py, which
tries 20 random moments per command and runner)."""
import os
import random
import re
import signal

import pytest

from experiments.interrupt_campaign import CASES, trial


def _writing(folder, _pid) -> bool:
    """A local run has written its first record: it is in the middle of its stream."""
    out = folder / "out.jsonl"
    return out.exists() and b"\n" in out.read_bytes()


def _committed(folder, _pid) -> bool:
    """A Spark run has committed its first micro-batch."""
    return (folder / "ck" / "query" / "commits" / "0").exists()


def _jvm_started(_folder, pid) -> bool:
    """The run has started its JVM (a java process whose parent is the run)."""
    for child in os.listdir("/proc"):
        try:
            with open(f"/proc/{child}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        if stat[stat.index("(") + 1:stat.rindex(")")] == "java" and stat[stat.rindex(")") + 2:].split()[1] == str(pid):
            return True
    return False


#: (case, what the run has reached, then the moment in seconds, SIGTERM?): local runs once each way, mid-stream;
#: Spark after its first batch (check, streamlog) and during the JVM's start-up (reason) (restarts from a
#: checkpoint: tests/spark/test_kill.py and the campaign)
SLICE = [("check-local", _writing, 0.2, False), ("reason-local", _writing, 0.2, True),
         ("streamlog-local", _writing, 0.2, False), ("check-spark", _committed, 0.5, False),
         ("reason-spark", _jvm_started, 0.3, True), ("streamlog-spark", _committed, 0.5, True)]


@pytest.mark.slow
@pytest.mark.parametrize("name,after,moment,sigterm", SLICE,
                         ids=[f"{c}-{'term' if t else 'int'}" for c, _, _, t in SLICE])
def test_a_signal_stops_the_run_cleanly(tmp_path, name, after, moment, sigterm):
    case = CASES[name]
    rng = random.Random(0)
    fixed = type(case)(case.command, case.engine, case.lines, case.args, case.per_feed, (moment, moment))
    row = trial(fixed, tmp_path, rng, use_sigterm=sigterm, restart=False, after=after)
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
