"""The closing of a window of cached tuples as array operations (numpy), for a micro-batch small enough to close
on one machine.

It computes what the Spark plan's closing statement computes (``runners.spark.sql.SqlBuilder.reports_sql``, the
fused plan with a bounded window): for every closing row c (time in [lo, hi)) and every row o of the same stage
and subject with c.time - w <= o.time <= c.time (c itself and its peers of the same time included), a match
when the stage has a conjunction op on (c's concept, o's concept); the report of (subject, time) is the match
with the smallest packed key (NI pair, how far back the earlier evidence is, its concept, the later one's, stage:
``sql.Packing``), the key the Spark plan's aggregate takes the minimum of. Rows are swept in (stage, subject, time)
order, one offset at a time: the rows k places back that still lie in the window, so the work is the number of
pairs in reach, as the Spark plan's framed window.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from srtopo.io.tnt import TIME_MIN
from srtopo.runners.spark.sql import Packing

NO_KEY = np.iinfo(np.int64).max


class PairTable:
    """(stage, concept, concept) -> pair id of the stage's conjunction op, looked up by binary search over the
    packed triples. Both orientations of an op are listed, with one pair id (``runners.spark.sql.build_tables``)."""

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
    """The reports of a closing: per report its subject code, time and packed key."""
    subject: np.ndarray
    time: np.ndarray
    key: np.ndarray


def close(stage, subject, cid, aid, time, lo: int, hi: int, window: int, pairs: PairTable,
          packing: Packing) -> Closed:
    """Reports closing in [lo, hi) among the rows (int arrays; ``subject`` as codes): rows outside
    [lo - window, hi) are ignored. Times take the whole 64-bit range and ``lo``, ``hi`` are Python integers in
    [-2^63, 2^63]: nothing here computes a time outside 64 bits (numpy's int64 wraps without a word)."""
    w = int(window)
    empty = np.zeros(0, dtype=np.int64)
    if lo >= hi:
        return Closed(empty, empty, empty)
    time = np.asarray(time)
    inside = (time >= max(lo - w, TIME_MIN)) & (time <= hi - 1)
    stage, subject, cid, aid, time = (np.asarray(a)[inside].astype(np.int64) for a in (stage, subject, cid, aid, time))
    n = len(time)
    if not n:
        return Closed(empty, empty, empty)
    order = _order(stage, subject, time)
    stage, subject, cid, aid, time = stage[order], subject[order], cid[order], aid[order], time[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = (stage[1:] != stage[:-1]) | (subject[1:] != subject[:-1])
    group = np.cumsum(starts)
    closing = time >= lo
    # as unsigned integers the difference of a later time and an earlier one is exact, however far apart they are
    unsigned = time.view(np.uint64)
    best = np.full(n, NO_KEY, dtype=np.int64)

    def match(c, o):
        """Matches of closing rows c with rows o in c's window (index arrays of one length)."""
        keep = closing[c]
        c, o = c[keep], o[keep]
        if not len(c):
            return
        pid = pairs.lookup(stage[c], cid[c], cid[o])
        found = pid >= 0
        c, o, pid = c[found], o[found], pid[found]
        if not len(c):
            return
        # evidence (time, asserted concept) in the order of the Spark plan's struct: the earlier one first; the
        # later one is at the report's time, the earlier one is kept as its distance back from it (in [0, w])
        first = (time[o] < time[c]) | ((time[o] == time[c]) & (aid[o] <= aid[c]))
        e1, e2 = np.where(first, o, c), np.where(first, c, o)
        key = ((pid << packing.pid) + ((time[c] - time[e1]) << packing.back) + (aid[e1] << packing.a1)
               + (aid[e2] << packing.a2) + (stage[c] << packing.stage))
        np.minimum.at(best, c, key)

    active = np.arange(n)
    match(active, active)                   # each row with itself (an unsatisfiable concept)
    k = 1
    active = active[active >= k]
    while len(active):
        back = active - k
        near = (group[active] == group[back]) & (unsigned[active] - unsigned[back] <= np.uint64(w))
        active, back = active[near], back[near]
        if not len(active):
            break
        # the later row closes with the earlier one; a peer of the same time closes with this row too, with the
        # same key (the stage's ops hold both orientations under one pair id): the same report, nothing to add
        match(active, back)
        k += 1
        active = active[active >= k]
    hit = best != NO_KEY
    s, t, key = subject[hit], time[hit], best[hit]
    if not len(key):
        return Closed(s, t, key)
    # one report per (subject, time) over every stage: the smallest key
    order = np.lexsort((key, t, s))
    s, t, key = s[order], t[order], key[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = (s[1:] != s[:-1]) | (t[1:] != t[:-1])
    return Closed(s[first], t[first], key[first])


def _order(stage, subject, time):
    """The rows' order by (stage, subject, time): one sort of a packed key where it fits in 63 bits, else a sort
    on the three keys (three times slower on 2M rows)."""
    span = int(time.max()) - int(time.min()) if len(time) else 0      # Python integers: the span may exceed 64 bits
    groups = (int(stage.max()) + 1) * (int(subject.max()) + 1) if len(time) else 1
    bits = span.bit_length()
    if groups.bit_length() + bits <= 62:
        return np.argsort(((stage * (int(subject.max()) + 1) + subject) << bits) + (time - time.min()), kind="stable")
    return np.lexsort((time, subject, stage))


def unpack(key, time, packing: Packing, bits: tuple[int, int, int, int]):
    """(stage, pid, aid1, time1, aid2, time2) arrays of packed keys of reports at ``time``."""
    sb, pb, db, ab = bits

    def field(shift, width):
        return (key >> shift) & ((1 << width) - 1)
    return (field(packing.stage, sb), field(packing.pid, pb), field(packing.a1, ab), time - field(packing.back, db),
            field(packing.a2, ab), time)
