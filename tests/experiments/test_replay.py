"""The replay tool (the I-DLV-sr project's sender.py): it serves a log over TCP a line per period to the
`srtopo reason` command line, and every time point's output line is read back and timed; the models are the
ones the command gives on the same log read from a file."""
from __future__ import annotations

import json
import subprocess
import sys
import time

from experiments import replay
from experiments.common import models_digest

PROGRAM = "hot(S) :- temp(S,V) always in [2 sec], V > 20.\nalarm(S) :- hot(S), not off(S).\n"


def test_a_replayed_log_is_answered_time_point_by_time_point(tmp_path):
    program = tmp_path / "p.idlvsr"
    program.write_text(PROGRAM, encoding="utf-8")
    lines = [f"2021-05-17T13:38:{20 + t:02d} temp(s1,30); temp(s2,{25 - t})" + ("; off(s2)" if t == 2 else "")
             for t in range(6)]
    log = tmp_path / "s.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = replay.replay(str(program), replay.log_lines(str(log)), 0.05, engine="local", warmup=2)
    assert result["warmup"] == 2 and result["time_points"] == 4
    assert result["answered"] == 4 and result["lost"] == 0
    assert len(result["latencies"]) == 4 and all(x > 0 for x in result["latencies"])
    assert result["latency_p50_s"] <= result["latency_p95_s"] <= result["latency_max_s"]
    # the same time points, read from the file by the command itself, are answered: the replay lost nothing
    direct = subprocess.run([sys.executable, "-m", "srtopo", "reason", "--program", str(program), "--stream",
                             str(log)], capture_output=True, text=True, check=True)
    models = [json.loads(x) for x in direct.stdout.splitlines() if x.strip()]
    assert [m["time"] for m in models] == list(range(6))
    assert all("alarm(s1)" in m["atoms"] for m in models[2:]) and "off(s2)" in models[2]["atoms"]
    assert result["digest"] == models_digest([m["atoms"] for m in models[2:]])


def test_a_line_is_timed_from_before_it_is_handed_to_the_socket():
    """A line's send time is taken before it is written: the reasoner may answer it before the writing thread
    runs again (a machine with other work on it), and a time taken after the write gave negative latencies."""
    handed = []

    class Connection:
        def sendall(self, data):
            handed.append(time.perf_counter())
            time.sleep(0.01)        # the answer can be read while the writer waits to run again

        def close(self):
            pass

    sender = replay.Sender()
    try:
        sender.conn = Connection()
        sent = {}
        sender.send(["0 a(1)", "1 a(2)"], 0, sent, first_index=3)
    finally:
        sender.close()
    assert sorted(sent) == [3, 4]
    assert all(sent[3 + i] <= at for i, at in enumerate(handed))
