"""Stream generators for the experiments (deterministic under a seed).

* :func:`class_streams` - the paper's set-up: one stream per named class of the TBox, every stream at
  the same rate (``rate`` tuples per time point), individuals drawn so that a fraction ``violation`` of
  all tuples violate some NI. An individual has a *home* class H (a satisfiable class) and is asserted
  only in the streams of H's superclasses, so on its own it is consistent. A violating tuple for stream
  C at time t takes an individual y that the stream of a class H conflicting with C emitted at t or
  t-1 (so inside any window w >= 1) and asserts y : C; y is then retired (never used again). Hence
  every violating tuple causes exactly one report, at (y, t), and no other tuple causes one: the
  expected report set is known (``planted``) and the runners are checked against it.
  Streams of classes that can conflict with nothing never violate; the others violate with
  probability ``violation * n_streams / n_conflicting_streams`` so that the overall fraction is
  ``violation``.
* :func:`uba_replay` - the two real UBA universities replayed as an RDF stream: every subject's
  description (its rdf:type and property triples) arrives at one time point, subjects in a seeded
  order, ``per_time`` subjects per time point; a fraction of subjects gets a planted rdf:type that is
  disjoint with one of its asserted types, at the same time point.

Tuples are :class:`StreamTuple` in arrival order; ``srtopo.topology.tnt.write_tnt`` writes them (or the
replay's lines) as timestamped N-Triples files that every runner reads.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from srtopo.concepts import RDF_TYPE, is_exists, local_name
from srtopo.experiments.common import ExperimentError
from srtopo.ontology.nis import NIAnalysis, pair
from srtopo.topology.records import StreamTuple

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


def _tables(analysis: NIAnalysis, classes: list[str]):
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
        raise ExperimentError(f"violation fraction must be in [0, 1], got {violation}")
    rng = random.Random(seed)
    classes = classes or named_classes(analysis)
    homes, conflicting, unsat = _tables(analysis, classes)
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


# --- UBA replay ---------------------------------------------------------------------------------------

UB = "http://www.lehigh.edu/~zhp2/2004/0401/univ-bench.owl#"


def uba_triples(paths) -> list[tuple[str, str, str]]:
    """(subject, predicate, object) of the UBA files; objects are IRIs or quoted N-Triples literals."""
    from rdflib import Graph, Literal, URIRef
    out = []
    for path in paths:
        g = Graph()
        g.parse(path, format="xml")
        for s, p, o in g:
            if not isinstance(s, URIRef):
                continue
            if p == URIRef(RDF_TYPE) and not str(o).startswith(UB):
                continue   # owl:Ontology header
            if isinstance(o, Literal):
                out.append((str(s), str(p), o.n3()))
            elif isinstance(o, URIRef):
                out.append((str(s), str(p), str(o)))
    return sorted(set(out))


@dataclass
class Replay:
    lines: list[tuple[int, str, str, str]]       # (time, s, p, o) in arrival order
    planted: set[tuple[str, int]]                  # (subject, time) of planted type assertions
    subjects: int
    time_points: int


def uba_replay(analysis: NIAnalysis, triples, *, per_time: int = 50, violation: float = 0.02,
               seed: int = 0) -> Replay:
    """Replay UBA triples subject by subject; plant a disjoint rdf:type for a fraction of typed subjects."""
    rng = random.Random(seed)
    by_subject: dict[str, list[tuple[str, str]]] = {}
    for s, p, o in triples:
        by_subject.setdefault(s, []).append((p, o))
    subjects = sorted(by_subject)
    rng.shuffle(subjects)
    classes = named_classes(analysis)
    _, conflicting, _ = _tables(analysis, classes)
    lines: list[tuple[int, str, str, str]] = []
    planted: set[tuple[str, int]] = set()
    for index, s in enumerate(subjects):
        t = index // per_time
        statements = by_subject[s]
        for p, o in statements:
            lines.append((t, s, p, o))
        types = sorted(o for p, o in statements if p == RDF_TYPE and conflicting.get(o))
        if types and rng.random() < violation:
            bad = rng.choice(conflicting[rng.choice(types)])
            lines.append((t, s, RDF_TYPE, bad))
            planted.add((s, t))
    return Replay(lines, planted, len(subjects), (len(subjects) + per_time - 1) // per_time)
