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
