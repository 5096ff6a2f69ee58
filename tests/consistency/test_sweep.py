"""The closing of a window as array operations (consistency.sweep) against a brute force over every pair of rows,
on random rows with fixed seeds: the same reports, each naming the least violation in the order of
docs/consistency.md (NI pair, how far back the earlier evidence is, its concept, the later one's, the stage),
with the packed key and with the fields compared in turn, for bounded and unbounded windows."""
import random

import numpy as np
import pytest

from srtopo.consistency.sweep import PairTable, close


def brute_force(rows, lo, hi, w, pairs):
    """(subject, time) -> the least (pid, back, earlier aid, later aid, stage) over every closing row and every row
    in its window (every earlier row of the subject when ``w`` is None)."""
    pid = {(k, a, b): p for k, a, b, p in pairs}
    best = {}
    for c in rows:
        sc, kc, cc, ac, tc = c
        if not lo <= tc < hi:
            continue
        for o in rows:
            so, ko, co, ao, to = o
            if so != sc or ko != kc or to > tc or to >= hi:
                continue
            if w is not None and (tc - to > w or to < lo - w):
                continue
            p = pid.get((kc, cc, co))
            if p is None:
                continue
            e1, e2 = sorted([(tc, ac), (to, ao)])
            key = (p, tc - e1[0], e1[1], e2[1], kc)
            best[(sc, tc)] = min(best.get((sc, tc), key), key)
    return best


def swept(closed):
    """(subject, time) -> (pid, back, earlier aid, later aid, stage) of the sweep's reports."""
    assert (closed.earlier.astype(object) == closed.time.astype(object) - closed.back.astype(object)).all()
    return {(s, t): (p, b, x, y, k) for s, t, p, b, x, y, k in
            zip(*(a.tolist() for a in (closed.subject, closed.time, closed.pid, closed.back, closed.a1, closed.a2,
                                       closed.stage)))}


def _bits(stages, w, asserted):
    return (max(1, (stages - 1).bit_length()), 2, max(1, w.bit_length()), max(1, (asserted - 1).bit_length()))


@pytest.mark.parametrize("packed", [True, False], ids=["packed", "fields"])
@pytest.mark.parametrize("dense", [True, False])
def test_the_sweep_closes_as_a_brute_force_does(dense, packed, monkeypatch):
    """Pair ids from an array or by binary search; rows ordered by one packed key, or by three (times far apart);
    bounded and unbounded windows (whose choice compares the fields in turn)."""
    if not dense:
        monkeypatch.setattr(PairTable, "DENSE", 0)
    rng = random.Random(43)
    for case in range(120):
        stages, concepts, asserted = rng.randint(1, 3), rng.randint(2, 8), rng.randint(2, 6)
        w = None if case % 5 == 4 else rng.randint(0, 6)
        ops = {}         # an op's two orientations share its pair id (``ir.lookup.build_tables``)
        for _ in range(rng.randint(0, 10)):
            k, a, b = rng.randrange(stages), rng.randrange(concepts), rng.randrange(concepts)
            ops[(k, min(a, b), max(a, b))] = rng.randrange(4)
        pairs = sorted({(k, x, y, p) for (k, a, b), p in ops.items() for x, y in ((a, b), (b, a))})
        bits = _bits(stages, w, asserted) if packed and w is not None else None
        far = 2 ** 61 if case % 4 == 3 else 0       # beyond what one packed sort key holds
        rows = [(rng.randrange(5), rng.randrange(stages), rng.randrange(concepts), rng.randrange(asserted),
                 rng.randint(-5, 25) + rng.choice([0, far])) for _ in range(rng.randint(0, 80))]
        lo, hi = rng.randint(-3, 10), rng.randint(5, 30) + far
        cols = [np.array([r[i] for r in rows], dtype=np.int64) for i in range(5)]
        closed = close(cols[1], cols[0], cols[2], cols[3], cols[4], lo, hi, w, PairTable(pairs, concepts), bits)
        assert swept(closed) == brute_force(rows, lo, hi, w, pairs), case


def test_a_crowded_subject_is_swept_to_the_edge_of_its_window():
    """One subject with many rows in reach: every offset up to the window's width is looked at."""
    n, w = 400, 1000
    time = np.arange(n, dtype=np.int64)
    cid = np.zeros(n, dtype=np.int64)
    cid[0] = 1                                   # only the first row conflicts with the others
    pairs = [(0, 0, 1, 0), (0, 1, 0, 0)]
    closed = close(np.zeros(n), np.zeros(n), cid, np.zeros(n), time, 0, n, w, PairTable(pairs, 2), (1, 1, 10, 1))
    assert closed.time.tolist() == list(range(1, n))
    unbounded = close(np.zeros(n), np.zeros(n), cid, np.zeros(n), time, 0, n, None, PairTable(pairs, 2))
    assert unbounded.time.tolist() == list(range(1, n)) and unbounded.back.tolist() == list(range(1, n))


@pytest.mark.parametrize("window", ["bounded", "unbounded"])
@pytest.mark.parametrize("dense", [True, False])
def test_times_at_the_ends_of_the_64_bit_range(dense, window, monkeypatch):
    """Rows down to -2^63 (where a closing row's t - w has no 64-bit value) and up to 2^63 - 1, in one subject
    too (the difference of its times has none either), closed from the least time to past the greatest."""
    if not dense:
        monkeypatch.setattr(PairTable, "DENSE", 0)
    rng = random.Random(44)
    low, high = -2 ** 63, 2 ** 63 - 1
    for case in range(60):
        w = rng.randint(0, 6) if window == "bounded" else None
        pairs = [(0, 0, 1, 0), (0, 1, 0, 0), (0, 2, 2, 1)]
        bits = (1, 1, max(1, w.bit_length()), 2) if w is not None else None
        rows = [(rng.randrange(3), 0, rng.randrange(3), rng.randrange(4),
                 rng.choice([low + rng.randint(0, 12), high - rng.randint(0, 12), rng.randint(-5, 5)]))
                for _ in range(rng.randint(1, 60))]
        lo = rng.choice([low, low + rng.randint(0, 8), 0])
        hi = rng.choice([2 ** 63, high - rng.randint(0, 8), 1])
        cols = [np.array([r[i] for r in rows], dtype=np.int64) for i in range(5)]
        closed = close(cols[1], cols[0], cols[2], cols[3], cols[4], lo, hi, w, PairTable(pairs, 3), bits)
        assert swept(closed) == brute_force(rows, lo, hi, w, pairs), case
