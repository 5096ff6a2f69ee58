"""NI closure (NTM), NI roots and NI groups ("Distributed Stream Consistency Checking",
section 4, Algorithm 1 steps 1-3).

Pairs are unordered and stored canonically as sorted tuples of representatives; a pair (C, C)
marks an unsatisfiable concept.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx

from srtopo.consistency.hierarchy import Hierarchy
from srtopo.consistency.tbox import NegativeInclusion, TBox

Pair = tuple[str, str]


def pair(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


def closure_of(hierarchy: Hierarchy, roots, visible=None) -> frozenset[Pair]:
    """All pairs (X, Y) with X ⊑* A, Y ⊑* B for a root (A, B); X, Y restricted to ``visible`` if given."""
    out: set[Pair] = set()
    for a, b in roots:
        subs_a = hierarchy.subs(a)
        subs_b = hierarchy.subs(b)
        if visible is not None:
            subs_a = subs_a & visible
            subs_b = subs_b & visible
        for x in subs_a:
            for y in subs_b:
                out.add(pair(x, y))
    return frozenset(out)


def dominated(hierarchy: Hierarchy, inner: Pair, outer: Pair) -> bool:
    """inner ⊑ outer componentwise, in either orientation."""
    (x, y), (a, b) = inner, outer
    return ((hierarchy.is_sub(x, a) and hierarchy.is_sub(y, b))
            or (hierarchy.is_sub(x, b) and hierarchy.is_sub(y, a)))


@dataclass(frozen=True)
class NIAnalysis:
    """Everything Algorithm 1 derives from a TBox before assigning groups to stages."""
    tbox: TBox
    hierarchy: Hierarchy
    stated: dict[Pair, tuple[NegativeInclusion, ...]]   # representative pair -> stated axioms
    roots: tuple[Pair, ...]
    groups: tuple[tuple[Pair, ...], ...]                  # deepest first

    @cached_property
    def closure(self) -> frozenset[Pair]:
        return closure_of(self.hierarchy, self.stated)

    @cached_property
    def unsatisfiable(self) -> frozenset[str]:
        """Concepts C (all members of their equivalence class) with C ⊑ A, C ⊑ B and DJ(A, B)."""
        h = self.hierarchy
        found: set[str] = set()
        for a, b in self.roots:
            for c in h.subs(a) & h.subs(b):
                found.update(h.members(c))
        return frozenset(found)

    def axiom(self, root: Pair) -> NegativeInclusion:
        """The TBox axiom as stated for a root; if equivalences merged several, the least by (left IRI, right
        IRI), the order reports choose NIs in (docs/consistency.md, "Which NI and evidence a report names")."""
        return min(self.stated[root])

    @cached_property
    def roots_by_axiom(self) -> tuple[Pair, ...]:
        """The roots in the order of the axioms they name (``axiom``): the first one above a conjunction pair is the
        NI a report of that pair names."""
        return tuple(sorted(self.roots, key=lambda root: (self.axiom(root), root)))

    def relevant_concepts(self) -> frozenset[str]:
        """Representatives that can take part in some conflict (below some root class)."""
        h = self.hierarchy
        out: set[str] = set()
        for a, b in self.roots:
            out |= h.subs(a) | h.subs(b)
        return frozenset(out)


def ni_roots(hierarchy: Hierarchy, stated_pairs) -> tuple[Pair, ...]:
    """Essential NIs: closure pairs dominated by no other closure pair. Every closure pair lies
    below a stated one, so the maximal closure pairs are exactly the maximal stated pairs."""
    stated_pairs = sorted(set(stated_pairs))
    roots = [p for p in stated_pairs
             if not any(q != p and dominated(hierarchy, p, q) for q in stated_pairs)]
    return tuple(roots)


def ni_groups(hierarchy: Hierarchy, roots) -> tuple[tuple[Pair, ...], ...]:
    """Group roots by depth: the longest path from a root to a sink in the NI graph, where an edge
    r1 -> r2 means a class of r1 is a strict subclass of a class of r2. Deepest first, so NIs over
    the most specific classes are checked first and their classes turned into superclasses.
    Cycles (possible with crossing NIs) are condensed and share a level."""
    roots = list(roots)
    graph = nx.DiGraph()
    graph.add_nodes_from(roots)
    for r1 in roots:
        for r2 in roots:
            if r1 == r2:
                continue
            if any(c1 != c2 and hierarchy.is_sub(c1, c2) for c1 in set(r1) for c2 in set(r2)):
                graph.add_edge(r1, r2)
    condensed = nx.condensation(graph)
    height: dict[int, int] = {}
    for node in reversed(list(nx.topological_sort(condensed))):
        height[node] = max((height[s] + 1 for s in condensed.successors(node)), default=0)
    by_level: dict[int, list[Pair]] = {}
    for node, data in condensed.nodes(data=True):
        by_level.setdefault(height[node], []).extend(data["members"])
    return tuple(tuple(sorted(by_level[level])) for level in sorted(by_level, reverse=True))


def analyse(tbox: TBox) -> NIAnalysis:
    hierarchy = Hierarchy(tbox)
    stated: dict[Pair, list[NegativeInclusion]] = {}
    for ni in tbox.nis:
        stated.setdefault(pair(hierarchy.rep(ni.left), hierarchy.rep(ni.right)), []).append(ni)
    roots = ni_roots(hierarchy, stated)
    groups = ni_groups(hierarchy, roots)
    return NIAnalysis(tbox, hierarchy, {k: tuple(v) for k, v in stated.items()}, roots, groups)
