"""Runners, by name: ``local`` (one process, the reference the others are checked against) and ``spark``
(Structured Streaming). Each implements the protocol of ``runners.protocol``."""
from __future__ import annotations

from srtopo.errors import UnsupportedByRunner
from srtopo.runners.local import LocalOptions, LocalRunner  # noqa: F401
from srtopo.ir.run import (  # noqa: F401  (the run's data types, offered where the runners are)
    BatchMetrics,
    RunConfig,
    RunCounters,
    RunResult,
    Sink,
    StageCounters,
)
from srtopo.runners.protocol import Runner  # noqa: F401
from srtopo.runners.spark.runner import SparkOptions, SparkRunner  # noqa: F401

RUNNERS: dict[str, type] = {LocalRunner.name: LocalRunner, SparkRunner.name: SparkRunner}


def get_runner(name: str, **kwargs) -> Runner:
    """A new runner of the registered kind ``name`` (keyword arguments go to its constructor)."""
    try:
        cls = RUNNERS[name]
    except KeyError:
        raise UnsupportedByRunner(f"no runner named {name!r}", hint="use one of " + ", ".join(RUNNERS)) from None
    return cls(**kwargs)

