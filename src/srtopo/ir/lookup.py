"""The lookup tables of a consistency topology: what every columnar plan (the Spark SQL, the numpy sweep of the
local runner and of Spark's executors and driver) reads instead of concept names.

Concepts, NI pairs and stages become small integer ids, assigned in name order, so that an order over ids is the
order over names that a report's choice of its violation follows (docs/consistency.md, "Which NI and evidence a
report names"). The tables are derived from the IR's routing rule (``Topology.route``) alone: every runner that
reads them routes tuples as the local runner's reference plan does.
"""
from __future__ import annotations

from dataclasses import dataclass

from srtopo.ir.topology import Topology


@dataclass(frozen=True)
class Tables:
    """Plain rows of the lookup tables (built once per topology, tiny next to the stream)."""
    cmap: list          # (asserted, stage, concept, cached)  fused: every stage's input from the source
    srcmap: list        # (asserted, concept)                 staged: stage 1 input
    emit: list          # (stage, concept, next)              staged: stage k -> k+1
    cached: list        # (stage, concept)                    staged: concepts cached at stage k
    pairs: list         # (stage, c1, c2, ni_l, ni_r)         both orientations
    stage_ids: tuple


def build_tables(topology: Topology) -> Tables:
    """The lookup tables of a consistency topology, routed by the IR's rule (``Topology.route``)."""
    stages = topology.stages
    conjunctions = [topology.conjunctions(k) for k in range(len(stages))]
    cached_sets = [frozenset(c for op in ops for c in op.pair) for ops in conjunctions]
    cmap, srcmap = [], []
    for asserted in topology.accepted():
        route = topology.route(asserted)
        if not route:
            continue
        srcmap.append((asserted, route[0][0]))
        for k, frontier in enumerate(route):
            for c in frontier:
                cmap.append((asserted, k, c, c in cached_sets[k]))
    emit = sorted((k, c, target) for k in range(len(stages)) for c, targets in topology.outputs(k).items()
                  for target, _ in targets)
    cached = sorted((k, c) for k, cs in enumerate(cached_sets) for c in cs)
    pairs = set()
    for k, ops in enumerate(conjunctions):
        for op in ops:
            pairs.add((k, op.left, op.right, op.ni[0], op.ni[1]))
            pairs.add((k, op.right, op.left, op.ni[0], op.ni[1]))
    return Tables(cmap, srcmap, emit, cached, sorted(pairs), tuple(s.id for s in stages))


def ni_pair_ids(tables: Tables) -> list:
    """Distinct (ni_l, ni_r) pairs in a fixed order: a pair's id is its index (the pairs table's pid)."""
    return sorted({(r[3], r[4]) for r in tables.pairs})


def asserted_names(tables: Tables) -> list:
    """Every concept name a source tuple can assert (and evidence can name), sorted: an id is the index."""
    return sorted({r[0] for r in tables.cmap} | {r[0] for r in tables.srcmap})


def concept_names(tables: Tables) -> list:
    """Every stage-level concept of the lookup tables, sorted: a concept's id (cid) is its index."""
    names = {r[2] for r in tables.cmap} | {r[1] for r in tables.srcmap} | {r[1] for r in tables.cached}
    names |= {r[1] for r in tables.emit} | {r[2] for r in tables.emit}
    names |= {r[1] for r in tables.pairs} | {r[2] for r in tables.pairs}
    return sorted(names)


def id_tables(tables: Tables) -> dict:
    """The lookup tables with concepts replaced by ids: name -> (rows, schema)."""
    cid = {c: i for i, c in enumerate(concept_names(tables))}
    aid = {a: i for i, a in enumerate(asserted_names(tables))}
    pid = {p: i for i, p in enumerate(ni_pair_ids(tables))}
    return {
        "amap": (list(aid.items()), "asserted STRING, aid INT"),
        "cmap": ([(a, k, cid[c], aid[a], cached) for a, k, c, cached in tables.cmap],
                 "asserted STRING, stage INT, cid INT, aid INT, cached BOOLEAN"),
        "srcmap": ([(a, cid[c], aid[a]) for a, c in tables.srcmap], "asserted STRING, cid INT, aid INT"),
        "emit": ([(k, cid[c], cid[n]) for k, c, n in tables.emit], "stage INT, cid INT, next INT"),
        "cached": ([(k, cid[c]) for k, c in tables.cached], "stage INT, cid INT"),
        "pairs": ([(k, cid[a], cid[b], pid[(l, r)]) for k, a, b, l, r in tables.pairs],
                  "stage INT, c1 INT, c2 INT, pid INT"),
    }


def _bits(n: int) -> int:
    return max(1, (max(0, n - 1)).bit_length())


def choice_bits(tables: Tables, window: int | None) -> tuple[int, int, int, int] | None:
    """The widths (stage, NI pair, distance back, asserted concept) of the packed choice key (``Packing``), or None
    if it does not fit in 62 bits (an unbounded window, a huge TBox): the distance is in [0, w], concepts are ids
    in name order and pair ids in (left, right) name order, so the key orders as the (pid, distance, earlier
    concept, later concept, stage) tuple it packs."""
    if window is None:
        return None
    sb = _bits(len(tables.stage_ids))
    pb = _bits(len(ni_pair_ids(tables)))
    db = _bits(int(window) + 1)
    ab = _bits(len(asserted_names(tables)))
    if sb + pb + db + 2 * ab > 62:
        return None
    return sb, pb, db, ab


@dataclass(frozen=True)
class Packing:
    """Bit offsets of the packed choice key (``choice_bits`` gives the widths), in the order a report chooses its
    violation (docs/consistency.md, "Which NI and evidence a report names"), from the highest bits: the NI pair id,
    how far back from the report's time the earlier evidence is (in [0, w]), the earlier evidence's asserted concept
    id, the later one's (its time is the report's), and the stage in the lowest bits. The Spark write and the
    numpy sweep (``consistency.sweep``) both pack by it."""
    pid: int
    back: int
    a1: int
    a2: int
    stage: int

    @classmethod
    def of(cls, bits: tuple[int, int, int, int]) -> Packing:
        sb, pb, db, ab = bits
        a2 = sb
        a1 = a2 + ab
        back = a1 + ab
        return cls(pid=back + db, back=back, a1=a1, a2=a2, stage=0)
