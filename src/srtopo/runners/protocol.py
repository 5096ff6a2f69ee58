"""The runner protocol: how a topology is run, whatever runs it.

A runner checks a topology up front (``check``: ``UnsupportedByRunner`` naming what it cannot run), then
``run``\\ s it on sources with a frozen :class:`RunConfig` and returns one :class:`RunResult`: the outputs
(reports or models), the rejected records and per-stage counters of one shape for every runner. Outputs
and rejected records also go, as they are produced, to a :class:`Sink` the caller may give.

Runners are registered by name in ``srtopo.runners`` (``get_runner("spark")``); each contributes
its own command-line flags (``add_arguments``) and the frozen options they set (``options_from_args``).
"""
from __future__ import annotations

from typing import ClassVar, Protocol, Sequence, runtime_checkable

from srtopo.ir.run import RunConfig, RunResult, Sink
from srtopo.ir.topology import Topology

@runtime_checkable
class Runner(Protocol):
    """Everything the command line, the experiments and the tests call on a runner."""
    name: ClassVar[str]
    summary: ClassVar[str]                   # one line for ``--engine``'s help
    options_type: ClassVar[type]             # the frozen options ``RunConfig.options`` holds for this runner
    #: this runner's flags (argparse destinations) and the topology kinds each acts on (None: every kind); a
    #: flag given for another runner or kind is refused by the command line
    flag_kinds: ClassVar[dict]

    @staticmethod
    def add_arguments(parser) -> None:
        """Add this runner's own flags to a command's parser."""

    @staticmethod
    def options_from_args(args):
        """The frozen options (``options_type``) that the parsed flags set."""

    def check(self, topology: Topology, sources: Sequence = (), config: RunConfig | None = None) -> None:
        """Raise ``UnsupportedByRunner`` naming the first feature this runner cannot run."""

    def describe(self, topology: Topology, config: RunConfig | None = None) -> str:
        """The physical plan in a line: what runs where, and whether the stages' parallelism is honoured."""

    def run(self, topology: Topology, sources: Sequence, config: RunConfig | None = None,
            sink: Sink | None = None) -> RunResult:
        """Run to the end of the sources (or until stopped by a signal: ``srtopo.interrupt``)."""


class RunningQuery(Protocol):
    """A query that keeps running (``StreamingRunner.start``): it reads what arrives until stopped."""

    def await_termination(self, timeout: float | None = None) -> bool:
        """Wait until the query ends (at most ``timeout`` seconds); whether it has ended."""

    def flush(self) -> None:
        """Wait until everything written so far has reached the sink."""

    def stop(self) -> None:
        """Stop after the batch in progress."""

    def finish(self) -> None:
        """End of input: close what is still open (the query must have stopped)."""

    def result(self, collect: bool = True) -> RunResult: ...

    def cleanup(self) -> None: ...


@runtime_checkable
class StreamingRunner(Runner, Protocol):
    """A runner that can also start a query and hand it back while it runs (follow a directory, read a socket):
    the Spark runner. The experiments that measure latency under a live feed use it."""

    def start(self, topology: Topology, sources: Sequence, config: RunConfig | None = None,
              sink: Sink | None = None) -> RunningQuery: ...


def positive(text: str) -> int:
    """A command-line count that must be at least 1."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def natural(text: str) -> int:
    """A command-line count that may be 0."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def max_gap(text: str) -> int | None:
    """``--max-gap``: a count >= 1 (``positive``), or ``none``."""
    import argparse
    if text.strip().lower() == "none":
        return None
    try:
        return positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 or 'none', got {text!r}") from None
