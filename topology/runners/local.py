"""The local reference runner: one process, exact event-time semantics, per-stage counters.

Tuples may arrive out of order. A tuple at t conflicts with a cached tuple at t' when |t - t'| <= w;
the report is due at max(t, t'), so a late arrival can produce a report for a later time point.
Reports are deduplicated by (subject, time). With ``allowed_lateness`` set, a tuple older than
(max time seen - allowed_lateness) is not processed but recorded in ``late`` (never silently lost),
and window entries that no future tuple can reach are evicted. Without it, nothing is late and
nothing is evicted (exact on any order, memory grows with the window).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from srtopo.errors import TopologyError
from srtopo.topology.ir import Topology
from srtopo.topology.reports import Report, evidence_of
from srtopo.topology.tnt import RejectedRecord, StreamTuple


@dataclass
class StageCounters:
    stage: str
    tuples_in: int = 0
    forwarded: int = 0
    inferred: int = 0
    cached_inserted: int = 0
    cached_now: int = 0
    cached_peak: int = 0
    ops_evaluated: int = 0
    reports: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class RunCounters:
    tuples: int = 0
    irrelevant: int = 0
    late: int = 0
    stages: list[StageCounters] = field(default_factory=list)

    @property
    def cached_peak_total(self) -> int:
        return sum(s.cached_peak for s in self.stages)

    def to_dict(self) -> dict:
        return {"tuples": self.tuples, "irrelevant": self.irrelevant, "late": self.late,
                "stages": [s.to_dict() for s in self.stages]}


class _StagePlan:
    """Per-stage lookup tables derived once from the IR."""

    def __init__(self, stage, is_last: bool):
        self.id = stage.id
        self.partners: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
        for op in stage.conjunction_ops:
            self.partners[op.left][op.right] = op.ni
            self.partners[op.right][op.left] = op.ni
        self.touch = {c: len(p) for c, p in self.partners.items()}
        self.outputs: dict[str, tuple[tuple[str, bool], ...]] = defaultdict(tuple)
        if not is_last:
            out: dict[str, list[tuple[str, bool]]] = defaultdict(list)
            for c in stage.forwards:
                out[c].append((c, False))
            for op in stage.inference_ops:
                out[op.sub].append((op.sup, True))
            self.outputs.update({c: tuple(v) for c, v in out.items()})


class LocalRunner:
    def __init__(self, topology: Topology, window: int | None, allowed_lateness: int | None = None):
        if window is not None and window < 0:
            raise TopologyError(f"window must be >= 0 time units (or unbounded), got {window}")
        if allowed_lateness is not None and allowed_lateness < 0:
            raise TopologyError(f"allowed lateness must be >= 0, got {allowed_lateness}")
        self.topology = topology
        self.window = window
        self.allowed_lateness = allowed_lateness
        self._plans = [_StagePlan(s, i == len(topology.stages) - 1) for i, s in enumerate(topology.stages)]
        self._aliases = dict(topology.source.aliases)
        self._accepted = frozenset(topology.source.concepts)
        # per stage: subject -> list of (concept, time, asserted)
        self._caches: list[dict[str, list[tuple[str, int, str]]]] = [defaultdict(list) for _ in self._plans]
        self._emitted: set[tuple[str, int]] = set()
        self._max_time: int | None = None
        self._since_sweep = 0
        self.counters = RunCounters(stages=[StageCounters(p.id) for p in self._plans])
        self.late: list[RejectedRecord] = []

    # --- public API ----------------------------------------------------------------------------
    def run(self, tuples: Iterable[StreamTuple | tuple]) -> list[Report]:
        return list(self.process(tuples))

    def process(self, tuples: Iterable[StreamTuple | tuple]) -> Iterator[Report]:
        for item in tuples:
            yield from self.push(item)

    def push(self, item: StreamTuple | tuple) -> list[Report]:
        if not isinstance(item, StreamTuple):
            subject, concept, time = item[:3]
            item = StreamTuple(subject, concept, int(time), item[3] if len(item) > 3 else concept)
        self.counters.tuples += 1
        time = item.time
        if self._max_time is not None and self.allowed_lateness is not None \
                and time < self._max_time - self.allowed_lateness:
            self.counters.late += 1
            self.late.append(RejectedRecord("<stream>", self.counters.tuples,
                                            f"{time}\t{item.subject} {item.asserted}",
                                            f"late: event time {time} is older than the watermark "
                                            f"{self._max_time - self.allowed_lateness}"))
            return []
        if self._max_time is None or time > self._max_time:
            self._max_time = time
        concept = self._aliases.get(item.concept, item.concept)
        if concept not in self._accepted:
            self.counters.irrelevant += 1
            return []
        out: list[Report] = []
        frontier = [(concept, item.asserted)]
        for index, plan in enumerate(self._plans):
            if not frontier:
                break
            frontier = self._stage(index, plan, item.subject, time, frontier, out)
        self._maybe_sweep()
        return out

    # --- internals -----------------------------------------------------------------------------
    def _stage(self, index, plan: _StagePlan, subject, time, frontier, out) -> list[tuple[str, str]]:
        counters = self.counters.stages[index]
        cache = self._caches[index]
        w = self.window
        nxt: list[tuple[str, str]] = []
        for concept, asserted in frontier:
            counters.tuples_in += 1
            partners = plan.partners.get(concept)
            if partners is not None:
                counters.ops_evaluated += plan.touch[concept]
                entries = cache[subject]
                if concept in partners:   # unsatisfiable concept: the tuple conflicts with itself
                    self._report(subject, time, partners[concept], ((asserted, time),), plan.id, counters, out)
                for other, t2, asserted2 in entries:
                    ni = partners.get(other)
                    if ni is not None and (w is None or abs(time - t2) <= w):
                        self._report(subject, max(time, t2), ni, ((asserted, time), (asserted2, t2)),
                                     plan.id, counters, out)
                entries.append((concept, time, asserted))
                counters.cached_inserted += 1
                counters.cached_now += 1
                if counters.cached_now > counters.cached_peak:
                    counters.cached_peak = counters.cached_now
                self._since_sweep += 1
            for target, inferred in plan.outputs.get(concept, ()):
                nxt.append((target, asserted))
                if inferred:
                    counters.inferred += 1
                else:
                    counters.forwarded += 1
        return nxt

    def _report(self, subject, time, ni, evidence, stage_id, counters, out) -> None:
        key = (subject, time)
        if key in self._emitted:
            return
        self._emitted.add(key)
        counters.reports += 1
        out.append(Report(subject, time, tuple(ni), evidence_of(*evidence), stage_id, self.topology.plan))

    def _maybe_sweep(self) -> None:
        if self.allowed_lateness is None or self.window is None or self._max_time is None:
            return
        total = sum(c.cached_now for c in self.counters.stages)
        if self._since_sweep < max(1024, total // 2):
            return
        self._since_sweep = 0
        # A future tuple has time >= max - lateness; it reaches entries with t' >= that - w.
        cutoff = self._max_time - self.allowed_lateness - self.window
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
            self.counters.stages[index].cached_now -= removed
        horizon = self._max_time - self.allowed_lateness
        self._emitted = {k for k in self._emitted if k[1] >= horizon}
