"""Shared fixtures. ``spark``: ONE SparkSession (local[2]) for the whole test session, UI off."""
from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from srtopo.topology.spark.session import get_session
    session = get_session(master="local[2]", app_name="srtopo-tests", shuffle_partitions=2,
                          conf={"spark.default.parallelism": "2",
                                "spark.driver.memory": "2g"})
    yield session
    session.stop()
