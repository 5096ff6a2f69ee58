"""The local executor of consistency topologies: one process, the reference semantics every other runner is
checked against.

Tuples are pushed one at a time through the stages (:class:`ConsistencyChecker`), in arrival order; a tuple at t
conflicts with a cached tuple at t' when |t - t'| <= w, and the report is due at max(t, t'), so a late arrival can
produce a report for a later time point. One report per (subject, time), naming the least of its violations
(docs/consistency.md, "Which NI and evidence a report names"): it is written once its time is closed, when no
tuple that could still be accepted can reach it (every unfinished source's horizon, ``ir.lateness``, is past it,
or the input ended), as the Spark runner closes a time below its watermark. With a lateness L, a tuple more than L
behind the latest of its own source (or below its source's punctuation) is not processed but rejected as late
(never silently lost), and window entries no future tuple can reach are evicted; without one, nothing is late,
nothing is evicted and every report is written at the end of the input (exact on any order; memory grows with the
window). The reports depend only on the set of accepted tuples.

Two physical plans (``LocalOptions.physical_plan``), with the same reports: ``indexed`` (the default) looks a
tuple's conflict partners up in a hash table, so its cost does not grow with the stage's conjunction ops;
``operators`` evaluates every conjunction op of the stage on every tuple that reaches it, as the bolts of
"Distributed Stream Consistency Checking" do, so a tuple's cost grows with the number of operations it meets.
"""
from __future__ import annotations

import gc
import sys
import heapq
import time as _time
from collections import defaultdict
from dataclasses import replace

from srtopo import interrupt
from srtopo.io.read import TUPLE_SOURCES, merged, tuple_batches
from srtopo.io.sources import SocketLines
from srtopo.io.tnt import Punctuation
from srtopo.ir.lateness import SourceClock
from srtopo.ir.records import RejectedRecord, Report, StreamTuple
from srtopo.ir.run import BatchMetrics, RunCounters, StageCounters
from srtopo.ir.topology import Topology

SOURCES = TUPLE_SOURCES


class ConsistencyChecker:
    """Push tuples through a consistency topology; reports come back from ``push``, ``punctuate``, ``end`` and
    ``finish`` as their times close."""

    def __init__(self, topology: Topology, window: int | None, lateness: int | None = None,
                 physical_plan: str = "indexed", n_sources: int = 1):
        self.topology = topology
        self.window = window
        self.lateness = lateness
        # operators: per stage, every conjunction op as (left, right, ni), met by every tuple the stage receives
        stages = range(len(topology.stages))
        self._operators = None if physical_plan == "indexed" else [
            tuple((op.left, op.right, tuple(op.ni)) for op in topology.conjunctions(k)) for k in stages]
        self._aliases = dict(topology.source.aliases)
        self._partners: list[dict[str, dict[str, tuple[str, str]]]] = []
        for k in stages:
            partners: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
            for op in topology.conjunctions(k):
                partners[op.left][op.right] = partners[op.right][op.left] = tuple(op.ni)
            self._partners.append(dict(partners))
        self._routes: dict[str, tuple] = {}
        # per stage: subject -> list of (concept, time, asserted)
        self._caches: list[dict[str, list[tuple[str, int, str]]]] = [defaultdict(list) for _ in topology.stages]
        #: (subject, time) of a report not yet closed -> its least violation so far (``_violation``)
        self._open: dict[tuple[str, int], tuple] = {}
        #: the open reports' (time, subject), a heap: they close in time order
        self._due: list[tuple[int, str]] = []
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

    def punctuate(self, time: int, source: int = 0) -> list[Report]:
        """Punctuation of ``source``: it sends no tuple older than ``time`` any more. The reports it closes."""
        self._clocks[source].punctuate(time)
        return self._close(self.horizon())

    def end(self, source: int) -> list[Report]:
        """``source`` has ended: it holds no window entry back any more. The reports it closes (every open one
        when it was the last source: ``finish``)."""
        self._ended.add(source)
        if len(self._ended) >= len(self._clocks):
            return self.finish()
        return self._close(self.horizon())

    def finish(self) -> list[Report]:
        """The end of the input: every open report, in (time, subject) order."""
        return self._close(None, final=True)

    def _close(self, below: int | None, final: bool = False) -> list[Report]:
        """The open reports of times below ``below`` (every one if ``final``), in (time, subject) order."""
        out: list[Report] = []
        due, open_, stages, label = self._due, self._open, self.topology.stages, self.topology.label
        if below is None and not final:
            return out
        counters = self.counters
        while due and (final or due[0][0] < below):
            time, subject = heapq.heappop(due)
            ni, back, first, second, k = open_.pop((subject, time))
            evidence = ((first, time),) if not back and first == second else ((first, time - back), (second, time))
            counters.stages[k].outputs += 1
            counters.outputs += 1
            out.append(Report(subject, time, ni, evidence, stages[k].id, label))
        return out

    def push(self, item: StreamTuple, source: int = 0) -> list[Report] | None:
        """The reports whose times the tuple closes (raising its source's clock); None if it is late (counted, not
        processed; ``why`` says why)."""
        counters = self.counters
        counters.records += 1
        time = item.time
        raised = False
        if self.lateness is not None:     # SourceClock.late and .accept, inlined (a tuple is never a time point whole)
            clock = self._clocks[source]
            latest, floor = clock.latest, clock.floor
            if (floor is not None and time < floor) or (latest is not None and time < latest - self.lateness):
                self.why = clock.late(time, self.lateness, "event time")
                counters.late += 1
                return None
            if latest is None or time > latest:
                clock.latest = time
                raised = True
        concept = self._aliases.get(item.concept, item.concept)
        route = self._routes.get(concept)
        if route is None:
            route = self._routes[concept] = self._route(concept)
        if not route:
            counters.irrelevant += 1
            return self._close(self.horizon()) if raised and self._due else []
        subject, asserted, w, operators = item.subject, item.asserted, self.window, self._operators
        violation = self._violation
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
                    self._operate(k, c, partners is not None, subject, time, asserted)
                if partners is None:
                    continue
                cached = cache[subject]
                if operators is None:
                    if c in partners:   # unsatisfiable concept: the tuple conflicts with itself
                        violation(subject, time, asserted, time, asserted, partners[c], k)
                    for other, t2, asserted2 in cached:
                        ni = partners.get(other)
                        if ni is not None and (w is None or abs(time - t2) <= w):
                            violation(subject, time, asserted, t2, asserted2, ni, k)
                cached.append((c, time, asserted))
                stage.window_rows += 1
                if stage.window_rows > stage.window_peak:
                    stage.window_peak = stage.window_rows
                self._since_sweep += 1
            stage.seconds += _time.perf_counter() - started
        self._maybe_sweep()
        return self._close(self.horizon()) if raised and self._due else []

    def _violation(self, subject, time, asserted, t2, asserted2, ni, k) -> None:
        """A violation of ``ni`` at stage k by the tuples (asserted, time) and (asserted2, t2): the report of
        (subject, max(time, t2)) keeps the least one by (NI, how far back the earlier tuple is, the earlier
        tuple's concept, the later one's, the stage), the order of docs/consistency.md ("Which NI and evidence a
        report names") that the Spark runner's packed key has too."""
        if t2 < time or (t2 == time and asserted2 <= asserted):
            at, key = time, (ni, time - t2, asserted2, asserted, k)
        else:
            at, key = t2, (ni, t2 - time, asserted, asserted2, k)
        slot = (subject, at)
        known = self._open.get(slot)
        if known is None:
            self._open[slot] = key
            heapq.heappush(self._due, (at, subject))
        elif key < known:
            self._open[slot] = key

    def _operate(self, k, c, cached, subject, time, asserted) -> None:
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
                self._violation(subject, time, asserted, time, asserted, ni, k)
            for concept, t2, asserted2 in entries:
                if concept == other and (w is None or abs(time - t2) <= w):
                    self._violation(subject, time, asserted, t2, asserted2, ni, k)

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


def run(topology, sources, config, sink, progress) -> list[BatchMetrics]:
    # The checker allocates a long-lived object per cached tuple and creates no reference cycles, so the cyclic
    # garbage collector only re-traverses the growing window: paused for the run (measured on 2M tuples of the
    # benchmark stream: 128k -> 220k tuples/s in memory, 84k -> 141k from .tnt files), restored after.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _loop(topology, sources, config, sink, progress)
    finally:
        if enabled:
            gc.enable()

def _live(source) -> bool:
    """A source read as it comes: standard input or a socket, which has no end to wait for."""
    return isinstance(source, SocketLines) or getattr(source, "path", None) == "-"


def _loop(topology, sources, config, sink, progress) -> list[BatchMetrics]:
    plan = getattr(config.options, "physical_plan", None) or "indexed"
    lateness = config.lateness
    if lateness is None and any(map(_live, sources)):
        # a report is written once no tuple can change it: without a lateness that is the end of input, which a
        # live source may never reach (the Spark runner's streaming query takes 0 too)
        lateness = 0
        print("srtopo: a live stream without a lateness: using 0 (a tuple behind the latest of its source is "
              "rejected as late; give --lateness N to wait for N time units)", file=sys.stderr)
    checker = ConsistencyChecker(topology, config.window, lateness, plan, len(sources))
    progress.stages = checker.counters.stages
    counters = checker.counters = progress
    batches = []
    per_source = [tuple_batches(s, k) for k, s in enumerate(sources)]
    sockets = {s.describe() for s in sources if isinstance(s, SocketLines)}    # rejected without a line
    ended: set[int] = set()
    index = 0
    emit = sink.emit
    while True:
        started = _time.perf_counter()
        records_before, outputs_before = counters.records, counters.outputs
        parts = []
        for k, it in enumerate(per_source):
            if k in ended:
                continue
            part = next(it, None)
            if part is None:
                ended.add(k)
                for report in checker.end(k):
                    emit(report)
            else:
                parts.append(part)
        if not parts:
            if batches:     # what the end of the input closed belongs to the last batch
                batches[-1] = replace(batches[-1], outputs=batches[-1].outputs + counters.outputs - outputs_before)
            break
        late_lines: set = set()
        push = checker.push
        for n, item in enumerate(merged(parts)):
            if not n & 1023 and interrupt.requested():
                interrupt.check()
            cls = item.__class__
            if cls is RejectedRecord:
                counters.malformed += 1
                sink.reject(item)
                continue
            if cls is Punctuation:
                for report in checker.punctuate(item.time, item.line):
                    emit(report)
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
                                               f"{tuple_.time}\t{tuple_.subject} {tuple_.asserted}", checker.why))
        batches.append(BatchMetrics(index, counters.records - records_before, _time.perf_counter() - started,
                                    counters.outputs - outputs_before))
        index += 1
    counters.batches = len(batches)
    return batches


def stopped_note(counters: RunCounters) -> str:
    """What a stopped local run has done."""
    return f"{counters.records} tuples checked, {counters.outputs} reports written"
