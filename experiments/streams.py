"""Stream generators for the experiments (deterministic under a seed): the two real UBA universities replayed as
an RDF stream with planted violations (``uba_replay``); experiments/README.md, "Streams", says how."""
from __future__ import annotations

import random
from dataclasses import dataclass

from srtopo.concepts import RDF_TYPE
from srtopo.consistency.generate import conflict_tables, named_classes
from srtopo.consistency.nis import NIAnalysis

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
    _, conflicting, _ = conflict_tables(analysis, classes)
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
