"""Exactly-once for rule topologies: a 210-time-point stream in six files, ``reason --engine spark`` killed
with SIGKILL as a later batch starts writing its store entry (the consistency test kills during a sink and
commit) and restarted; the models written (its micro-batches evaluated on the driver) equal an uninterrupted
run's in executor tasks."""
import os
import random

from experiments.kill_campaign import PROGRAM, output_lines, sensor_lines
from tests.spark.helpers import kill_at, srtopo_here
from tests.spark.test_kill import _batches

POINTS = 210
FILES = 6


def _write_stream(directory, rng):
    from srtopo.io.tnt import write_tnt
    lines = sensor_lines(rng, POINTS)       # some time points have no line: empty time points
    write_tnt(str(directory), lines, per_file=-(-len(lines) // FILES))


def test_sigkill_then_restart_gives_the_uninterrupted_models(spark, tmp_path):
    (tmp_path / "p.idlvsr").write_text(PROGRAM, encoding="utf-8")
    _write_stream(tmp_path / "in", random.Random(5))
    args = ["reason", "--engine", "spark", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "in"),
            "--once", "--files-per-batch", "1", "--master", "local[2]", "--partitions", "2",
            "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    kills = kill_at(args, tmp_path / "ck", _batches, ("later-batch-writing",))
    done = srtopo_here(args)        # the restart: the killed command again, in this process
    assert done.returncode == 0, done.stderr[-3000:]
    assert kills and kills[0] >= 3, f"killed before the fourth store entry: {kills}"

    from srtopo.io.sources import AtomLog
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_program
    from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner
    topology = compile_program(parse_program(PROGRAM))
    SparkRunner().run(topology, [AtomLog(str(tmp_path / "in"), files_per_batch=1)],
                      RunConfig(lateness=0, checkpoint=str(tmp_path / "ref-ck"), out=str(tmp_path / "ref"),
                                options=SparkOptions(partitions=2, driver_lines=0)))
    expected = output_lines(tmp_path / "ref")
    got = output_lines(tmp_path / "out")
    assert sum(expected.values()) == POINTS
    assert got == expected
    # and the content is the local runner's, file by file concatenated in order
    import json
    files = sorted(os.listdir(tmp_path / "in"))
    merged = tmp_path / "all.log"
    merged.write_text("".join((tmp_path / "in" / f).read_text(encoding="utf-8") for f in files), encoding="utf-8")
    local = LocalRunner().run(topology, [AtomLog(str(merged))], RunConfig(lateness=0))
    by_time = {m["time"]: m["atoms"] for m in map(json.loads, got)}
    assert by_time == {m.time: list(m.atoms) for m in local.models}
    assert any("alert(" in a for atoms in by_time.values() for a in atoms)
