"""The triples no axiom handler consumed: declarations, annotations, ABox assertions, imports, or unrecognised.

Nothing is dropped: a left-over triple is a declaration or an annotation (no logical content for a TBox), or
it becomes a skipped entry of the loader report (ABox assertions, one entry per individual; ``owl:imports``;
anything else as "unrecognised"). A blank node's triples go with the triple that points at it, so an
annotation's structured value or a reified axiom (``owl:Axiom``) is accounted for as one group.
"""
from __future__ import annotations

from collections import defaultdict

from rdflib import BNode
from rdflib.namespace import OWL, RDF, RDFS

from srtopo.consistency.owl_expressions import Vocabulary, is_vocabulary_term, show_node
from srtopo.consistency.tbox import SkippedAxiom

DECLARATION_TYPES = frozenset({OWL.Class, RDFS.Class, OWL.ObjectProperty, OWL.DatatypeProperty,
                               OWL.AnnotationProperty, RDF.Property, OWL.NamedIndividual, RDFS.Datatype,
                               OWL.Ontology, OWL.OntologyProperty, OWL.DeprecatedClass, OWL.DeprecatedProperty})
ABOX = "ABox assertion"
ABOX_REASON = "individuals in the ontology file are not checked: stream their assertions instead"
UNRECOGNISED = "unrecognised triple"
UNRECOGNISED_REASON = "not an OWL 2 construct the loader knows"


def show_triple(triple) -> str:
    s, p, o = triple
    return f"{show_node(s)} {show_node(p)} {show_node(o)}"


class Leftovers:
    """Classifies the triples of ``graph`` outside ``consumed`` into declarations, annotations and skipped."""

    def __init__(self, graph, vocabulary: Vocabulary, consumed):
        self.g = graph
        self.vocab = vocabulary
        self.left = set(graph) - set(consumed)
        self.declarations: set = set()
        self.annotations: set = set()
        self.skipped: list[SkippedAxiom] = []
        self.skipped_triples: set = set()

    def closure(self, node) -> set:
        """The left-over triples reachable from a blank node (its own and those of blank nodes it points at)."""
        out, todo, seen = set(), [node], set()
        while todo:
            current = todo.pop()
            if not isinstance(current, BNode) or current in seen:
                continue
            seen.add(current)
            for triple in self.g.triples((current, None, None)):
                if triple in self.left:
                    out.add(triple)
                    todo.append(triple[2])
        return out

    def run(self) -> None:
        referenced = {o for _, _, o in self.left if isinstance(o, BNode)}
        abox: dict = defaultdict(set)
        unrecognised: dict = defaultdict(set)   # a blank node's unrecognised triples make one entry
        for triple in sorted(self.left, key=lambda t: (str(t[0]), str(t[1]), str(t[2]))):
            s, p, o = triple
            if triple not in self.left or (isinstance(s, BNode) and s in referenced):
                continue   # taken with a group already, or reached from the triple that points at it
            group = {triple} | self.closure(o)
            category = self.anonymous(s) if isinstance(s, BNode) else None
            if category is None:
                category = self.category(triple)
            else:
                group |= self.closure(s)
            self.left -= group
            if category == "declaration":
                self.declarations |= group
            elif category == "annotation":
                self.annotations |= group
            elif category == ABOX:
                abox[s] |= group
            elif category == "imports":
                self.add_skipped("imports", f"imports {show_node(o)}",
                                 "imported ontologies are not loaded: merge them into this file", group)
            else:
                unrecognised[s if isinstance(s, BNode) else triple] |= group
        for triple in sorted(self.left, key=str):   # blank nodes only reached through a cycle of blank nodes
            unrecognised[triple].add(triple)
        self.left.clear()
        for group in unrecognised.values():
            self.add_skipped(UNRECOGNISED, "; ".join(sorted(map(show_triple, group))), UNRECOGNISED_REASON, group)
        for subject, group in abox.items():
            own = sorted(f"{show_node(p)} {show_node(o)}" for s, p, o in group if s == subject)
            text = f"{show_node(subject)}: " + ", ".join(own[:2]) + (f", ... ({len(own)} assertions)"
                                                                     if len(own) > 2 else "")
            self.add_skipped(ABOX, text, ABOX_REASON, group)

    def add_skipped(self, kind: str, text: str, reason: str, triples) -> None:
        self.skipped.append(SkippedAxiom(kind, text, reason, "", frozenset(triples)))
        self.skipped_triples |= triples

    def category(self, triple) -> str:
        """declaration, annotation, imports, ABox assertion, or unrecognised triple."""
        s, p, o = triple
        vocab = self.vocab
        if p == RDF.type and o in DECLARATION_TYPES:
            return "declaration"
        if p in vocab.annotation_properties:
            return "annotation"
        if s in vocab.ontologies:
            if p == OWL.imports:
                return "imports"
            return "declaration" if p == OWL.versionIRI else "annotation"
        if p in (OWL.sameAs, OWL.differentFrom) or s in vocab.individuals or (
                p == RDF.type and (not is_vocabulary_term(o) or o == OWL.Thing)):
            return ABOX   # a class assertion (an anonymous individual's too) or a property assertion
        if p in vocab.object_properties or p in vocab.data_properties:
            return ABOX
        if not is_vocabulary_term(p) and s in vocab.entities():
            return "annotation"   # an annotation assertion whose property the file does not declare
        return UNRECOGNISED

    def anonymous(self, node) -> str | None:
        """For a blank node no left-over triple points at: the category of all its triples when it is a reified
        axiom or annotation (owl:Axiom, owl:Annotation) or an anonymous ABox assertion (owl:AllDifferent,
        owl:NegativePropertyAssertion); None when its triples are classified one by one."""
        types = set(self.g.objects(node, RDF.type))
        if types & {OWL.Axiom, OWL.Annotation}:
            return "annotation"
        if types & {OWL.AllDifferent, OWL.NegativePropertyAssertion}:
            return ABOX
        return None
