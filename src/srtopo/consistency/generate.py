"""Class streams with planted violations, deterministic under a seed: the set-up of "Distributed Stream
Consistency Checking" (section 5), used by ``srtopo calibrate`` and by the experiments.

:func:`class_streams` makes one stream per named class of the TBox, every stream at the same rate (``rate`` tuples
per time point), individuals drawn so that a fraction ``violation`` of all tuples violate some NI. An individual
has a *home* class H (a satisfiable class) and is asserted only in the streams of H's superclasses, so on its own
it is consistent. A violating tuple for stream C at time t takes an individual y that the stream of a class H
conflicting with C emitted at t or t-1 (so inside any window w >= 1) and asserts y : C; y is then retired (never
used again). Hence every violating tuple causes exactly one report, at (y, t), and no other tuple causes one: the
expected report set is known (``planted``) and the runners are checked against it. Streams of classes that can
conflict with nothing never violate; the others violate with probability
``violation * n_streams / n_conflicting_streams`` so that the overall fraction is ``violation``.

Tuples are :class:`StreamTuple` in arrival order; ``srtopo.io.tnt.write_tnt`` writes them as timestamped
N-Triples files that every runner reads.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from srtopo.concepts import is_exists, local_name
from srtopo.consistency.nis import NIAnalysis, pair
from srtopo.ir.records import StreamTuple

SUBJECT_BASE = "http://example.org/stream/"


@dataclass
class GeneratedStream:
    tuples: list[StreamTuple]
    planted: set[tuple[str, int]]               # (subject, time) of every violating tuple
    streams: int                                  # number of class streams
    conflicting_streams: int                      # streams that can violate an NI
    time_points: int
    params: dict = field(default_factory=dict)

    @property
    def violation_fraction(self) -> float:
        return len(self.planted) / max(1, len(self.tuples))


def named_classes(analysis: NIAnalysis) -> list[str]:
    return sorted(c for c in analysis.tbox.concepts if not is_exists(c))


def uniform_rates(analysis: NIAnalysis) -> dict[str, float]:
    """The rates of the class streams: every named class at the same rate (what the cost model weighs loads by)."""
    return {c: 1.0 for c in named_classes(analysis)}


def conflict_tables(analysis: NIAnalysis, classes: list[str]):
    h = analysis.hierarchy
    unsat = analysis.unsatisfiable
    closure = analysis.closure
    reps = {c: h.rep(c) for c in classes}
    satisfiable = [c for c in classes if c not in unsat]
    homes = {c: [d for d in satisfiable if h.is_sub(d, c)] for c in classes}
    conflicting = {c: [d for d in satisfiable if pair(reps[c], reps[d]) in closure] for c in classes}
    return homes, conflicting, unsat


def class_streams(analysis: NIAnalysis, *, time_points: int, rate: int = 1, violation: float = 0.01,
                  seed: int = 0, pool: int = 20, classes: list[str] | None = None,
                  subject_base: str = SUBJECT_BASE) -> GeneratedStream:
    """One stream per class at ``rate`` tuples per time point; see the module docstring."""
    if not 0.0 <= violation <= 1.0:
        raise ValueError(f"violation fraction must be in [0, 1], got {violation}")
    rng = random.Random(seed)
    classes = classes or named_classes(analysis)
    homes, conflicting, unsat = conflict_tables(analysis, classes)
    can_violate = [c for c in classes if conflicting[c] or c in unsat]
    p_violate = min(1.0, violation * len(classes) / max(1, len(can_violate)))
    counter = [0]
    pools: dict[str, list[str]] = {}

    def fresh(home: str) -> str:
        counter[0] += 1
        return f"{subject_base}{local_name(home)}/i{counter[0]}"

    def pool_of(home: str) -> list[str]:
        if home not in pools:
            pools[home] = [fresh(home) for _ in range(pool)]
        return pools[home]

    retired: set[str] = set()
    home_of: dict[str, str] = {}
    tuples: list[StreamTuple] = []
    planted: set[tuple[str, int]] = set()
    recent_prev: dict[str, list[str]] = {}
    for t in range(time_points):
        recent_now: dict[str, list[str]] = {}
        order = [c for c in classes for _ in range(rate)]
        rng.shuffle(order)
        for c in order:
            subject = None
            if c in can_violate and rng.random() < p_violate:
                if c in unsat:
                    subject = fresh(c)
                    retired.add(subject)
                else:
                    candidates = conflicting[c]
                    for _ in range(8):
                        h = rng.choice(candidates)
                        recent = [s for s in recent_now.get(h, []) + recent_prev.get(h, []) if s not in retired]
                        if recent:
                            subject = rng.choice(recent)
                            break
                if subject is not None:
                    retired.add(subject)
                    home = home_of.get(subject)
                    if home is not None:   # replace the retired individual in its pool
                        members = pools[home]
                        members[members.index(subject)] = fresh(home)
                    planted.add((subject, t))
            if subject is None:
                if c in unsat or not homes[c]:
                    continue   # an unsatisfiable class has no consistent individual
                home = rng.choice(homes[c])
                subject = rng.choice(pool_of(home))
                home_of[subject] = home
            tuples.append(StreamTuple(subject, c, t, c))
            recent_now.setdefault(c, []).append(subject)
        recent_prev = recent_now
    return GeneratedStream(tuples, planted, len(classes), len(can_violate), time_points,
                           {"time_points": time_points, "rate": rate, "violation": violation, "seed": seed,
                            "pool": pool})
