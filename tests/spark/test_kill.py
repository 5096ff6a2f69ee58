"""Exactly-once: a 100k-tuple stream, the CLI killed with SIGKILL at three points and restarted; the final
sink equals an uninterrupted run's as a multiset of report lines."""
import glob
import os
import random
import signal
import time
from collections import Counter

from tests.spark.helpers import srtopo, srtopo_popen, tex_stream, write_tex, write_tnt_files

FILES = 6


def _lines(out_dir):
    lines = []
    for path in glob.glob(os.path.join(str(out_dir), "batch=*", "*.json")):
        with open(path, encoding="utf-8") as handle:
            lines += [line.strip() for line in handle if line.strip()]
    return Counter(lines)


def _batches(ck):
    store = os.path.join(str(ck), "store")
    return [int(x) for x in os.listdir(store) if x.isdigit()] if os.path.isdir(store) else []


def test_sigkill_three_times_then_restart_gives_the_uninterrupted_sink(spark, tmp_path):
    write_tex(tmp_path / "tex.ttl")
    write_tnt_files(tmp_path / "in", tex_stream(100_000, random.Random(11), n_subjects=5000, rate=100), FILES)
    args = ["check", "--engine", "spark", "--tbox", str(tmp_path / "tex.ttl"), "--stream", str(tmp_path / "in"),
            "--window", "10", "--lateness", "0", "--once", "--files-per-batch", "1", "--master", "local[2]",
            "--shuffle-partitions", "2", "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    kills = []
    # kill 1: right after the first batch wrote its store entry; kill 2: as soon as a later batch starts
    # writing (mid-batch); kill 3: a little after the next entry appears (during sink/commit)
    for wait_for, delay in ((1, 0.0), (3, 0.0), (4, 0.5)):
        proc = srtopo_popen(args, start_new_session=True)
        deadline = time.time() + 240
        try:
            while max(_batches(tmp_path / "ck"), default=-1) < wait_for:
                assert proc.poll() is None, proc.stderr.read()[-3000:]
                assert time.time() < deadline, "no progress"
                time.sleep(0.05)
            time.sleep(delay)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        kills.append(max(_batches(tmp_path / "ck")))
    done = srtopo(args, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(set(kills)) == 3, f"three different kill points, got {kills}"

    # the uninterrupted run (same engine and settings, in-process on the shared session)
    from srtopo.topology.choose import topology_from_tbox
    from srtopo.topology.runners import RunConfig, SparkRunner
    from srtopo.topology.sources import TntFiles
    topo = topology_from_tbox(str(tmp_path / "tex.ttl"))     # the CLI's defaults
    SparkRunner().run(topo, [TntFiles(str(tmp_path / "in"), files_per_batch=1)],
                      RunConfig(window=10, lateness=0, checkpoint=str(tmp_path / "ref-ck"), out=str(tmp_path / "ref")))
    expected = _lines(tmp_path / "ref")
    got = _lines(tmp_path / "out")
    assert sum(expected.values()) > 1000
    assert got == expected
