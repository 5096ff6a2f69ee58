"""Rule stages evaluated on one key partition over a range of time points: what a distributed runner runs
inside each task (no clingo import here; clingo is reached through ``srtopo.rules.evaluate``).

A partition receives, as rows, the atoms its stages read at the time points to evaluate (the stream's and the
stages' before them, each with whether it persists), and the persistent atoms of the observed predicates at the
time points its windows reach back to (the checkpointed history). It evaluates its stages once per time point
for every key of the partition together and returns the atoms they derive, with whether each persists.
Consecutive stages keyed alike (a predicate one derives is keyed where the next reads it) run as one segment.
Background facts of the stages' predicates are filtered to the partition by the same key hash the runner
routes rows with (``logic.keys.key_partition``), so they never travel with the rows.
"""
from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Iterator
from urllib.parse import unquote
from dataclasses import dataclass, replace

from clingo import parse_term

from srtopo.ir.lateness import SourceClock
from srtopo.ir.topology import Topology
from srtopo.logic.atoms import RecordError, atom_fields, symbol_text
from srtopo.logic.keys import key_partition
from srtopo.rules.evaluate import Reasoner, Repeat, signature
from srtopo.rules.log import record_row
from srtopo.rules.timestamps import GIVEN, time_point_of

#: row kinds a partition receives: an atom at a time point to evaluate, a history atom, a tick (no atom)
CURRENT, HISTORY, TICK = "c", "h", "t"


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
        #: held while a batch runs: a driver's concurrent queries of one program share the evaluator
        self.lock = threading.Lock()
        #: the store entry (its token) whose end this evaluator's state is, where the driver's passes left it
        self.resumes = None

    def run(self, lo: int, hi: int, rows, with_args=None, clock_origin=None, continues: bool = False,
            first: int | None = None, check=None, wanted=None) -> list[tuple]:
        """rows: (kind, time, atom text, persistent); returns (time, "p/n", atom text, persistent, [argument
        texts]) of every atom of the stage's heads at time points lo..hi, and (time, ``UNSATISFIABLE``, None,
        False, None) for each time point whose choice part has no answer set. ``with_args``: the predicates ("p/n")
        whose argument texts a later reader needs (to route them by key); the others get None (None: all).
        ``clock_origin``: time point 0's timestamp (kind, value) for @now (``rules.clock.Clock.set_origin``).
        ``continues``: this evaluator's last run ended at ``lo - 1`` on the history the rows would give (the
        caller knows it), so the history it kept is used and history rows are not expected. ``first``: the
        stream's first time point (``Reasoner.start_at``; default ``lo``). ``check``: called before each time
        point (a driver stopping its query stops the batch there). ``wanted``: (time points, cut): of the time
        points jumped over, only those listed and those after ``cut`` are returned (None: all of them).

        The time points without rows of this partition are evaluated as a stretch (``Reasoner.stretch``), which
        jumps over the repeating part of a long one: what the partition does depends on the time points its rows
        reach and its windows' reach, not on how far apart they lie (unless every time point jumped over is
        wanted, and its model holds atoms of the stages' heads)."""
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
        if continues and reasoner.time != lo:
            raise RuntimeError(f"an evaluator at time point {reasoner.time} cannot continue at {lo}")
        if not continues:
            first = lo if first is None else first
            temporary = reasoner.temp_sigs
            facts = {sig: atoms for sig, atoms in reasoner.facts.items()
                     if sig in self.observed and sig not in temporary}
            reasoner.start_at(first)
            reasoner.history = {}
            for t in range(max(first, lo - reasoner.max_distance), lo):
                past = dict(facts)
                for sig, atoms in history.get(t, {}).items():
                    past[sig] = frozenset(atoms) | past.get(sig, frozenset())
                reasoner.history[t] = past
            reasoner.time = lo
        out: list = []
        empty: frozenset = frozenset()
        for t in sorted(x for x in current if lo <= x <= hi) + [hi + 1]:
            if reasoner.time < t:       # the time points before t without rows here
                for item in reasoner.stretch(min(t, hi + 1) - 1, check):
                    if not isinstance(item, Repeat):
                        self._emit(item, with_args, out)
                    elif any(not r.satisfiable or any(r.by_sig.get(sig) for sig in self.heads)
                             for r in item.period):
                        self._emit_repeat(item, wanted, with_args, out)
            if t > hi:
                break
            if check is not None:
                check()
            self._emit(reasoner.step(current[t], frozenset(persistent.get(t, empty))), with_args, out)
        return out

    def _emit_repeat(self, repeat: Repeat, wanted, with_args, out: list) -> None:
        """The rows of the wanted time points of a stretch jumped over (``run``)."""
        end = repeat.start + repeat.count
        if wanted is None:
            for result in repeat.results():
                self._emit(result, with_args, out)
            return
        times, cut = wanted
        for t in times[bisect.bisect_left(times, repeat.start):bisect.bisect_left(times, end)]:
            if t <= cut:
                self._emit(repeat.at(t), with_args, out)
        for t in range(max(repeat.start, cut + 1), end):
            self._emit(repeat.at(t), with_args, out)

    def _emit(self, result, with_args, out: list) -> None:
        """The rows of a time point's model: the atoms of the stages' heads, with whether each persists."""
        t = result.time
        empty: frozenset = frozenset()
        if not result.satisfiable:
            out.append((t, UNSATISFIABLE, None, False, None))
        kept = result.persisted
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
                out.extend((t, name, symbol_text(a), bool(persisted) and a in persisted, None) for a in atoms)


_EVALUATORS: dict = {}


def evaluator(key: tuple, topology_json: str, part: int, partitions: int, strategy: str) -> PartitionEvaluator:
    """The worker's evaluator for ``key`` (what a segment evaluates, and where), built on first use."""
    key = key + (part, partitions, strategy)
    found = _EVALUATORS.get(key)
    if found is None:
        if len(_EVALUATORS) > 256:
            _EVALUATORS.clear()
        found = _EVALUATORS[key] = PartitionEvaluator(Topology.from_dict(json.loads(topology_json)),
                                                       part, partitions, strategy)
    return found


# --- one segment of a micro-batch, as a task runs it ---------------------------------------------------------
#: the fields of a row between the passes of a micro-batch (``spark.rules.SEGMENT_COLUMNS``)
ROW_FIELDS = ("kind", "time", "sig", "atom", "args", "persistent", "src", "source", "line", "stamp", "atoms", "text",
              "reason", "part")
#: row kinds besides CURRENT and HISTORY: derived atom, rejected record, per-source statistics of the batch's
#: lines, a record of the batch as the first pass judges it (its source, place, time point), the bounds every
#: partition of a pass receives (also what makes each partition a task), and what the last pass emits
DERIVED, REJECTED, STATS, RECORD, BOUNDS = "d", "x", "s", "r", "b"
#: a time point that records accepted in an earlier micro-batch reached (they wait in the store), sent to every
#: partition of the first pass: with the batch's accepted records, the time points whose models are output
POINT = "q"
#: the signature of a derived row that marks a time point whose choice part has no answer set (no atom: it
#: passes through the later segments to the last, whose model of that time point is then "no answer")
UNSATISFIABLE = "#unsatisfiable"
MODEL, KEPT_HISTORY, PENDING, META, METRICS = "model", "history", "pending", "meta", "metrics"


@dataclass(frozen=True)
class SegmentSpec:
    """What a pass of one segment needs that is the same every micro-batch."""
    index: int
    last: bool
    partitions: int                     # of this segment (1 when unkeyed)
    next_partitions: int                # of the next segment (0 for the last)
    reads: frozenset                    # "p/n" its stages read
    observed: frozenset                 # "p/n" its windows observe
    reach: int                          # how far back its windows look
    with_args: frozenset                # "p/n" whose argument texts a later reader routes by
    observed_all: frozenset             # every observed predicate (the history keeps them)
    max_reach: int
    shows: frozenset | None             # None: every atom is shown
    shown_background: tuple             # background atoms of the model (shown)
    print_empty: bool = True            # the time points no record reached are output too


@dataclass(frozen=True)
class BatchPlan:
    """What a pass of one micro-batch needs from the driver: the store's meta before the batch."""
    closed: int                         # the last evaluated time point
    clocks: dict                        # source -> its SourceClock as JSON (``ir.lateness``)
    n_sources: int
    lateness: int | None
    fixed_hi: int | None = None         # evaluate up to here (end of input) instead of what the sources completed
    clock_origin: tuple | None = None
    max_gap: int | None = None
    #: the last pass writes the history it was given again (a snapshot) besides its evaluated time points' (a delta)
    snapshot: bool = True
    #: the stream's first time point, its earliest accepted record's (None: no record accepted yet)
    first: int | None = None
    #: evaluate up to here, the batch's records judged as usual (a chain, which closes time points itself)
    upto: int | None = None


def record_order(src, fo, source, line) -> tuple:
    """A record's place in its source's input order: a directory's files by modification time then name (the
    order of ``io.sources.stream_files``; Spark names files by URI), then the line (for a socket, its
    arrival number)."""
    name = unquote(source.rsplit("/", 1)[-1]) if source else ""
    return src, fo if fo is not None else 0, name, line if line is not None else 0


def judge(plan: BatchPlan, records, stats) -> tuple[int, dict, dict]:
    """Decide which of the batch's records are late or too far ahead, record by record in each source's input
    order from the clocks the previous batch left (``ir.lateness``), and the last time point to evaluate:
    every time point no unfinished source may still send a record for (``SourceClock.bound``). ``records``:
    (src, fo, source, line, time, whole, atoms) of the batch's timed records; ``stats``: (src, JSON) per parse
    task. Returns (the last time point to evaluate, the batch's meta (with the stream's first time point: the
    earliest accepted record's, which an accepted record can lower only while nothing is evaluated), (src,
    source, line) -> reason of the rejected records); every partition of the first pass computes the same."""
    clocks = {int(k): SourceClock.from_json(v) for k, v in plan.clocks.items()}
    counts = {"atoms": 0, "malformed": 0, "late": 0}
    for _src, text in stats:
        counts["malformed"] += int(json.loads(text).get("malformed") or 0)
    rejected = {}
    first = plan.first
    for src, fo, source, line, time, whole, atoms in sorted(records, key=lambda r: record_order(*r[:4])):
        clock = clocks.setdefault(src, SourceClock())
        why = clock.late(time, plan.lateness)
        if why is not None:
            counts["late"] += 1
        else:
            why = clock.ahead(time, plan.max_gap)
            if why is not None:
                counts["malformed"] += 1
        if why is not None:
            rejected[(src, source, line)] = why
            continue
        clock.accept(time, whole)
        counts["atoms"] += atoms
        first = time if first is None else min(first, time)
    hi = plan.closed
    if plan.fixed_hi is not None:
        hi = plan.fixed_hi
    elif plan.upto is not None:
        hi = max(plan.closed, plan.upto)
    elif plan.lateness is not None and sum(c.latest is not None for c in clocks.values()) >= plan.n_sources:
        hi = max(plan.closed, min(c.bound(plan.lateness) for c in clocks.values()) - 1)
    meta = {"hi": hi, "first": first, "clocks": {str(k): c.to_json() for k, c in sorted(clocks.items())}, **counts}
    return hi, meta, rejected


def _stamp_key(src, source, line) -> tuple:
    """A record's order for the time point's first timestamp, NULLs first as Spark orders a struct."""
    return tuple((0,) if v is None else (1, v) for v in (src, source, line))


def segment_pass(spec: SegmentSpec, plan: BatchPlan, part: int, rows, ev: "PartitionEvaluator | None",
                 continues: bool = False, check=None) -> list[tuple]:
    """One partition of one segment in a micro-batch: rows in, rows out (``ROW_FIELDS`` tuples).

    Every row passes through every segment, so the last one sees all of the batch: it decides what is evaluated
    (the first segment computes the bounds from the statistics rows, later ones read them from a bounds row),
    evaluates time points ``closed + 1 .. hi`` (from the stream's first time point on) with ``ev``, and the last
    segment turns the rows into what the store keeps: its partition's part of each model (atoms, first timestamp,
    whether a record reached it), the history the next batch's windows read (the evaluated time points', and the
    history given too where ``plan.snapshot``), the records still waiting, the meta and metrics rows. ``check``
    is called before each time point evaluated (a driver stopping its query)."""
    rows = list(rows)
    hi = None
    first = plan.first
    stats, records = [], []
    recorded: set = set()       # the time points records reached
    for r in rows:
        if r[0] == BOUNDS and r[1] is not None:
            hi = int(r[1])
            if r[8] is not None:
                first = int(r[8])
            if r[4] is not None:
                recorded.update(int(t) for t in r[4])
        elif r[0] == POINT:
            recorded.add(int(r[1]))
        elif r[0] == STATS:
            stats.append((int(r[6]), r[11]))
        elif r[0] == RECORD:
            records.append((r[6], int(r[4][0]) if r[4][0] else None, r[7], r[8], r[1], r[5], int(r[4][1])))
    out = []
    if spec.index == 0 and hi is None:
        hi, meta, rejected = judge(plan, records, stats)
        first = meta["first"]
        recorded.update(r[4] for r in records if (r[0], r[2], r[3]) not in rejected)
        if part == 0:
            out.append(_row(META, text=json.dumps(meta)))
        if rejected or records:
            rows = _without_rejected(rows, rejected, out)
    lo = plan.closed + 1 if first is None else max(plan.closed + 1, first)
    recorded = sorted(t for t in recorded if lo <= t <= hi)
    # the last pass outputs the models of the time points records reached (all with print_empty) and keeps the
    # history its windows reach: of a stretch jumped over, only those time points' atoms are needed there
    wanted = (recorded, hi - spec.max_reach) if spec.last and not spec.print_empty else None
    ev_rows = []
    for kind, time, sig, atom, _args, keeps, *_rest in rows:
        if atom is None:
            continue
        if kind in (CURRENT, DERIVED) and lo <= time <= hi and sig in spec.reads:
            ev_rows.append((CURRENT, time, atom, keeps))
        elif kind == HISTORY and sig in spec.observed and time >= lo - spec.reach:
            ev_rows.append((HISTORY, time, atom, True))
    derived = ev.run(lo, hi, ev_rows, spec.with_args, plan.clock_origin, continues, first, check, wanted) \
        if hi >= lo and ev is not None else []
    records_in = sum(1 for r in ev_rows if r[0] == CURRENT)
    out.append(_row(METRICS, args=[str(records_in), str(len(derived))], line=spec.index))
    new = [_row(DERIVED, t, sig, text, args, keeps) for t, sig, text, keeps, args in derived]
    if not spec.last:
        out.extend(r[:-1] + (None,) for r in rows if r[0] not in (STATS, BOUNDS, RECORD, POINT))
        out.extend(new)
        if part == 0:
            times = [str(t) for t in recorded]
            out.extend(_row(BOUNDS, hi, args=times, line=first, part=p) for p in range(spec.next_partitions))
        return out
    cut = hi - spec.max_reach
    snapshot = plan.snapshot
    shows = spec.shows
    models: dict = {}      # time -> [atoms, recorded, first stamp key, stamp, (src, source, line), no answer]
    if part == 0 and spec.print_empty:      # a model for every time point evaluated (else: those rows reached)
        for t in range(lo, hi + 1):
            models[t] = [set(spec.shown_background), False, None, None, (None, None, None), False]
    history = set()
    for r in rows + new:
        kind, time, sig, atom = r[0], r[1], r[2], r[3]
        if kind in (META, METRICS, REJECTED):
            out.append(r[:-1] + (None,))
        elif kind == HISTORY:
            if snapshot and time > cut:
                history.add((time, sig, atom, tuple(r[4]) if r[4] is not None else None))
        elif kind in (CURRENT, DERIVED):
            if time > hi:       # only records wait: a derived atom is always at an evaluated time point
                out.append((PENDING,) + r[1:-1] + (None,))
                continue
            model = models.get(time)
            if model is None:       # the background atoms shown too: this may be the time point's only part
                model = models[time] = [set(spec.shown_background), False, None, None, (None, None, None), False]
            if sig == UNSATISFIABLE:
                model[5] = True
                continue
            if kind == CURRENT:
                model[1] = True
                if r[9] is not None:
                    key = _stamp_key(r[6], r[7], r[8])
                    if model[2] is None or key < model[2]:
                        model[2], model[3], model[4] = key, r[9], (r[6], r[7], r[8])
            if atom is None:
                continue
            if shows is None or sig in shows:
                model[0].add(atom)
            if sig in spec.observed_all and time > cut and (kind == CURRENT or r[5]):
                history.add((time, sig, atom, tuple(r[4]) if r[4] is not None else None))
    for t, (atoms, recorded, _key, stamp, (src, source, line), no_answer) in sorted(models.items()):
        # a time point with no answer set shows no atom (``Reasoner.shown``); its reason says so to the merge
        out.append(_row(MODEL, t, persistent=recorded, src=src, source=source, line=line, stamp=stamp,
                        atoms=[] if no_answer else sorted(atoms), reason=UNSATISFIABLE if no_answer else None))
    out.extend(_row(KEPT_HISTORY, t, sig, atom, list(args) if args is not None else None)
               for t, sig, atom, args in sorted(history, key=lambda h: (h[0], h[1], h[2])))
    return out


def _without_rejected(rows, rejected: dict, out: list) -> list:
    """The rows of the first pass without the atoms of rejected records; the rejected record is emitted (into
    ``out``) by the partition holding its first row, the one that carries its text (``parse_pass``)."""
    kept = []
    for r in rows:
        if r[0] == CURRENT and r[11] is not None:      # a record's first row, from this batch's parse
            why = rejected.get((r[6], r[7], r[8]))
            if why is not None:
                line = None if r[7] is not None and r[7].startswith("tcp://") else r[8]   # a socket's: no lines
                out.append(_row(REJECTED, source=r[7], line=line, text=r[11], reason=why))
                continue
            r = r[:11] + (None,) + r[12:]
        elif r[0] == CURRENT and (r[6], r[7], r[8]) in rejected:
            continue
        elif r[0] == RECORD:
            continue
        kept.append(r)
    return kept


def _row(kind, time=None, sig=None, atom=None, args=None, persistent=None, src=None, source=None, line=None,
         stamp=None, atoms=None, text=None, reason=None, part=None) -> tuple:
    return (kind, time, sig, atom, args, persistent, src, source, line, stamp, atoms, text, reason, part)


#: a socket record's line: its arrival number within the batch, after the batch id (unique across batches; a
#: socket's rejected records have no line)
SOCKET_LINE = 1 << 32


def parse_pass(lines, origin: dict, unit_us: int, number_scale, width: int, batch: int = 0) -> Iterator[tuple]:
    """The batch's lines (src, file, line, text, stream format, duplicates, file order) as rows (``ROW_FIELDS``):
    one per atom of a timed record (one without an atom for a record without atoms; the first carries the
    line's text), one per malformed line, and per record its place, time point and wholeness for the first
    pass, which judges lateness in each source's order (``judge``), once for each of its ``width`` partitions,
    and per source its statistics likewise. ``origin``: source -> the (kind, value) of its time point 0. A
    socket's lines (no line numbers) come in one partition in arrival order: they are numbered here."""
    stats: dict = {}
    arrived = 0
    for src, file, number, raw, fmt, duplicates, fo in lines:
        raw = raw if raw is not None else ""
        if number is None:      # a socket's line: its arrival number, after the batch id
            number = batch * SOCKET_LINE + arrived
            arrived += 1
        found = record_row(raw, fmt, duplicates)
        if found is None:
            continue
        kind, value, stamp, atoms, whole, reason = found
        entry = stats.setdefault(src, {"malformed": 0})
        if reason is None:
            try:
                time = value if kind == GIVEN else time_point_of(tuple(origin[src]), kind, value, unit_us,
                                                                  number_scale)
                if time < 0:
                    raise RecordError(f"time point {time} is before the first record")
            except RecordError as error:
                reason = error.message
        text = raw.rstrip("\r\n")[:2000]
        if reason is not None:
            entry["malformed"] += 1
            line = None if file is not None and file.startswith("tcp://") else number
            yield _row(REJECTED, source=file, line=line, text=text, reason=reason)
            continue
        record = [str(fo) if fo is not None else "", str(len(atoms))]
        for p in range(width):
            yield _row(RECORD, time, args=record, persistent=whole, src=src, source=file, line=number, part=p)
        if not atoms:
            yield _row(CURRENT, time, persistent=True, src=src, source=file, line=number, stamp=stamp, text=text)
        for i, (sig, atom_text, args) in enumerate(atoms):
            yield _row(CURRENT, time, sig, atom_text, args, True, src, file, number, stamp, text=None if i else text)
    for src, entry in sorted(stats.items()):
        text = json.dumps(entry)
        for p in range(width):
            yield _row(STATS, src=src, text=text, part=p)
