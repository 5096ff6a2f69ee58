"""Exactly-once: a 100k-tuple stream, the CLI killed with SIGKILL during a batch's sink and commit (after its
store entry, before Spark commits it; the rules test kills as a later batch starts writing) and restarted; the
final sink equals an uninterrupted run's as a multiset of report lines. experiments/kill_campaign.py kills at
20 random moments."""
import os
import random

from experiments.kill_campaign import output_lines
from tests.spark.helpers import kill_at, srtopo_here, tex_stream, write_tex, write_tnt_files

FILES = 6


def _batches(ck):
    store = os.path.join(str(ck), "store")
    return [int(x) for x in os.listdir(store) if x.isdigit()] if os.path.isdir(store) else []


def test_sigkill_then_restart_gives_the_uninterrupted_sink(spark, tmp_path):
    write_tex(tmp_path / "tex.ttl")
    write_tnt_files(tmp_path / "in", tex_stream(100_000, random.Random(11), n_subjects=5000, rate=100), FILES)
    args = ["check", "--engine", "spark", "--tbox", str(tmp_path / "tex.ttl"), "--stream", str(tmp_path / "in"),
            "--window", "10", "--lateness", "0", "--once", "--files-per-batch", "1", "--master", "local[2]",
            "--shuffle-partitions", "2", "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    kills = kill_at(args, tmp_path / "ck", _batches, ("during-sink",))
    done = srtopo_here(args)        # the restart: the killed command again, in this process
    assert done.returncode == 0, done.stderr[-3000:]
    assert kills and kills[0] >= 4, f"killed before the fifth store entry: {kills}"

    # the uninterrupted run (same runner and settings, in-process on the shared session)
    from srtopo.consistency.choose import topology_from_tbox
    from srtopo.io.sources import TntFiles
    from srtopo.runners import RunConfig, SparkRunner
    topo = topology_from_tbox(str(tmp_path / "tex.ttl"))     # the CLI's defaults
    SparkRunner().run(topo, [TntFiles(str(tmp_path / "in"), files_per_batch=1)],
                      RunConfig(window=10, lateness=0, checkpoint=str(tmp_path / "ref-ck"), out=str(tmp_path / "ref")))
    expected = output_lines(tmp_path / "ref")
    got = output_lines(tmp_path / "out")
    assert sum(expected.values()) > 1000
    assert got == expected
