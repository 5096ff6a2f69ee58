"""A running Spark query keeps nothing per micro-batch in the JVM (the fast slice of
``experiments/long_run_memory.py``): handing each batch's reports to a Python sink once left two StageInfos,
with their task metrics, alive per batch, and the live heap grew by ~0.65 MB per batch for as long as the
query ran."""
from __future__ import annotations

import pytest

from experiments import long_run_memory


def test_a_running_consistency_query_keeps_no_stage_per_batch(spark):
    if long_run_memory.jmap_path() is None:
        pytest.skip("no jmap next to the java executable")
    pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    spark.sparkContext._jvm.java.lang.System.gc()
    before = long_run_memory.live_instances(pid, "org.apache.spark.scheduler.StageInfo")
    result = long_run_memory.run("consistency", 12, every=12)
    after = long_run_memory.live_instances(pid, "org.apache.spark.scheduler.StageInfo")
    assert result["samples"][-1]["batches"] == 12
    assert after - before < 10, (before, after)      # the leak kept two per batch: 24


def test_a_run_too_short_for_the_heap_peaks_is_reported_and_written(tmp_path, monkeypatch):
    """Ten batches sampled every five leave no sample in 10-50% of the run: no peak growth to show, and the run's
    samples and the plot are written all the same."""
    samples = [{"t": b, "batches": b, "driver_mb": 100.0, "jvm_mb": 500.0, "workers_mb": 50.0, "state_mb": 1.0,
                "heap_live_mb": 60.0} for b in (5, 10)]
    monkeypatch.setattr(long_run_memory, "run", lambda kind, batches: long_run_memory.summarise(
        {"kind": kind, "batches": batches, "seconds": 1.0, "samples": samples}))
    out = tmp_path / "long.json"
    assert long_run_memory.main(["--batches", "10", "--kinds", "rules", "--out", str(out)]) == 0
    assert long_run_memory.summarise({"batches": 10, "samples": samples})["heap_peak_growth"] is None
    assert out.exists() and out.with_suffix(".png").stat().st_size > 0
