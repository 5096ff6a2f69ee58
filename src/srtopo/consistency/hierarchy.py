"""The PI closure: a DAG of basic concepts with equivalence cycles collapsed (networkx)."""
from __future__ import annotations

import networkx as nx

from srtopo.concepts import is_exists
from srtopo.consistency.tbox import TBox


def _representative(members) -> str:
    # Prefer a named class over an exists-concept, then the smallest IRI: deterministic and readable.
    return min(members, key=lambda c: (is_exists(c), c))


class Hierarchy:
    """Sub-to-super relation over basic concepts, reflexive and transitive, on equivalence representatives."""

    def __init__(self, tbox: TBox):
        graph = nx.DiGraph()
        graph.add_nodes_from(sorted(tbox.concepts))
        graph.add_edges_from(tbox.pis)
        condensed = nx.condensation(graph)
        self._rep: dict[str, str] = {}
        self._members: dict[str, frozenset[str]] = {}
        node_rep: dict[int, str] = {}
        for node, data in condensed.nodes(data=True):
            members = frozenset(data["members"])
            rep = _representative(members)
            node_rep[node] = rep
            self._members[rep] = members
            for member in members:
                self._rep[member] = rep
        self.graph = nx.relabel_nodes(condensed, node_rep, copy=True)  # DAG over representatives
        for node in self.graph.nodes:
            self.graph.nodes[node].pop("members", None)
        closure = nx.transitive_closure_dag(self.graph)
        self._supers = {c: frozenset(closure.successors(c)) | {c} for c in self.graph.nodes}
        self._subs = {c: frozenset(closure.predecessors(c)) | {c} for c in self.graph.nodes}

    # --- lookups -------------------------------------------------------------------------------
    @property
    def concepts(self) -> frozenset[str]:
        """Representatives of all concepts of the TBox."""
        return frozenset(self._members)

    def rep(self, concept: str) -> str:
        return self._rep.get(concept, concept)

    def members(self, concept: str) -> frozenset[str]:
        rep = self.rep(concept)
        return self._members.get(rep, frozenset({rep}))

    def supers(self, concept: str) -> frozenset[str]:
        """Representatives D with concept ⊑* D (the concept itself included)."""
        rep = self.rep(concept)
        return self._supers.get(rep, frozenset({rep}))

    def subs(self, concept: str) -> frozenset[str]:
        """Representatives D with D ⊑* concept (the concept itself included)."""
        rep = self.rep(concept)
        return self._subs.get(rep, frozenset({rep}))

    def is_sub(self, sub: str, sup: str) -> bool:
        return self.rep(sup) in self.supers(sub)

    def equivalences(self) -> dict[str, frozenset[str]]:
        """Representative -> members, for classes that were collapsed (more than one member)."""
        return {rep: m for rep, m in self._members.items() if len(m) > 1}

    def minimal(self, concepts) -> frozenset[str]:
        """The elements of ``concepts`` (representatives) with no strict subconcept among them."""
        concepts = set(concepts)
        return frozenset(c for c in concepts if not any(o != c and o in self._subs.get(c, ()) for o in concepts))
