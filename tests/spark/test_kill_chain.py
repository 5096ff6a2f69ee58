"""Exactly-once for chains: ``reason --tbox --engine spark`` over a university stream in six files (the kill
campaign's chain input), killed with SIGKILL as a later batch starts writing its store entry and restarted; its
models equal those of the local runner (the reference semantics) on the same stream, and its reports too, each
once (the NI and evidence a report names may differ between runners: compared by subject and time)."""
import json
import random

from experiments.kill_campaign import _chain_input, output_lines, reports_dir
from tests.spark.helpers import kill_at, srtopo_here
from tests.spark.test_kill import _batches

POINTS = 90


def test_sigkill_then_restart_gives_the_uninterrupted_models_and_reports(spark, tmp_path):
    base = _chain_input(tmp_path, random.Random(5), POINTS)
    out = tmp_path / "out"
    args = [*base, "--engine", "spark", "--once", "--files-per-batch", "1", "--master", "local[2]",
            "--checkpoint", str(tmp_path / "ck"), "--out", str(out), "--reports-out", str(reports_dir(out))]
    kills = kill_at(args, tmp_path / "ck", _batches, ("later-batch-writing",))
    done = srtopo_here(args)        # the restart: the killed command again, in this process
    assert done.returncode == 0, done.stderr[-3000:]
    assert kills and kills[0] >= 3, f"killed before the fourth store entry: {kills}"

    at = base.index("--partitions")
    local = srtopo_here([*base[:at], *base[at + 2:], "--reports-out", str(tmp_path / "local-reports.jsonl")])
    assert local.returncode == 0, local.stderr[-3000:]
    got = output_lines(out)
    models = sorted(json.dumps(json.loads(x), sort_keys=True) for x in got.elements() if not x.startswith("report "))
    reports = sorted((r["subject"], r["time"]) for r in (json.loads(x[len("report "):]) for x in got.elements()
                                                         if x.startswith("report ")))
    assert models == sorted(json.dumps(json.loads(x), sort_keys=True) for x in local.stdout.splitlines())
    assert reports == sorted((r["subject"], r["time"]) for r in map(
        json.loads, (tmp_path / "local-reports.jsonl").read_text().splitlines()))
    assert len(models) == POINTS and len(reports) > 5
