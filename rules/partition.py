"""Rule stages evaluated on one key partition over a range of time points: what a distributed runner runs
inside each task (no engine import here; clingo is reached through ``srtopo.rules.evaluate``).

A partition receives, as rows, the atoms its stages read at the time points to evaluate (the stream's and the
stages' before them, each with whether it persists), and the persistent atoms of the observed predicates at the
time points its windows reach back to (the checkpointed history). It evaluates its stages once per time point
for every key of the partition together and returns the atoms they derive, with whether each persists.
Consecutive stages keyed alike (a predicate one derives is keyed where the next reads it) run as one segment.
Background facts of the stages' predicates are filtered to the partition by the same key hash the runner
routes rows with (:func:`key_partition`), so they never travel with the rows.
"""
from __future__ import annotations

import json
import zlib
from dataclasses import replace

from clingo import parse_term

from srtopo.rules.evaluate import Reasoner, signature
from srtopo.rules.stream import atom_fields
from srtopo.topology.ir import Topology

#: row kinds a partition receives: an atom at a time point to evaluate, a history atom, a tick (no atom)
CURRENT, HISTORY, TICK = "c", "h", "t"


def key_partition(value_text: str, partitions: int) -> int:
    """The partition of a key value (an argument printed by clingo): CRC-32 of its UTF-8 bytes modulo the
    number of partitions, which Spark SQL computes as ``pmod(crc32(CAST(v AS BINARY)), n)``."""
    return zlib.crc32(value_text.encode("utf-8")) % partitions


def segment_topology(topology: Topology, indices) -> Topology:
    """The topology of the stages ``indices`` alone (consecutive, keyed alike), with the background facts of
    the predicates they read."""
    stages = tuple(topology.stages[i] for i in indices)
    read = set()
    for stage in stages:
        read |= set(stage.inputs) | {w.observed for w in stage.windows}
    background = tuple(f for f in topology.source.background if fact_signature(f) in read)
    return replace(topology, stages=stages, source=replace(topology.source, background=background), notes=None)


def merged_positions(stages) -> dict | None:
    """The key position of every predicate over stages keyed alike (None: they run in one partition)."""
    if not all(s.key.keyed for s in stages):
        return None
    out: dict = {}
    for stage in stages:
        out.update(stage.key.positions)
    return out


def fact_signature(text: str) -> str:
    """``p/n`` of a background fact written as text."""
    symbol = parse_term(text)
    return f"{symbol.name}/{len(symbol.arguments)}"


#: parsed atoms an evaluator keeps between micro-batches before it starts over
PARSED_LIMIT = 1_000_000


class PartitionEvaluator:
    """The stages of a topology (consecutive, keyed alike) on partition ``part`` of ``partitions``; kept by a
    worker across micro-batches (its solvers may keep state), while the history always comes from the rows given."""

    def __init__(self, topology: Topology, part: int, partitions: int, strategy: str = "auto"):
        positions = merged_positions(topology.stages)
        facts = []
        for text in topology.source.background:
            symbol = parse_term(text)
            if positions is not None:
                position = positions.get(f"{symbol.name}/{len(symbol.arguments)}")
                if position is not None and key_partition(str(symbol.arguments[position]), partitions) != part:
                    continue
            facts.append(text)
        self.topology = replace(topology, source=replace(topology.source, background=tuple(facts)))
        self.reasoner = Reasoner(self.topology, strategy=strategy)
        self.heads = tuple(signature(h) for stage in topology.stages for h in stage.heads)
        self.observed = frozenset(signature(w.observed) for stage in topology.stages for w in stage.windows)
        # atom text -> (Symbol, (name, arity)): the history a window reads comes back as text in every batch,
        # and a worker that evaluated the partition before has parsed most of it already (parsing is a pure
        # function, so a worker that has not simply parses everything)
        self._parsed: dict = {}

    def run(self, lo: int, hi: int, rows, with_args=None, clock_origin=None) -> list[tuple]:
        """rows: (kind, time, atom text, persistent); returns (time, "p/n", atom text, persistent, [argument
        texts]) of every atom of the stage's heads at time points lo..hi. ``with_args``: the predicates ("p/n")
        whose argument texts a later reader needs (to route them by key); the others get None (None: all).
        ``clock_origin``: time point 0's timestamp (kind, value) for @now (``rules.clock.Clock.set_origin``)."""
        reasoner = self.reasoner
        if reasoner.clock is not None and clock_origin is not None:
            reasoner.clock.set_origin(*clock_origin)
        current: dict[int, list] = {}
        persistent: dict[int, set] = {}
        history: dict[int, dict] = {}
        parsed = self._parsed
        if len(parsed) > PARSED_LIMIT:
            parsed.clear()
        for kind, time, text, keeps in rows:
            if kind == TICK or text is None:
                continue
            found = parsed.get(text)
            if found is None:
                atom = parse_term(text)
                found = parsed[text] = (atom, (atom.name, len(atom.arguments)))
            atom = found[0]
            if kind == HISTORY:
                history.setdefault(int(time), {}).setdefault(found[1], set()).add(atom)
            else:
                current.setdefault(int(time), []).append(atom)
                if keeps:
                    persistent.setdefault(int(time), set()).add(atom)
        temporary = reasoner.temp_sigs
        facts = {sig: atoms for sig, atoms in reasoner.facts.items() if sig in self.observed and sig not in temporary}
        reasoner.history = {}
        for t in range(max(0, lo - reasoner.max_distance), lo):
            past = dict(facts)
            for sig, atoms in history.get(t, {}).items():
                past[sig] = frozenset(atoms) | past.get(sig, frozenset())
            reasoner.history[t] = past
        reasoner.time = lo
        out = []
        empty: frozenset = frozenset()
        for t in range(lo, hi + 1):
            result = reasoner.step(current.get(t, ()), frozenset(persistent.get(t, empty)))
            kept = reasoner.persisted
            for sig in self.heads:
                atoms = result.by_sig.get(sig)
                if not atoms:
                    continue
                persisted = kept.get(sig, empty)
                name = f"{sig[0]}/{sig[1]}"
                if with_args is None or name in with_args:
                    for a in atoms:
                        _sig, text, args = atom_fields(a)
                        out.append((t, name, text, bool(persisted) and a in persisted, args))
                else:
                    out.extend((t, name, str(a), bool(persisted) and a in persisted, None) for a in atoms)
        return out


_EVALUATORS: dict = {}


def evaluator(key: tuple, topology_json: str, part: int, partitions: int, strategy: str) -> PartitionEvaluator:
    """The worker's evaluator for ``key`` (a run, a stage, a partition), built on first use."""
    found = _EVALUATORS.get(key)
    if found is None:
        if len(_EVALUATORS) > 256:
            _EVALUATORS.clear()
        found = _EVALUATORS[key] = PartitionEvaluator(Topology.from_dict(json.loads(topology_json)),
                                                       part, partitions, strategy)
    return found
