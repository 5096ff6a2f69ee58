"""The closing of a window of cached tuples as array operations (numpy): what every columnar plan runs, the local
runner's columnar plan, Spark's executors (one partition of subjects at a time) and Spark's driver (a small
micro-batch).

It computes what the Spark plan's closing statement computes (the fused plan's framed window): for every closing
row c (time in [lo, hi)) and every row o of the same stage and subject with c.time - w <= o.time <= c.time (c
itself and its peers of the same time included; any earlier time with an unbounded window), a match when the stage
has a conjunction op on (c's concept, o's concept). The report of (subject, time) is the least match in the order
of docs/consistency.md ("Which NI and evidence a report names"): NI pair, how far back the earlier evidence is, its
asserted concept, the later one's, the stage. Where the ids' widths fit (``ir.lookup.choice_bits``) the match is
one packed BIGINT (``ir.lookup.Packing``, the key the Spark write takes the minimum of), otherwise the five fields
are compared in turn.

Rows are sorted by (stage, subject, time) and each closing row is swept back one offset at a time: the rows k
places before it that are still in its window. The work is the number of pairs in reach, as with the framed
window; rows older than the closing range are only ever looked at from a closing row.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from srtopo.io.tnt import TIME_MIN
from srtopo.ir.lookup import Packing

NO_KEY = np.iinfo(np.int64).max


class PairTable:
    """(stage, concept, concept) -> pair id of the stage's conjunction op, looked up by binary search over the
    packed triples. Both orientations of an op are listed, with one pair id (``ir.lookup.build_tables``)."""

    #: up to this many (stage, concept, concept) triples the table is an array indexed by the packed triple
    DENSE = 1 << 22

    def __init__(self, pairs: list, n_concepts: int):
        self.n = max(1, int(n_concepts))
        codes = np.array([(k * self.n + a) * self.n + b for k, a, b, _ in pairs], dtype=np.int64)
        order = np.argsort(codes, kind="stable")
        self.codes = codes[order]
        self.pids = np.array([p for *_, p in pairs], dtype=np.int64)[order]
        stages = 1 + max((k for k, *_ in pairs), default=0)
        self.dense = None
        if stages * self.n * self.n <= self.DENSE:
            self.dense = np.full(stages * self.n * self.n, -1, dtype=np.int64)
            self.dense[self.codes] = self.pids

    def lookup(self, stage, c1, c2):
        """The pair ids of the triples (-1: no op)."""
        if not len(self.codes):
            return np.full(len(stage), -1, dtype=np.int64)
        code = (stage * self.n + c1) * self.n + c2
        if self.dense is not None:
            inside = code < len(self.dense)
            return np.where(inside, self.dense[np.where(inside, code, 0)], -1)
        at = np.minimum(np.searchsorted(self.codes, code), len(self.codes) - 1)
        return np.where(self.codes[at] == code, self.pids[at], -1)


@dataclass(frozen=True)
class Closed:
    """The reports of a closing, one per (subject, time): the subject's code, the time and the least violation's
    fields: stage, NI pair id, how far back the earlier evidence is (``back``, unsigned: exact for any two 64-bit
    times), the earlier evidence's asserted concept id and the later one's (at the report's time)."""
    subject: np.ndarray
    time: np.ndarray
    stage: np.ndarray
    pid: np.ndarray
    back: np.ndarray
    a1: np.ndarray
    a2: np.ndarray

    def __len__(self) -> int:
        return len(self.time)

    def take(self, order: np.ndarray) -> "Closed":
        """The reports in ``order`` (indices)."""
        return Closed(*(a[order] for a in (self.subject, self.time, self.stage, self.pid, self.back, self.a1,
                                            self.a2)))

    @property
    def earlier(self) -> np.ndarray:
        """The earlier evidence's time (``time - back``, computed without leaving 64 bits)."""
        return (self.time.view(np.uint64) - self.back).view(np.int64)


def _empty() -> Closed:
    z = np.zeros(0, dtype=np.int64)
    return Closed(z, z, z, z, z.view(np.uint64), z, z)


def close(stage, subject, cid, aid, time, lo: int, hi: int, window: int | None, pairs: PairTable,
          bits: tuple[int, int, int, int] | None = None) -> Closed:
    """Reports closing in [lo, hi) among the rows (int arrays; ``subject`` as codes): rows outside [lo - window, hi)
    (below hi with an unbounded window) are ignored. ``bits``: the packed key's widths (``ir.lookup.choice_bits``;
    None compares the fields in turn). Times take the whole 64-bit range and ``lo``, ``hi`` are Python integers in
    [-2^63, 2^63]: nothing here computes a time outside 64 bits (numpy's int64 wraps without a word)."""
    if lo >= hi:
        return _empty()
    time = np.asarray(time)
    reach = TIME_MIN if window is None else max(lo - int(window), TIME_MIN)
    inside = (time >= reach) & (time <= hi - 1)
    stage, subject, cid, aid, time = (np.asarray(a)[inside].astype(np.int64) for a in (stage, subject, cid, aid, time))
    n = len(time)
    if not n:
        return _empty()
    order = _order(stage, subject, time)
    stage, subject, cid, aid, time = stage[order], subject[order], cid[order], aid[order], time[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = (stage[1:] != stage[:-1]) | (subject[1:] != subject[:-1])
    group = np.cumsum(starts)
    # as unsigned integers the difference of a later time and an earlier one is exact, however far apart they are
    unsigned = time.view(np.uint64)
    w = None if window is None else np.uint64(int(window))
    packing = Packing.of(bits) if bits is not None else None
    if packing is not None:
        best = np.full(n, NO_KEY, dtype=np.int64)
    else:
        best = (np.full(n, NO_KEY, dtype=np.int64), np.full(n, np.iinfo(np.uint64).max, dtype=np.uint64),
                np.full(n, NO_KEY, dtype=np.int64), np.full(n, NO_KEY, dtype=np.int64),
                np.full(n, NO_KEY, dtype=np.int64))

    def match(c, o):
        """Matches of closing rows c with rows o in c's window, o no later than c (index arrays of one length, c
        without repeats)."""
        pid = pairs.lookup(stage[c], cid[c], cid[o])
        found = pid >= 0
        c, o, pid = c[found], o[found], pid[found]
        if not len(c):
            return
        # evidence (time, asserted concept): the earlier one first; the later one is at the report's time, the
        # earlier one is kept as its distance back from it
        first = (time[o] < time[c]) | (aid[o] <= aid[c])
        a1, a2 = np.where(first, aid[o], aid[c]), np.where(first, aid[c], aid[o])
        back = unsigned[c] - unsigned[o]
        if packing is not None:
            key = ((pid << packing.pid) + (back.astype(np.int64) << packing.back) + (a1 << packing.a1)
                   + (a2 << packing.a2) + (stage[c] << packing.stage))
            best[c] = np.minimum(best[c], key)
            return
        found = (pid, back, a1, a2, stage[c])
        less = _lexless(found, tuple(b[c] for b in best))
        c = c[less]
        for b, value in zip(best, found):
            b[c] = value[less]

    active = np.flatnonzero(time >= lo)      # the closing rows
    match(active, active)                    # each with itself (an unsatisfiable concept)
    k = 1
    while len(active):
        active = active[active >= k]
        back = active - k
        near = group[active] == group[back]
        if w is not None:
            near &= unsigned[active] - unsigned[back] <= w
        active, back = active[near], back[near]
        if not len(active):
            break
        # the later row closes with the earlier one; a peer of the same time closes with this row too, with the
        # same key (the stage's ops hold both orientations under one pair id): the same report, nothing to add
        match(active, back)
        k += 1
    key = best if packing is not None else best[0]
    hit = np.flatnonzero(key != NO_KEY)
    s, t = subject[hit], time[hit]
    if packing is not None:
        key = key[hit]
        order = np.lexsort((key, t, s))
        fields = _unpack(key, packing, bits)
    else:
        fields = tuple(b[hit] for b in best)
        order = np.lexsort(tuple(reversed(fields)) + (t, s))
    s, t = s[order], t[order]
    fields = [f[order] for f in fields]
    # one report per (subject, time) over every stage: the least
    first = np.ones(len(t), dtype=bool)
    first[1:] = (s[1:] != s[:-1]) | (t[1:] != t[:-1])
    pid, back, a1, a2, st = (f[first] for f in fields)
    return Closed(s[first], t[first], st, pid, back.astype(np.uint64), a1, a2)


def _lexless(a: tuple, b: tuple) -> np.ndarray:
    """Where tuple of arrays ``a`` is less than ``b``, compared field by field."""
    less = np.zeros(len(a[0]), dtype=bool)
    equal = np.ones(len(a[0]), dtype=bool)
    for x, y in zip(a, b):
        less |= equal & (x < y)
        equal &= x == y
    return less


def _unpack(key, packing: Packing, bits: tuple[int, int, int, int]) -> tuple:
    """(pid, back, a1, a2, stage) of packed keys."""
    sb, pb, db, ab = bits

    def field(shift, width):
        return (key >> shift) & ((1 << width) - 1)
    return (field(packing.pid, pb), field(packing.back, db), field(packing.a1, ab), field(packing.a2, ab),
            field(packing.stage, sb))


def _order(stage, subject, time):
    """The rows' order by (stage, subject, time): one sort of a packed key where it fits in 63 bits, else a sort
    on the three keys (three times slower on 2M rows)."""
    span = int(time.max()) - int(time.min()) if len(time) else 0      # Python integers: the span may exceed 64 bits
    groups = (int(stage.max()) + 1) * (int(subject.max()) + 1) if len(time) else 1
    bits = span.bit_length()
    if groups.bit_length() + bits <= 62:
        return np.argsort(((stage * (int(subject.max()) + 1) + subject) << bits) + (time - time.min()), kind="stable")
    return np.lexsort((time, subject, stage))
