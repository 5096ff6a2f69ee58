"""The closing of a window as array operations (spark.sweep) against a brute force over every pair of rows,
on random rows with fixed seeds: the same reports, each naming the least violation in the order of
docs/consistency.md (NI pair, how far back the earlier evidence is, its concept, the later one's, the stage)."""
import random

import numpy as np
import pytest

from srtopo.runners.spark.sql import Packing
from srtopo.runners.spark.sweep import PairTable, close, unpack


def brute_force(rows, lo, hi, w, pairs):
    """(subject, time) -> the least (pid, back, earlier aid, later aid, stage) over every closing row and every row
    in its window."""
    pid = {(k, a, b): p for k, a, b, p in pairs}
    best = {}
    for c in rows:
        sc, kc, cc, ac, tc = c
        if not lo <= tc < hi:
            continue
        for o in rows:
            so, ko, co, ao, to = o
            if so != sc or ko != kc or not (tc - w <= to <= tc) or to < lo - w or to >= hi:
                continue
            p = pid.get((kc, cc, co))
            if p is None:
                continue
            e1, e2 = sorted([(tc, ac), (to, ao)])
            key = (p, tc - e1[0], e1[1], e2[1], kc)
            best[(sc, tc)] = min(best.get((sc, tc), key), key)
    return best


def swept(closed, packing, bits):
    """(subject, time) -> (pid, back, earlier aid, later aid, stage), unpacked from the sweep's keys."""
    stage, pid, a1, t1, a2, t2 = (x.tolist() for x in unpack(closed.key, closed.time, packing, bits))
    times = closed.time.tolist()
    assert t2 == times
    return {(s, t): (p, t - e, x, y, k)
            for s, t, p, e, x, y, k in zip(closed.subject.tolist(), times, pid, t1, a1, a2, stage)}


@pytest.mark.parametrize("dense", [True, False])
def test_the_sweep_closes_as_a_brute_force_does(dense, monkeypatch):
    """Pair ids from an array or by binary search; rows ordered by one packed key, or by three (times far apart)."""
    if not dense:
        monkeypatch.setattr(PairTable, "DENSE", 0)
    rng = random.Random(43)
    for case in range(80):
        stages, concepts, asserted = rng.randint(1, 3), rng.randint(2, 8), rng.randint(2, 6)
        w = rng.randint(0, 6)
        pairs = set()
        for _ in range(rng.randint(0, 10)):
            k, a, b = rng.randrange(stages), rng.randrange(concepts), rng.randrange(concepts)
            p = rng.randrange(4)
            pairs |= {(k, a, b, p), (k, b, a, p)}
        pairs = sorted({(k, a, b): (k, a, b, p) for k, a, b, p in pairs}.values())
        bits = (max(1, (stages - 1).bit_length()), 2, max(1, w.bit_length()), max(1, (asserted - 1).bit_length()))
        packing = Packing.of(bits)
        far = 2 ** 61 if case % 4 == 3 else 0       # beyond what one packed sort key holds
        rows = [(rng.randrange(5), rng.randrange(stages), rng.randrange(concepts), rng.randrange(asserted),
                 rng.randint(-5, 25) + rng.choice([0, far])) for _ in range(rng.randint(0, 80))]
        lo, hi = rng.randint(-3, 10), rng.randint(5, 30) + far
        cols = [np.array([r[i] for r in rows], dtype=np.int64) for i in range(5)]
        closed = close(cols[1], cols[0], cols[2], cols[3], cols[4], lo, hi, w, PairTable(pairs, concepts), packing)
        assert swept(closed, packing, bits) == brute_force(rows, lo, hi, w, pairs), case


def test_a_crowded_subject_is_swept_to_the_edge_of_its_window():
    """One subject with many rows in reach: every offset up to the window's width is looked at."""
    n, w = 400, 1000
    time = np.arange(n, dtype=np.int64)
    cid = np.zeros(n, dtype=np.int64)
    cid[0] = 1                                   # only the first row conflicts with the others
    pairs = [(0, 0, 1, 0), (0, 1, 0, 0)]
    bits = (1, 1, 10, 1)
    closed = close(np.zeros(n), np.zeros(n), cid, np.zeros(n), time, 0, n, w, PairTable(pairs, 2), Packing.of(bits))
    assert closed.time.tolist() == list(range(1, n))


def test_what_is_closed_stays_closed():
    """A batch whose watermark is below the closed bound (a run going on with a larger lateness than the one
    before it) closes nothing, and keeps the bound where it was."""
    from srtopo.ir.lateness import SourceClock
    from srtopo.runners.spark.sql import bounds_for
    clocks = {0: SourceClock(40)}
    assert bounds_for(clocks, 35, 1, None, 5, cur_clocks={0: SourceClock(50)}).hi == 35
    assert bounds_for(clocks, 35, 1, 0, 5, cur_clocks={0: SourceClock(50)}).hi == 50
    b = bounds_for(clocks, 35, 1, 20, 5, cur_clocks={0: SourceClock(50)})
    assert (b.lo, b.hi, b.keep) == (35, 35, 30)


@pytest.mark.parametrize("dense", [True, False])
def test_times_at_the_ends_of_the_64_bit_range(dense, monkeypatch):
    """Rows down to -2^63 (where a closing row's t - w has no 64-bit value) and up to 2^63 - 1, in one subject
    too (the difference of its times has none either), closed from the least time to past the greatest."""
    if not dense:
        monkeypatch.setattr(PairTable, "DENSE", 0)
    rng = random.Random(44)
    low, high = -2 ** 63, 2 ** 63 - 1
    for case in range(60):
        w = rng.randint(0, 6)
        pairs = [(0, 0, 1, 0), (0, 1, 0, 0), (0, 2, 2, 1)]
        bits = (1, 1, max(1, w.bit_length()), 2)
        packing = Packing.of(bits)
        rows = [(rng.randrange(3), 0, rng.randrange(3), rng.randrange(4),
                 rng.choice([low + rng.randint(0, 12), high - rng.randint(0, 12), rng.randint(-5, 5)]))
                for _ in range(rng.randint(1, 60))]
        lo = rng.choice([low, low + rng.randint(0, 8), 0])
        hi = rng.choice([2 ** 63, high - rng.randint(0, 8), 1])
        cols = [np.array([r[i] for r in rows], dtype=np.int64) for i in range(5)]
        closed = close(cols[1], cols[0], cols[2], cols[3], cols[4], lo, hi, w, PairTable(pairs, 3), packing)
        assert swept(closed, packing, bits) == brute_force(rows, lo, hi, w, pairs), case
