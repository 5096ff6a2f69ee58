"""A keyed Streamlog stage in key partitions: which partition each line goes to, what the others learn from it,
and the evaluator each partition runs (no Spark here: the Spark job and the tests drive it).

A fact line goes to the partition of its key value (``streamlog.keys``: CRC-32 of the key argument as clingo
prints it, ``logic.keys.key_partition``). Every other partition still needs the line as *progress*: in the
synchronized and sort-merge unions a fact at timestamp t of stream s says s passed every timestamp before t, and
a stream's facts must come in non-decreasing order. So the others get (stream, t) and judge its order exactly as
the owner judges the fact (``seen``): every partition holds the same stream progress, hence the same bound, and
evaluates a timestamp in the same step as the others. Punctuation goes to every partition. A line rejected
whatever the state (not UTF-8, malformed, a background predicate, no integer timestamp) goes to partition 0
alone, which rejects it as the local runner does and gives nobody progress. Program facts of temporal predicates
are routed like stream facts; background facts are in every partition's program.

The union of the partitions' models per timestamp is the local runner's model (the key analysis guarantees each
derived atom is derived in its key's partition only). Not split (``keyed`` says so): the plain union (what it
rejects as late depends on every partition's evaluated timestamps), ``uts`` predicates (their timestamp is an
arrival count over all streams), and ``retain`` with a rule that schedules a later timestamp (a rebuild of the
kept history happens at timestamps counted over all partitions: with ``retain`` every partition visits every
timestamp that has input anywhere, which misses only the scheduled ones).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

from clingo import SymbolType

from srtopo.io.tnt import NotUtf8
from srtopo.ir.records import Model
from srtopo.ir.topology import PartitionKey
from srtopo.logic.atoms import RecordError, parse_atom
from srtopo.logic.keys import key_partition
from srtopo.streamlog.program import Program
from srtopo.streamlog.streams import _PUNCTUATION, Streamlog

#: what a partition does with a routed line: push it whole (the owner), or learn the progress of another
#: partition's fact (of a predicate the program reads, or not), or of punctuation
PUSH, SEEN, SEEN_UNREAD, PUNCT = "push", "seen", "seen_unread", "punct"


def keyed(program: Program, key: PartitionKey, union: str, retain: int | None) -> bool:
    """Whether the stage runs in key partitions (the module docstring says when it does not)."""
    if not key.keyed or union == "plain" or program.uts:
        return False
    return retain is None or all(r.anchored for r in program.rules if r.temporal)


@dataclass(frozen=True)
class Routing:
    """Where each line of a keyed stage goes, among ``partitions`` partitions."""
    temporal: frozenset              # signatures the program reads or derives (all keyed)
    statics: frozenset
    positions: dict                  # "name/arity" -> key argument position
    partitions: int

    @staticmethod
    def of(program: Program, key: PartitionKey, partitions: int) -> "Routing":
        return Routing(frozenset(program.temporal), frozenset(program.statics), dict(key.positions),
                       max(1, int(partitions)))

    def owner(self, sym) -> int:
        """The partition of a fact of a temporal predicate."""
        pos = self.positions[f"{sym.name}/{len(sym.arguments)}"]
        return key_partition(str(sym.arguments[pos]), self.partitions)

    def route(self, text: str) -> tuple | None:
        """(what, owner, timestamp) of a stream line, judged without state as ``Streamlog.push`` does: None for a
        line it skips; (PUSH, 0, None) for a line it rejects whatever the state; (PUNCT, None, T) for
        punctuation; (SEEN, owner, T) for a fact of a predicate the program reads, (SEEN_UNREAD, 0, T) for one
        it does not read. The owner pushes the line itself; the others get the progress."""
        stripped = text.strip()
        if not stripped or stripped.startswith("%"):
            return None
        if isinstance(text, NotUtf8):
            return PUSH, 0, None
        if stripped.startswith("#"):
            m = _PUNCTUATION.match(stripped)
            return (PUNCT, None, int(m.group(1))) if m else (PUSH, 0, None)
        if not stripped.endswith("."):
            return PUSH, 0, None
        try:
            sym = parse_atom(stripped[:-1])
        except RecordError:
            return PUSH, 0, None
        sig = (sym.name, len(sym.arguments))
        if sig in self.statics or not sym.arguments or sym.arguments[0].type != SymbolType.Number:
            return PUSH, 0, None
        ts = sym.arguments[0].number
        if sig in self.temporal:
            return SEEN, self.owner(sym), ts
        return SEEN_UNREAD, 0, ts

    def rows(self, text: str) -> list[tuple]:
        """(partition, what, timestamp) for every partition that receives the line."""
        routed = self.route(text)
        if routed is None:
            return []
        what, owner, ts = routed
        if what == PUNCT:       # partition 0 counts it
            return [(0, PUSH, ts)] + [(p, PUNCT, ts) for p in range(1, self.partitions)]
        return [(p, PUSH if p == owner else what, ts) for p in range(self.partitions)
                if p == owner or what != PUSH]


class KeyPartition(Streamlog):
    """The evaluator of one key partition: its own facts pushed as lines, the other partitions' facts as
    progress. ``visited``: the timestamps it evaluated since it was last emptied (a model part each, possibly
    empty, so that the timestamps evaluated can be counted over the partitions)."""

    def __init__(self, program: Program, streams, union: str, retain: int | None, routing: Routing, part: int,
                 on_reject=None, max_gap: int | None = None):
        super().__init__(program, streams, union, retain, on_reject=on_reject, max_gap=max_gap)
        self.routing = routing
        self.part = part
        #: with retain, the history is rebuilt every ``retain`` timestamps evaluated: every partition visits
        #: the timestamps that have input in any partition, as one evaluator over all keys does
        self.touch = retain is not None
        self.visited: list[int] = []
        self.pending, self.heap = {}, []
        for sym in program.timed_facts:
            ts = sym.arguments[0].number
            if routing.owner(sym) == part:
                self._add(ts, sym)
            elif self.touch:
                self._visit(ts)

    def _visit(self, ts: int) -> None:
        if ts not in self.pending:
            self.pending[ts] = {}
            heapq.heappush(self.heap, ts)

    def seen(self, stream: int, ts: int, read: bool = True) -> list[Model]:
        """Another partition's fact at ``ts`` of stream ``stream`` (of a predicate the program reads or not):
        the progress it gives if the owner accepts it, which the owner judges by the same stream state."""
        source = self.sources[stream]
        if self._order_problem(source, ts):
            return []
        source.last = ts
        source.data_passed = max(source.data_passed, ts - 1)
        if read and self.touch:
            self._visit(ts)
        return self._advance()

    def receive(self, stream: int, what: str, ts, text, line=None, file=None) -> list[Model]:
        """One routed row (``Routing.rows``)."""
        if what == PUSH:
            return self.push(stream, text, line, file)
        if what == PUNCT:
            return self.punctuate(stream, ts)
        return self.seen(stream, ts, what == SEEN)

    def _evaluated(self, now: int) -> None:
        self.visited.append(now)


def merge(parts) -> list[Model]:
    """The models of a timestamp's parts (Models of any partitions, in any order), one per timestamp with
    atoms, in time order: each the sorted union of its parts' atoms."""
    atoms: dict = {}
    for m in parts:
        atoms.setdefault(m.time, set()).update(m.atoms)
    return [Model(t, tuple(sorted(a))) for t, a in sorted(atoms.items()) if a]
