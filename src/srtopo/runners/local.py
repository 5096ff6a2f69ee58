"""The local runner: one process, the reference semantics every other runner is checked against.

Consistency topologies: tuples are pushed one at a time through the stages (:class:`ConsistencyEngine`),
in arrival order; a tuple at t conflicts with a cached tuple at t' when |t - t'| <= w, and the report is due
at max(t, t'), so a late arrival can produce a report for a later time point. Reports are deduplicated by
(subject, time). With a lateness L, a tuple more than L behind the latest of its own source (or below its
source's punctuation: ``ir.lateness``) is not processed but rejected as late (never silently lost), and
window entries no future tuple can reach are evicted; without one, nothing is late and nothing is evicted
(exact on any order; memory grows with the window). The reports depend only on the set of accepted tuples.

Rule topologies: one time point at a time through the I-DLV-sr evaluator (``srtopo.rules.evaluate``).

Every stage runs in this one process: the stages' parallelism is reported, not used.

Two physical plans for consistency stages (``LocalOptions.physical_plan``), with the same reports (the NI and
evidence chosen for a report may differ): ``indexed`` (the default) looks a tuple's conflict partners up in a
hash table, so its cost does not grow with the stage's conjunction ops; ``operators`` evaluates every conjunction
op of the stage on every tuple that reaches it, as the bolts of "Distributed Stream Consistency Checking" do, so
a tuple's cost grows with the number of operations it meets.
"""
from __future__ import annotations

import fnmatch
import gc
import heapq
import os
import socket
import sys
import time as _time
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain
from typing import ClassVar, Iterable, Iterator, Sequence

from srtopo import interrupt
from srtopo.errors import StreamInputError, UnsupportedByRunner
from srtopo.io.sinks import JsonLinesSink, MemorySink, open_text
from srtopo.io.sources import (
    AtomLog,
    Lines,
    RdfFiles,
    SocketLines,
    Timeline,
    TntFiles,
    TupleFiles,
    Tuples,
    require_outputs_outside,
    require_path,
    stream_files,
)
from srtopo.io.tnt import Punctuation, decoded_lines, fd_lines, file_lines, tnt_records
from srtopo.io.tsv import tuple_records
from srtopo.ir.lateness import SourceClock
from srtopo.ir.records import Model, RejectedRecord, Report, StreamTuple, evidence_of
from srtopo.ir.topology import Topology
from srtopo.measure import rss_mb
from srtopo.runners.protocol import BatchMetrics, RunConfig, RunCounters, RunResult, StageCounters

TUPLE_SOURCES = (TntFiles, TupleFiles, RdfFiles, SocketLines, Tuples, Lines)
ATOM_SOURCES = (AtomLog, Timeline, Lines)


PHYSICAL_PLANS = ("indexed", "operators")


@dataclass(frozen=True)
class LocalOptions:
    """strategy: how rule stages use clingo (``srtopo.solving.STRATEGIES``); physical_plan: how a
    consistency stage evaluates its conjunction ops (``indexed`` or ``operators``, see the module docstring)."""
    strategy: str = "auto"
    physical_plan: str = "indexed"

    def __post_init__(self):
        if self.physical_plan not in PHYSICAL_PLANS:
            raise UnsupportedByRunner(f"the local runner has no physical plan {self.physical_plan!r}",
                                      hint="use " + " or ".join(PHYSICAL_PLANS))


# --- consistency ---------------------------------------------------------------------------------------

class ConsistencyEngine:
    """Push tuples through a consistency topology; reports come back from ``push`` as they become due."""

    def __init__(self, topology: Topology, window: int | None, lateness: int | None = None,
                 physical_plan: str = "indexed", n_sources: int = 1):
        self.topology = topology
        self.window = window
        self.lateness = lateness
        # operators: per stage, every conjunction op as (left, right, ni), met by every tuple the stage receives
        self._operators = None if physical_plan == "indexed" else [
            tuple((op.left, op.right, op.ni) for op in stage.conjunction_ops) for stage in topology.stages]
        self._aliases = dict(topology.source.aliases)
        self._partners: list[dict[str, dict[str, tuple[str, str]]]] = []
        for stage in topology.stages:
            partners: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
            for op in stage.conjunction_ops:
                partners[op.left][op.right] = op.ni
                partners[op.right][op.left] = op.ni
            self._partners.append(dict(partners))
        self._routes: dict[str, tuple] = {}
        # per stage: subject -> list of (concept, time, asserted)
        self._caches: list[dict[str, list[tuple[str, int, str]]]] = [defaultdict(list) for _ in topology.stages]
        self._emitted: set[tuple[str, int]] = set()
        self._clocks = [SourceClock() for _ in range(max(1, n_sources))]
        self._ended: set[int] = set()
        self._since_sweep = 0
        #: why the last tuple ``push`` refused was late
        self.why: str | None = None
        self.counters = RunCounters(stages=[StageCounters(s.id, tasks=1, seconds=0.0) for s in topology.stages])

    def _route(self, concept: str) -> tuple:
        """Per stage the tuple reaches: (stage index, the concepts it is there with their conflict partners (None:
        not cached), what it adds to the stage's counters (``Topology.route_counts``))."""
        return tuple((k, tuple((c, self._partners[k].get(c)) for c in frontier), counts)
                     for k, (frontier, counts) in enumerate(zip(self.topology.route(concept),
                                                                self.topology.route_counts(concept))))

    def horizon(self) -> int | None:
        """No tuple older than this can still be accepted from a source that has not ended (None: any can)."""
        bounds = [c.horizon(self.lateness) for k, c in enumerate(self._clocks) if k not in self._ended]
        if not bounds or any(b is None for b in bounds):
            return None
        return min(bounds)

    def punctuate(self, time: int, source: int = 0) -> None:
        """Punctuation of ``source``: it sends no tuple older than ``time`` any more."""
        self._clocks[source].punctuate(time)

    def end(self, source: int) -> None:
        """``source`` has ended: it holds no window entry back any more."""
        self._ended.add(source)

    def push(self, item: StreamTuple, source: int = 0) -> list[Report] | None:
        """The reports the tuple makes due; None if it is late (counted, not processed; ``why`` says why)."""
        counters = self.counters
        counters.records += 1
        time = item.time
        if self.lateness is not None:     # SourceClock.late and .accept, inlined (a tuple is never a time point whole)
            clock = self._clocks[source]
            latest, floor = clock.latest, clock.floor
            if (floor is not None and time < floor) or (latest is not None and time < latest - self.lateness):
                self.why = clock.late(time, self.lateness, "event time")
                counters.late += 1
                return None
            if latest is None or time > latest:
                clock.latest = time
        concept = self._aliases.get(item.concept, item.concept)
        route = self._routes.get(concept)
        if route is None:
            route = self._routes[concept] = self._route(concept)
        if not route:
            counters.irrelevant += 1
            return []
        out: list[Report] = []
        subject, asserted, w, operators = item.subject, item.asserted, self.window, self._operators
        for k, entries, (n_in, n_cached, n_forwarded, n_inferred, n_ops) in route:
            started = _time.perf_counter()
            stage = counters.stages[k]
            stage.records_in += n_in
            stage.cached_in += n_cached
            stage.forwarded += n_forwarded
            stage.inferred += n_inferred
            stage.ops_evaluated += n_ops
            cache = self._caches[k]
            for c, partners in entries:
                if operators is not None:
                    self._operate(k, c, partners is not None, subject, time, asserted, out)
                if partners is None:
                    continue
                cached = cache[subject]
                if operators is None:
                    if c in partners:   # unsatisfiable concept: the tuple conflicts with itself
                        self._report(subject, time, partners[c], ((asserted, time),), k, out)
                    for other, t2, asserted2 in cached:
                        ni = partners.get(other)
                        if ni is not None and (w is None or abs(time - t2) <= w):
                            self._report(subject, max(time, t2), ni, ((asserted, time), (asserted2, t2)), k, out)
                cached.append((c, time, asserted))
                stage.window_rows += 1
                if stage.window_rows > stage.window_peak:
                    stage.window_peak = stage.window_rows
                self._since_sweep += 1
            stage.seconds += _time.perf_counter() - started
        self._maybe_sweep()
        return out

    def _operate(self, k, c, cached, subject, time, asserted, out) -> None:
        """The operators plan: every conjunction op of stage k meets the tuple; an op with the tuple's concept
        as an input looks for its other input among the subject's cached tuples."""
        entries = self._caches[k].get(subject, ()) if cached else ()
        w = self.window
        for left, right, ni in self._operators[k]:
            if c == left:
                other = right
            elif c == right:
                other = left
            else:
                continue
            if other == c:      # unsatisfiable concept: the tuple conflicts with itself
                self._report(subject, time, ni, ((asserted, time),), k, out)
            for concept, t2, asserted2 in entries:
                if concept == other and (w is None or abs(time - t2) <= w):
                    self._report(subject, max(time, t2), ni, ((asserted, time), (asserted2, t2)), k, out)

    def _report(self, subject, time, ni, evidence, k, out) -> None:
        key = (subject, time)
        if key in self._emitted:
            return
        self._emitted.add(key)
        self.counters.stages[k].outputs += 1
        self.counters.outputs += 1
        out.append(Report(subject, time, tuple(ni), evidence_of(*evidence), self.topology.stages[k].id,
                          self.topology.label))

    def _maybe_sweep(self) -> None:
        if self._since_sweep < 1024 or self.lateness is None or self.window is None:
            return
        total = sum(c.window_rows for c in self.counters.stages)
        if self._since_sweep < max(1024, total // 2):
            return
        horizon = self.horizon()
        if horizon is None:
            return
        self._since_sweep = 0
        # A future tuple has time >= horizon; it reaches entries with t' >= horizon - w and reports at >= horizon.
        cutoff = horizon - self.window
        for index, cache in enumerate(self._caches):
            removed = 0
            for subject in list(cache):
                entries = cache[subject]
                kept = [e for e in entries if e[1] >= cutoff]
                removed += len(entries) - len(kept)
                if kept:
                    cache[subject] = kept
                else:
                    del cache[subject]
            self.counters.stages[index].window_rows -= removed
        self._emitted = {k for k in self._emitted if k[1] >= horizon}


# --- reading sources in this process -------------------------------------------------------------------

def _chunks(items: Sequence, n: int) -> list[Sequence]:
    size = max(1, -(-len(items) // max(1, n)))
    return [items[i:i + size] for i in range(0, len(items), size)] or [items]


def _files(source) -> list[str]:
    files = stream_files(source.path)
    if source.glob:
        files = [f for f in files if fnmatch.fnmatch(os.path.basename(f), source.glob)]
    return files


def _located(records, source: str, offset: int = 0, index: int = 0) -> Iterator:
    """(tuple, source name, line, source index), RejectedRecords and Punctuations (lines moved by ``offset``)."""
    for record in records:
        if record.__class__ is RejectedRecord:
            yield record if not offset else RejectedRecord(record.source, record.line + offset, record.text,
                                                           record.reason)
        elif record.__class__ is Punctuation:
            yield Punctuation(record.time, index)
        else:
            yield record[0], source, record[1] + offset, index


def _file_batches(source, read_file) -> Iterator[Iterator]:
    files = _files(source)
    per = source.files_per_batch or max(1, len(files))
    for i in range(0, max(1, len(files)), per):
        yield chain.from_iterable(read_file(f) for f in files[i:i + per])


def _rdf_file(file: str, rdf_format: str | None, source_index: int = 0) -> Iterator:
    from srtopo.io.rdf import rdf_file_to_lines
    with open(file, "rb") as handle:
        content = handle.read().decode("utf-8", errors="replace")
    for index, line, reason in rdf_file_to_lines(file, content, rdf_format):
        if reason is not None:
            yield RejectedRecord(file, index, line, reason)
        else:
            yield from _located(tnt_records([line], file), file, index - 1, source_index)


def _socket_lines(host: str, port: int) -> Iterator[str]:
    try:
        conn = socket.create_connection((host, port))
    except OSError as error:
        raise StreamInputError(f"cannot connect to socket:{host}:{port}: {error}") from None
    with conn:
        yield from decoded_lines(fd_lines(conn.fileno(), idle=interrupt.check))


def _unnumbered(records) -> Iterator:
    """A socket's records: its rejected records have no line (as on Spark); its tuples keep their arrival
    number (a role assertion's two tuples are one rejected record)."""
    for record in records:
        if record.__class__ is RejectedRecord:
            record = RejectedRecord(record.source, None, record.text, record.reason)
        yield record


def tuple_batches(source, index: int = 0) -> Iterator[Iterator]:
    """The batches of a tuple source: each an iterator of (tuple, source name, line, ``index``), RejectedRecord
    or Punctuation (whose ``line`` is ``index``), in the source's order."""
    if isinstance(source, TntFiles) and source.path == "-":     # standard input: one batch, read as it comes
        return iter([_located(tnt_records(decoded_lines(fd_lines(sys.stdin.fileno(), idle=interrupt.check)),
                                          "<stdin>", True), "<stdin>", 0, index)])
    if isinstance(source, TntFiles):
        return _file_batches(source, lambda f: _located(tnt_records(file_lines(f), f, True), f, 0, index))
    if isinstance(source, TupleFiles):
        return _file_batches(source, lambda f: _located(tuple_records(file_lines(f), f), f, 0, index))
    if isinstance(source, RdfFiles):
        return _file_batches(source, lambda f: _rdf_file(f, source.rdf_format, index))
    if isinstance(source, SocketLines):
        name = source.describe()
        return iter([_unnumbered(_located(tnt_records(_socket_lines(source.host, source.port), name, True), name, 0,
                                          index))])
    if isinstance(source, Tuples):
        def records(chunk, start):
            for i, (s, c, t) in enumerate(chunk, start + 1):
                yield StreamTuple(s, c, int(t), c), source.name, i, index
        batches, start = [], 0
        for chunk in _chunks(source.records, source.batches):
            batches.append(records(chunk, start))
            start += len(chunk)
        return iter(batches)
    if isinstance(source, Lines):
        batches, start = [], 0
        for chunk in _chunks(source.lines, source.batches):
            batches.append(_located(tnt_records(chunk, source.name, True), source.name, start, index))
            start += len(chunk)
        return iter(batches)
    raise UnsupportedByRunner(f"the local runner does not read {type(source).__name__} sources")


def _merged(batches: list) -> Iterable:
    """One batch of several sources, merged by event time (rejected records and punctuation go as soon as they
    come). Each source's records keep their order: lateness is decided in it (``ir.lateness``)."""
    if len(batches) == 1:
        return batches[0]
    return heapq.merge(*batches, key=lambda item: item[0].time if item.__class__ is tuple else float("-inf"))


# --- the runner ------------------------------------------------------------------------------------------

class LocalRunner:
    name: ClassVar[str] = "local"
    summary: ClassVar[str] = "one process, the reference semantics"
    #: this runner's flags (their destinations) and the topology kinds each acts on (None: every kind)
    flag_kinds: ClassVar[dict] = {"local_plan": ("consistency",)}
    options_type: ClassVar[type] = LocalOptions

    @staticmethod
    def add_arguments(parser) -> None:
        """The clingo strategy is a program argument (``reason --strategy``); the consistency plan is here."""
        g = parser.add_argument_group("local runner (--engine local)")
        g.add_argument("--local-plan", choices=PHYSICAL_PLANS, default="indexed",
                       help="indexed (default): a tuple's conflict partners by hash lookup; operators: every "
                            "conjunction op of a stage meets every tuple, as the paper's bolts evaluate them")

    @staticmethod
    def options_from_args(args) -> LocalOptions:
        return LocalOptions(strategy=getattr(args, "strategy", None) or "auto",
                            physical_plan=getattr(args, "local_plan", None) or "indexed")

    def check(self, topology: Topology, sources: Sequence = (), config: RunConfig | None = None) -> None:
        topology.validate()
        accepted = TUPLE_SOURCES if topology.kind == "consistency" else ATOM_SOURCES
        for source in sources:
            if not isinstance(source, accepted):
                raise UnsupportedByRunner(f"the local runner does not read {type(source).__name__} sources for "
                                          f"{topology.kind} topologies",
                                          hint="give " + ", ".join(t.__name__ for t in accepted))

    def describe(self, topology: Topology, config: RunConfig | None = None) -> str:
        wanted = sorted({s.parallelism for s in topology.stages})
        note = "" if wanted == [1] else f" (stage parallelism {','.join(map(str, wanted))} not used)"
        options = config.options if config is not None and isinstance(config.options, LocalOptions) else None
        plan = f", {options.physical_plan} plan" if options and options.physical_plan != "indexed" else ""
        return f"local: one process, {len(topology.stages)} stage(s) in order{plan}{note}"

    def run(self, topology: Topology, sources: Sequence, config: RunConfig | None = None, sink=None) -> RunResult:
        config = config or RunConfig()
        sources = list(sources)
        self.check(topology, sources, config)
        for source in sources:
            require_path(source)
        require_outputs_outside(sources, config.out, config.rejected_out, config.checkpoint)
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
        progress = RunCounters()
        try:
            out, rejected_out = opened(config.out, "outputs"), opened(config.rejected_out, "rejected records")
            if out is not None or rejected_out is not None:   # the runner's durable form: JSON-lines files
                sink = _Fanout([sink, JsonLinesSink(out, rejected_out, echo=None)])
            started = _time.perf_counter()
            with interrupt.deferred():     # stop between records and time points, never inside one
                if topology.kind == "consistency":
                    counters, batches = self._consistency(topology, sources, config, sink, progress)
                else:
                    counters, batches = self._rules(topology, sources, config, sink, progress)
            seconds = _time.perf_counter() - started
        except interrupt.Interrupted as stop:
            stop.note = stop.note or interrupted_note(topology.kind, progress)
            raise
        finally:
            for handle in to_close:
                handle.close()
        return RunResult(runner=self.name, physical_plan=self.describe(topology, config),
                         outputs=memory.outputs if memory else [], rejected=memory.rejected if memory else [],
                         counters=counters, batches=batches, seconds=seconds,
                         memory_mb={"python": rss_mb()})

    def _consistency(self, topology, sources, config, sink, progress):
        # The engine allocates a long-lived object per cached tuple and creates no reference cycles, so the cyclic
        # garbage collector only re-traverses the growing window: paused for the run (measured on 2M tuples of the
        # benchmark stream: 128k -> 220k tuples/s in memory, 84k -> 141k from .tnt files), restored after.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._consistency_loop(topology, sources, config, sink, progress)
        finally:
            if enabled:
                gc.enable()

    def _consistency_loop(self, topology, sources, config, sink, progress):
        options = config.options if isinstance(config.options, LocalOptions) else LocalOptions()
        engine = ConsistencyEngine(topology, config.window, config.lateness, options.physical_plan, len(sources))
        progress.stages = engine.counters.stages
        counters = engine.counters = progress
        batches = []
        per_source = [tuple_batches(s, k) for k, s in enumerate(sources)]
        sockets = {s.describe() for s in sources if isinstance(s, SocketLines)}    # rejected without a line
        ended: set[int] = set()
        index = 0
        while True:
            parts = []
            for k, it in enumerate(per_source):
                if k in ended:
                    continue
                part = next(it, None)
                if part is None:
                    ended.add(k)
                    engine.end(k)
                else:
                    parts.append(part)
            if not parts:
                break
            started = _time.perf_counter()
            records_before, outputs_before = counters.records, counters.outputs
            late_lines: set = set()
            push, emit = engine.push, sink.emit
            for n, item in enumerate(_merged(parts)):
                if not n & 1023 and interrupt.requested():
                    interrupt.check()
                cls = item.__class__
                if cls is RejectedRecord:
                    counters.malformed += 1
                    sink.reject(item)
                    continue
                if cls is Punctuation:
                    engine.punctuate(item.time, item.line)
                    continue
                reports = push(item[0], item[3])
                if reports:
                    for report in reports:
                        emit(report)
                elif reports is None:
                    tuple_, source, line, _k = item
                    if (source, line) not in late_lines:   # a role assertion is two tuples: one record per line
                        late_lines.add((source, line))
                        sink.reject(RejectedRecord(source, None if source in sockets else line,
                                                   f"{tuple_.time}\t{tuple_.subject} {tuple_.asserted}", engine.why))
            batches.append(BatchMetrics(index, counters.records - records_before, _time.perf_counter() - started,
                                        counters.outputs - outputs_before))
            index += 1
        counters.batches = len(batches)
        return counters, batches

    def _rules(self, topology, sources, config, sink, progress):
        from srtopo.rules.evaluate import Reasoner
        from srtopo.rules.stream import timeline_points
        options = config.options if isinstance(config.options, LocalOptions) else LocalOptions()
        reasoner = Reasoner(topology, strategy=options.strategy)
        counters = progress
        counters.stages = [StageCounters(s.id, tasks=1, seconds=0.0) for s in topology.stages]
        batches = []
        source = topology.source
        for point in timeline_points(sources, source.unit, sink, counters, config.lateness, source.number_unit,
                                     config.max_gap):
            interrupt.check()
            started = _time.perf_counter()
            if not point.recorded:          # an empty stretch: evaluated as its windows need (Reasoner.advance)
                shown = 0
                for result in reasoner.advance(point.last, every=config.print_empty):
                    sink.emit(Model(result.time, tuple(reasoner.shown(result)), None, result.satisfiable))
                    shown += 1
                counters.outputs += shown
                batches.append(BatchMetrics(point.time, 0, _time.perf_counter() - started, shown))
                continue
            if reasoner.clock is not None and point.time == 0:
                reasoner.clock.set_origin_text(point.stamp)
            result = reasoner.step(point.atoms)
            seconds = _time.perf_counter() - started      # the evaluation; building the output is not timed
            sink.emit(Model(point.time, tuple(reasoner.shown(result)), point.stamp, result.satisfiable))
            counters.records += len(point.atoms)
            counters.outputs += 1
            batches.append(BatchMetrics(point.time, len(point.atoms), seconds, 1))
        for stage_counters, stats in zip(counters.stages, reasoner.stage_stats()):
            for key, value in stats.items():
                setattr(stage_counters, key, value)
        counters.batches = len(batches)
        return counters, batches


def interrupted_note(kind: str, counters: RunCounters) -> str:
    """What a stopped local run has done, and how to go on: it keeps no checkpoint."""
    done = (f"{counters.records} tuples checked, {counters.outputs} reports written" if kind == "consistency"
            else f"{counters.outputs} time points evaluated and written")
    return (f"{done}; the local engine keeps no checkpoint: run again to start over (--engine spark --checkpoint "
            "DIR can go on where a run stopped)")


class _Fanout:
    def __init__(self, sinks):
        self.sinks = sinks

    def emit(self, output) -> None:
        for sink in self.sinks:
            sink.emit(output)

    def reject(self, record) -> None:
        for sink in self.sinks:
            sink.reject(record)
