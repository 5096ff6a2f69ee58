"""The local runner: one process, the reference semantics every other runner is checked against.

It runs a topology of any registered kind with that kind's local executor (``srtopo.kinds``): consistency
topologies push tuples one at a time through their stages, rules and Streamlog topologies evaluate one time
point (timestamp) after another. Every stage runs in this one process: the stages' parallelism is reported, not
used. The local runner keeps no checkpoint; a stopped run starts over.
"""
from __future__ import annotations

import time as _time
from dataclasses import dataclass
from typing import ClassVar, Sequence

from srtopo import interrupt
from srtopo.errors import UnsupportedByRunner
from srtopo.io.sinks import JsonLinesSink, MemorySink, emit_all, open_text
from srtopo.io.paths import config_outputs, refuse_clashes, source_paths
from srtopo.io.sources import SocketLines, require_path
from srtopo.ir.run import RunConfig, RunCounters, RunResult
from srtopo.ir.topology import Topology
from srtopo.kinds import kind_of
from srtopo.measure import rss_mb

PHYSICAL_PLANS = ("columnar", "indexed", "operators")


@dataclass(frozen=True)
class LocalOptions:
    """strategy: how rule stages use clingo (``srtopo.solving.STRATEGIES``); physical_plan: how a consistency
    topology runs (``columnar``, ``indexed`` or ``operators``, see ``srtopo.consistency.local``; None: the
    executor's default)."""
    strategy: str = "auto"
    physical_plan: str | None = None

    def __post_init__(self):
        if self.physical_plan is not None and self.physical_plan not in PHYSICAL_PLANS:
            raise UnsupportedByRunner(f"the local runner has no physical plan {self.physical_plan!r}",
                                      hint="use " + " or ".join(PHYSICAL_PLANS))


# --- the runner ------------------------------------------------------------------------------------------

class LocalRunner:
    name: ClassVar[str] = "local"
    summary: ClassVar[str] = "one process, the reference semantics"
    #: this runner's flags (their destinations) and the topology kinds each acts on (None: every kind)
    flag_kinds: ClassVar[dict] = {"local_plan": ("consistency", "chain")}
    options_type: ClassVar[type] = LocalOptions

    @staticmethod
    def add_arguments(parser) -> None:
        """The clingo strategy is a program argument (``reason --strategy``); the consistency plan is here."""
        g = parser.add_argument_group("local runner (--engine local)")
        g.add_argument("--local-plan", choices=PHYSICAL_PLANS, default=None,
                       help="columnar (the default): a micro-batch at a time in arrays (files read with pyarrow, "
                            "windows closed with numpy); indexed: tuple by tuple, a tuple's conflict partners by "
                            "hash lookup (the reference); operators: every conjunction op of a stage meets every "
                            "tuple, as the paper's bolts evaluate them")

    @staticmethod
    def options_from_args(args) -> LocalOptions:
        return LocalOptions(strategy=getattr(args, "strategy", None) or "auto",
                            physical_plan=getattr(args, "local_plan", None))

    def check(self, topology: Topology, sources: Sequence = (), config: RunConfig | None = None) -> None:
        topology.validate()
        accepted = kind_of(topology).local_executor().SOURCES
        for source in sources:
            if not isinstance(source, accepted):
                raise UnsupportedByRunner(f"the local runner does not read {type(source).__name__} sources for "
                                          f"{topology.kind} topologies",
                                          hint="give " + ", ".join(t.__name__ for t in accepted))

    def describe(self, topology: Topology, config: RunConfig | None = None, sources: Sequence | None = None) -> str:
        """``sources``: the run's, when known (the columnar plan takes a source read as it comes with the
        reference plan, and says so)."""
        wanted = sorted({s.parallelism for s in topology.stages})
        note = "" if wanted in ([], [1]) else f" (stage parallelism {','.join(map(str, wanted))} not used)"
        note_of = getattr(kind_of(topology).local_executor(), "plan_note", None)
        plan = note_of(config or RunConfig(), sources) if note_of is not None else ""
        return f"local: one process, {len(topology.stages)} stage(s) in order{plan}{note}"

    def run(self, topology: Topology, sources: Sequence, config: RunConfig | None = None, sink=None) -> RunResult:
        config = config or RunConfig()
        sources = list(sources)
        self.check(topology, sources, config)
        for source in sources:
            require_path(source)
        refuse_clashes(source_paths(sources), config_outputs(config))
        sink = MemorySink() if sink is None else sink
        memory = sink if isinstance(sink, MemorySink) else None      # what the result keeps
        to_close = []

        def opened(path, what):
            if path is None:
                return None
            handle, close = open_text(path, what)
            if close:
                to_close.append(handle)
            return handle
        executor = kind_of(topology).local_executor()
        counters = RunCounters()
        held = None
        strict = getattr(sink, "strict", False)
        try:
            out, rejected_out = opened(config.out, "outputs"), opened(config.rejected_out, "rejected records")
            reports_out = opened(config.reports_out, "reports")
            if out is not None or rejected_out is not None or reports_out is not None:
                # the runner's durable form: JSON-lines files (an output of reports and models: each apart)
                sink = _Fanout([sink, JsonLinesSink(out, rejected_out, echo=None, reports=reports_out,
                                                    reports_apart=len(topology.output.records) > 1)])
            held = _Held(sink) if strict and not any(map(_live, sources)) else None
            started = _time.perf_counter()
            with interrupt.deferred():     # stop between records and time points, never inside one
                batches = executor.run(topology, sources, config, held or sink, counters)
            seconds = _time.perf_counter() - started
            if held is not None:
                held.release()
        except interrupt.Interrupted as stop:
            if held is not None:           # no bad line came before the signal: what was found stands
                held.release()
            stop.note = stop.note or (f"{executor.stopped_note(counters)}; the local runner keeps no checkpoint: "
                                      "run again to start over")
            raise
        finally:
            for handle in to_close:
                handle.close()
        return RunResult(runner=self.name, physical_plan=self.describe(topology, config, sources),
                         outputs=memory.outputs if memory else [], rejected=memory.rejected if memory else [],
                         counters=counters, batches=batches, seconds=seconds,
                         memory_mb={"python": rss_mb()}, partial=topology.partial)


def _live(source) -> bool:
    """A source read as it comes (standard input, a socket): it has no end to wait for."""
    spec = getattr(source, "path", None) or getattr(source, "spec", None)
    return isinstance(source, SocketLines) or spec == "-" or (isinstance(spec, str) and spec.startswith("tcp://"))


class _Held:
    """``--fail-on-bad-input`` on files: outputs wait for the end of the input, so a bad line anywhere stops the
    run before any output is written, as on Spark, which hands a micro-batch's rejected records over before its
    outputs (a live input, which has no end, writes as it goes)."""

    def __init__(self, sink):
        self.sink, self.held = sink, []

    def emit(self, output) -> None:
        self.held.append(output)

    def emit_batch(self, batch) -> None:
        self.held.append(batch)

    def reject(self, record) -> None:
        self.sink.reject(record)

    def release(self) -> None:
        held, self.held = self.held, []
        for output in held:
            if hasattr(output, "json_text"):
                emit_all(self.sink, output)
            else:
                self.sink.emit(output)


class _Fanout:
    def __init__(self, sinks):
        self.sinks = sinks

    def emit(self, output) -> None:
        for sink in self.sinks:
            sink.emit(output)

    def emit_batch(self, batch) -> None:
        for sink in self.sinks:
            emit_all(sink, batch)

    def reject(self, record) -> None:
        for sink in self.sinks:
            sink.reject(record)
