"""Testing a topology on every runner: records held in memory in, records held in memory out.

    from srtopo.testing import tuples, run_topology
    for name in RUNNER_NAMES:
        result = run_topology(get_runner(name), topology, [tuples(records, batches=3)], window=3, lateness=4)
        assert result.keys == expected

The same test runs on every registered runner (``get_runner``): ``unsupported`` says why a runner cannot
run a case (``UnsupportedByRunner``), so a suite can skip it without naming a runner.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from srtopo.errors import UnsupportedByRunner
from srtopo.io.sinks import MemorySink  # noqa: F401 (part of the testing API)
from srtopo.io.sources import Lines, Timeline, Tuples
from srtopo.ir.topology import Topology
from srtopo.runners import RUNNERS, RunConfig, Runner, RunResult
from srtopo.ir.run import MAX_GAP

RUNNER_NAMES = tuple(RUNNERS)


def tuples(records: Iterable, batches: int = 1, name: str = "<tuples>") -> Tuples:
    """(subject, concept, time) tuples in memory, cut into ``batches`` micro-batches."""
    return Tuples(tuple((s, c, int(t)) for s, c, t, *_ in records), batches, name)


def lines(text_lines: Iterable[str], batches: int = 1, name: str = "<lines>") -> Lines:
    """Timestamped N-Triples lines in memory (malformed ones included), cut into ``batches``."""
    return Lines(tuple(text_lines), batches, name)


def timeline(points: Iterable[Iterable[str]], name: str = "<timeline>", batches: int = 1) -> Timeline:
    """Atoms (as text) of time points 0, 1, 2, ..., cut into ``batches`` micro-batches."""
    return Timeline(tuple(tuple(p) for p in points), name, batches)


def unsupported(runner: Runner, topology: Topology, sources: Sequence = (), config: RunConfig | None = None) -> str | None:
    """Why ``runner`` cannot run this case, or None if it can."""
    try:
        runner.check(topology, sources, config)
    except UnsupportedByRunner as error:
        return str(error)
    return None


def run_topology(runner: Runner, topology: Topology, sources: Sequence, *, window: int | None = None,
                 lateness: int | None = None, checkpoint: str | None = None, options=None,
                 max_gap: int | None = MAX_GAP) -> RunResult:
    """Run to the end of the (bounded) sources; outputs and rejected records are kept in the result."""
    config = RunConfig(window=window, lateness=lateness, checkpoint=checkpoint,
                       options=options if options is not None else runner.options_type(), max_gap=max_gap)
    return runner.run(topology, sources, config)
