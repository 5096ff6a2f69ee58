"""n-Queens Completion streams (QC in "Managing caching strategies for stream reasoning with reinforcement
learning", section 4.2); experiments/README.md, "The reconfiguration streams", says how the given queens change
and why every instance stays completable."""
from __future__ import annotations

import random
from collections.abc import Iterable

from experiments.reconfig.zipf import Zipf

#: the project's QC encoding (I-DLV-sr syntax; the board size arrives as the background fact size(N); the
#: ``#external`` line declares which given queens the stream may bring, so a kept solver grounds once)
ENCODING = """\
% n-Queens Completion: one queen per row and column, none on a shared diagonal, the given ones kept.
row(1..N) :- size(N).
#external given(R,C) : row(R), row(C).
1 { queen(R,C) : row(C) } 1 :- row(R).
:- queen(R1,C), queen(R2,C), R1 < R2.
:- queen(R1,C1), queen(R2,C2), R1 < R2, R1 - C1 == R2 - C2.
:- queen(R1,C1), queen(R2,C2), R1 < R2, R1 + C1 == R2 + C2.
:- given(R,C), not queen(R,C).
#show queen/2.
"""

SCHEMA = ("m1", "m2", "m1", "m3")


def complete_placement(n: int, rng: random.Random, max_steps: int = 200_000) -> frozenset:
    """A complete non-attacking placement of n queens ((row, col), 1-based) by min-conflicts from a random start:
    a queen in conflict moves within its column to a row with the fewest conflicts (ties broken at random)."""
    if n in (2, 3) or n < 1:
        raise ValueError(f"no complete placement of {n} queens")
    rows = [rng.randrange(1, n + 1) for _c in range(n)]      # rows[c - 1]: the row of column c's queen
    on_row, diag, anti = {}, {}, {}

    def move(c: int, r: int, k: int) -> None:
        on_row[r] = on_row.get(r, 0) + k
        diag[r - c] = diag.get(r - c, 0) + k
        anti[r + c] = anti.get(r + c, 0) + k

    def conflicts(c: int, r: int) -> int:
        return on_row.get(r, 0) + diag.get(r - c, 0) + anti.get(r + c, 0)

    for c, r in enumerate(rows, start=1):
        move(c, r, 1)
    for _ in range(max_steps):
        bad = [c for c, r in enumerate(rows, start=1) if conflicts(c, r) > 3]
        if not bad:
            return frozenset((r, c) for c, r in enumerate(rows, start=1))
        c = rng.choice(bad)
        move(c, rows[c - 1], -1)
        scores = [conflicts(c, r) for r in range(1, n + 1)]
        best = min(scores)
        rows[c - 1] = rng.choice([r for r, s in enumerate(scores, start=1) if s == best])
        move(c, rows[c - 1], 1)
    raise RuntimeError(f"min-conflicts found no placement of {n} queens in {max_steps} steps")


def rotate(queens: Iterable, n: int) -> frozenset:
    """The board turned 90 degrees counterclockwise: (row, col) -> (n + 1 - col, row)."""
    return frozenset((n + 1 - c, r) for r, c in queens)


def qc_stream(n: int, steps: int = 256, seed: int = 1, alpha: float = 1.35, restore: float = 0.95,
              initial: float = 0.4) -> list[frozenset]:
    """The given queens at each of ``steps`` time points: the initial instance first, then the schema repeated."""
    rng = random.Random(seed)
    solution0 = complete_placement(n, rng)
    given0 = frozenset(rng.sample(sorted(solution0), int(initial * n)))
    columns = Zipf(range(1, n + 1), alpha, rng)
    solution, given = solution0, given0
    out = [given]
    for step in range(1, steps):
        mutation = SCHEMA[(step - 1) % len(SCHEMA)]
        if mutation == "m1":
            solution, given = rotate(solution, n), rotate(given, n)
        elif mutation == "m2":
            taken = {c for _r, c in given}
            column = columns.pick(rng, allowed=lambda c: c not in taken)
            if column is not None:
                given = given | {next(q for q in solution if q[1] == column)}
        elif rng.random() < restore:
            solution, given = solution0, given0
        out.append(given)
    return out


def log_lines(stream: list[frozenset]) -> list[str]:
    """The stream as I-DLV-sr log lines, one per time point (numeric timestamps 0, 1, ...)."""
    return [" ".join([str(t), "; ".join(f"given({r},{c})" for r, c in sorted(given))]).rstrip()
            for t, given in enumerate(stream)]


def program(n: int) -> str:
    """The encoding with the board size as a background fact."""
    return f"size({n}).\n" + ENCODING


def check(n: int, given: Iterable, answer: Iterable) -> list[str]:
    """What is wrong with ``answer`` (the (row, col) of its queens) as a completion of ``given``; [] when valid."""
    queens = set(answer)
    problems = []
    outside = sorted(q for q in queens if not (1 <= q[0] <= n and 1 <= q[1] <= n))
    if outside:
        problems.append(f"queens off the board: {outside}")
    if len(queens) != n:
        problems.append(f"{len(queens)} queens on a {n} x {n} board")
    for what, key in (("row", lambda q: q[0]), ("column", lambda q: q[1]), ("diagonal", lambda q: q[0] - q[1]),
                      ("anti-diagonal", lambda q: q[0] + q[1])):
        seen: dict = {}
        for q in sorted(queens):
            if key(q) in seen:
                problems.append(f"{seen[key(q)]} and {q} share a {what}")
            seen.setdefault(key(q), q)
    missing = sorted(set(given) - queens)
    if missing:
        problems.append(f"given queens not kept: {missing}")
    return problems
