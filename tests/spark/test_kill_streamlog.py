"""Exactly-once for Streamlog topologies: a stream of per-sensor readings in eight files, ``streamlog --engine
spark`` killed with SIGKILL as a later batch starts writing its store entry and restarted; the models written
over both runs equal one local run over the whole stream. The killed driver's JVM is frozen first: the restart
names it and waits for it (``runners.spark.lease``), and runs once it is gone. The program is keyed by the sensor, so it runs in key
partitions (two on local[2]), each with its state in the store."""
import json
import os
import random
import signal

import pytest

from srtopo.errors import TopologyError
from srtopo.runners.spark.fs import HadoopFS
from srtopo.runners.spark.lease import DRIVER_FILE, wait_for_earlier_driver

from tests.spark.helpers import kill_at, srtopo_here
from tests.spark.test_kill import _batches

#: a reading above every earlier reading of its sensor: reads the sensor's history at earlier timestamps
PROGRAM = ("record(T,S,V) :- reading(T,S,V), not beaten(T,S,V).\n"
           "beaten(T,S,V) :- reading(T,S,V), reading(T0,S,V0), T0 < T, V0 >= V.\n#show record/3.\n")
FILES = 8


def test_sigkill_then_restart_gives_the_local_models(spark, tmp_path):
    (tmp_path / "p.sl").write_text(PROGRAM, encoding="utf-8")
    rng = random.Random(11)
    folder = tmp_path / "in"
    folder.mkdir()
    t = 0
    for k in range(FILES):
        lines = []
        for _ in range(40):
            t += rng.randint(0, 2)
            lines.append(f"reading({t},s{rng.randint(1, 5)},{rng.randint(0, 99)}).")
        path = folder / f"part-{k:02d}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.utime(path, (1_600_000_000 + k, 1_600_000_000 + k))      # the order Spark lists them in
    args = ["streamlog", "--engine", "spark", "--program", str(tmp_path / "p.sl"), "--stream", str(folder),
            "--once", "--files-per-batch", "1", "--master", "local[2]", "--checkpoint", str(tmp_path / "ck"),
            "--out", str(tmp_path / "out")]
    frozen: list = []
    try:
        kills = kill_at(args, tmp_path / "ck", _batches, ("later-batch-writing",), frozen)
        with open(tmp_path / "ck" / DRIVER_FILE, encoding="utf-8") as handle:
            lock = json.load(handle)["jvm_lock"]
        assert os.path.exists(lock)     # the killed driver could not remove it; its JVM holds it
        with pytest.raises(TopologyError, match=f"JVM \\(process {frozen[0]}\\) of a killed run"):
            wait_for_earlier_driver(HadoopFS(spark), str(tmp_path / "ck"), None, timeout=0.5)
    finally:
        for jvm in frozen:
            os.kill(jvm, signal.SIGKILL)
    done = srtopo_here(args)        # the restart: the killed command again, in this process
    assert done.returncode == 0, done.stderr[-3000:]
    assert kills and kills[0] >= 3, f"killed before the fourth store entry: {kills}"
    local = srtopo_here(["streamlog", "--program", str(tmp_path / "p.sl"), "--stream", str(folder)])
    assert local.returncode == 0, local.stderr[-3000:]
    expected = [json.loads(line) for line in local.stdout.splitlines()]
    got = sorted((json.loads(line) for part in sorted((tmp_path / "out").glob("batch=*"))
                  for f in sorted(part.glob("*.json")) for line in f.read_text().splitlines() if line.strip()),
                 key=lambda m: m["time"])
    assert got == expected and len(expected) > 10
    entries = sorted(p for p in (tmp_path / "ck" / "store").iterdir() if p.name.isdigit())
    assert sorted(f.name for f in (entries[-1] / "kind=state").iterdir() if not f.name.startswith(".")) == [
        "part-00000.json", "part-00001.json"]
    assert not os.path.exists(lock)     # the restart removed the killed run's lock once it was free
    assert not (tmp_path / "ck" / DRIVER_FILE).exists()     # and its own record when it ended
