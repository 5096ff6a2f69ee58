"""OWL 2 axioms (the RDF mapping's tables 16-17) to DL-Lite inclusions, axiom by axiom.

Each axiom gives every consequence DL-Lite states exactly (``owl_dllite``) and lists each part it cannot state
as a ``SkippedAxiom`` with a reason. The triples of an axiom (its own and those of its expressions) are marked
used when the axiom gave a PI or NI or holds trivially, skipped otherwise; triples of axioms on annotation
properties are annotations. What no handler consumed is classified afterwards (``owl_accounting``).
"""
from __future__ import annotations

from collections import Counter
from itertools import combinations

from rdflib import BNode, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from srtopo.consistency.owl_dllite import SELF, Unusable, conjuncts, exists_of, is_empty, left_parts, right
from srtopo.consistency.owl_expressions import (
    And, DataRange, Expr, ExpressionParser, Named, Not, Or, Restriction, Role, Vocabulary, is_bottom, show, show_node)
from srtopo.consistency.tbox import NegativeInclusion, SkippedAxiom

#: property characteristics outside DL-Lite_R, by their rdf:type
CHARACTERISTICS = {
    OWL.FunctionalProperty: "FunctionalProperty", OWL.InverseFunctionalProperty: "InverseFunctionalProperty",
    OWL.TransitiveProperty: "TransitiveProperty", OWL.ReflexiveProperty: "ReflexiveProperty",
    OWL.IrreflexiveProperty: "IrreflexiveProperty", OWL.AsymmetricProperty: "AsymmetricProperty",
}
#: OWL 1 definitions on a named class: C owl:intersectionOf (...) is C ≡ intersectionOf(...)
OWL1_DEFINITIONS = (OWL.intersectionOf, OWL.unionOf, OWL.complementOf, OWL.oneOf)
DISJOINTNESS = ("disjointWith", "AllDisjointClasses", "disjointUnionOf")
NOT_CONCEPTS = "data ranges are not concepts"
ROLE_DISJOINTNESS = "role disjointness constrains role assertions, not the concept tuples checked here"


def _outside_left(what: str) -> str:
    return f"{what} on the left of ⊑ is outside DL-Lite"


class _Axiom:
    """What one axiom gave: PIs, NIs and lost parts, until the mapper records it."""

    def __init__(self, kind: str, text: str, triples):
        self.kind, self.text, self.triples = kind, text, frozenset(triples)
        self.pis: list[tuple[str, str, str]] = []
        self.nis: list[tuple[str, str, str]] = []
        self.lost: list[tuple[str, str]] = []

    def pi(self, sub: str, sup: str, label: str) -> None:
        self.pis.append((sub, sup, label))

    def ni(self, a: str, b: str, label: str) -> None:
        self.nis.append((a, b, self.kind if self.kind in DISJOINTNESS else f"{self.kind} {label}"))

    def lose(self, part: str, reason: str) -> None:
        self.lost.append((part, reason))


class AxiomMapper:
    def __init__(self, graph, vocabulary: Vocabulary):
        self.g = graph
        self.vocab = vocabulary
        self.parser = ExpressionParser(graph, vocabulary.data_properties, vocabulary.datatypes)
        self.pis: list[tuple[str, str]] = []
        self.nis: list[NegativeInclusion] = []
        self.pi_kinds: Counter = Counter()
        self.ni_kinds: Counter = Counter()
        self.skipped: list[SkippedAxiom] = []
        self.role_inclusions: list[tuple[str, str]] = []
        #: inclusions R ⊑ S between object role expressions (inverses included), as their ∃ concepts
        self.role_pis: list[tuple[str, str]] = []
        self.used: set = set()
        self.skipped_triples: set = set()
        self.annotations: set = set()     # axioms about annotation properties

    # recording ---------------------------------------------------------------------------------------
    def record(self, ax: _Axiom) -> None:
        for sub, sup, label in ax.pis:
            self.pis.append((sub, sup))
            self.pi_kinds[label] += 1
        for a, b, label in ax.nis:
            self.nis.append(NegativeInclusion(a, b, f"{ax.kind}: {ax.text}"))
            self.ni_kinds[label] += 1
        gave = bool(ax.pis or ax.nis or not ax.lost)
        lost = list(dict.fromkeys(ax.lost))
        for part, reason in lost:
            whole = not gave and len(lost) == 1
            self.skipped.append(SkippedAxiom(ax.kind, ax.text, reason, "" if whole else part, ax.triples))
        (self.used if gave else self.skipped_triples).update(ax.triples)

    def skip(self, kind: str, text: str, reason: str, triples) -> None:
        ax = _Axiom(kind, text, triples)
        ax.lose(text, reason)
        self.record(ax)

    # inclusions between expressions -----------------------------------------------------------------------
    def include(self, ax: _Axiom, sub: Expr, sup: Expr) -> None:
        """sub ⊑ sup: one inclusion per basic member of sub, each with what DL-Lite states of sup."""
        if isinstance(sub, And) and is_empty(sup):
            self.empty_intersection(ax, sub, sup)
            return
        parts = left_parts(sub)
        basics = [part for part in parts if isinstance(part, str)]
        for part in parts:
            if isinstance(part, Unusable):
                ax.lose(f"{show(part.expr)} ⊑ {show(sup)}", _outside_left(part.what))
        if not basics:
            return
        rhs = right(sup)
        if isinstance(rhs, str):
            ax.lose(f"{show(sub)} ⊑ {show(sup)}", rhs)
            return
        for basic in basics:
            for concept, label in rhs.supers:
                ax.pi(basic, concept, ax.kind + label)
            for concept, label in rhs.disjoint:
                ax.ni(basic, basic if concept == SELF else concept, label)
        for part, reason in rhs.lost:
            ax.lose(f"{show(sub)} ⊑ {part}", reason)

    def empty_intersection(self, ax: _Axiom, sub: And, sup: Expr) -> None:
        """(A ⊓ B) ⊑ ⊥, the form Protégé writes a disjointness in, is the NI A/B; one operand A is A ⊑ ⊥. An
        intersection of three or more is outside DL-Lite: A ⊓ B ⊓ C ⊑ ⊥ makes no two of them disjoint."""
        operands = conjuncts(sub)
        if any(is_bottom(item) for item in operands):
            return                                    # (⊥ ⊓ A) ⊑ ⊥ holds: nothing to state
        if len(operands) > 2:
            ax.lose(f"{show(sub)} ⊑ {show(sup)}", "an intersection of three or more concepts below owl:Nothing is "
                    "outside DL-Lite: it makes no two of them disjoint")
            return
        if len(operands) < 2:
            self.include(ax, operands[0] if operands else Named(OWL.Thing), sup)
            return
        part = _Axiom(ax.kind, ax.text, ax.triples)
        self.disjoint(part, *operands)
        ax.pis += part.pis
        ax.nis += [(a, b, f"{ax.kind} intersection below owl:Nothing") for a, b, _ in part.nis]
        ax.lost += part.lost

    def disjoint(self, ax: _Axiom, a: Expr, b: Expr) -> None:
        """a ⊓ b ⊑ ⊥, read as a ⊑ ¬b (or b ⊑ ¬a when only b is a union of basic concepts)."""
        if any(isinstance(p, Unusable) for p in left_parts(a)) and \
                not any(isinstance(p, Unusable) for p in left_parts(b)):
            a, b = b, a
        self.include(ax, a, Not(b))

    # class axioms --------------------------------------------------------------------------------------
    def run(self) -> None:
        g, cls = self.g, self.parser.cls
        for s, o in g.subject_objects(RDFS.subClassOf):
            sub, sup = cls(s), cls(o)
            ax = _Axiom("subClassOf", f"{show(sub)} ⊑ {show(sup)}", self._triples((s, RDFS.subClassOf, o), sub, sup))
            self.include(ax, sub, sup)
            self.record(ax)
        for s, o in g.subject_objects(OWL.equivalentClass):
            self.equivalent((s, OWL.equivalentClass, o), cls(s), cls(o))
        for predicate in OWL1_DEFINITIONS:
            for s, o in g.subject_objects(predicate):
                if isinstance(s, URIRef):
                    expr = self.parser.boolean(predicate, o, frozenset({(s, predicate, o)}))
                    self.equivalent((s, predicate, o), cls(s), expr)
        for s, o in g.subject_objects(OWL.disjointWith):
            a, b = cls(s), cls(o)
            ax = _Axiom("disjointWith", f"{show(a)} disjointWith {show(b)}",
                        self._triples((s, OWL.disjointWith, o), a, b))
            self.disjoint(ax, a, b)
            self.record(ax)
        for node in g.subjects(RDF.type, OWL.AllDisjointClasses):
            self.all_disjoint(node)
        for owner, members in g.subject_objects(OWL.disjointUnionOf):
            self.disjoint_union(owner, members)
        self.property_axioms()

    def _triples(self, triple, *exprs: Expr) -> frozenset:
        out = {triple}
        for expr in exprs:
            out |= expr.triples
        return frozenset(out)

    def equivalent(self, triple, a: Expr, b: Expr) -> None:
        """Each direction separately; an equivalence of data ranges is a datatype definition."""
        text = f"{show(a)} ≡ {show(b)}"
        triples = self._triples(triple, a, b)
        if isinstance(a, DataRange) or isinstance(b, DataRange):
            self.skip("DatatypeDefinition", text, NOT_CONCEPTS, triples)
            return
        ax = _Axiom("equivalentClass", text, triples)
        self.include(ax, a, b)
        self.include(ax, b, a)
        self.record(ax)

    def _members(self, node, predicate):
        """(parsed members, triples of the list and members) or (None, triples) if the list is malformed."""
        value = self.g.value(node, predicate)
        items, used = self.parser.items(value) if value is not None else (None, frozenset())
        used = used | ({(node, predicate, value)} if value is not None else set())
        if items is None:
            return None, used
        exprs = [self.parser.cls(item) for item in items]
        for expr in exprs:
            used |= expr.triples
        return exprs, used

    def all_disjoint(self, node) -> None:
        members, used = self._members(node, OWL.members)
        used = used | {(node, RDF.type, OWL.AllDisjointClasses)}
        if members is None:
            self.skip("AllDisjointClasses", "AllDisjointClasses(...)", "a malformed list of members", used)
            return
        ax = _Axiom("AllDisjointClasses", "AllDisjointClasses(" + ", ".join(map(show, members)) + ")", used)
        for a, b in combinations(members, 2):
            self.disjoint(ax, a, b)
        self.record(ax)

    def disjoint_union(self, owner_node, members_node) -> None:
        """C disjointUnionOf (A B): A ⊑ C, B ⊑ C, A ⊓ B ⊑ ⊥, and C ⊑ A ⊔ B (a union on the right: lost)."""
        owner = self.parser.cls(owner_node)
        items, used = self.parser.items(members_node)
        used = used | {(owner_node, OWL.disjointUnionOf, members_node)} | owner.triples
        if items is None:
            self.skip("disjointUnionOf", f"{show(owner)} disjointUnionOf(...)", "a malformed list of members", used)
            return
        members = [self.parser.cls(item) for item in items]
        for member in members:
            used |= member.triples
        ax = _Axiom("disjointUnionOf", f"{show(owner)} disjointUnionOf(" + ", ".join(map(show, members)) + ")",
                    used)
        for member in members:
            self.include(ax, member, owner)
        for a, b in combinations(members, 2):
            self.disjoint(ax, a, b)
        self.include(ax, owner, Or(tuple(members)))
        self.record(ax)

    # property axioms -----------------------------------------------------------------------------------
    def is_annotation(self, *nodes) -> bool:
        return any(node in self.vocab.annotation_properties for node in nodes)

    def roles(self, *nodes) -> tuple[list[Role] | None, frozenset, str]:
        """Parsed property expressions; an undeclared property beside a data property is taken as one."""
        out, used = [], frozenset()
        for node in nodes:
            role, triples, problem = self.parser.role(node)
            if role is None:
                return None, used | triples, f"{problem}: not a DL-Lite role"
            out.append(role)
            used |= triples
        if any(r.data for r in out):
            declared = self.vocab.object_properties
            if any(not r.data and URIRef(r.iri) in declared for r in out):
                return None, used, "a data property and an object property are related: not OWL 2 DL"
            out = [Role(r.iri, r.inverse, True) for r in out]
            self.parser.data_roles.update(r.iri for r in out)
            if any(r.inverse for r in out):
                return None, used, "the inverse of a data property: not a DL-Lite role"
        return out, used, ""

    def property_axioms(self) -> None:
        g = self.g
        for p, q in g.subject_objects(RDFS.subPropertyOf):
            self.sub_property((p, RDFS.subPropertyOf, q), p, q, "subPropertyOf")
        for p, q in g.subject_objects(OWL.equivalentProperty):
            self.sub_property((p, OWL.equivalentProperty, q), p, q, "equivalentProperty", both=True)
        for p, q in g.subject_objects(OWL.inverseOf):
            if isinstance(p, BNode) and isinstance(q, URIRef):
                continue   # [ owl:inverseOf P ] is the property expression P⁻, read where it is used
            self.inverse((p, OWL.inverseOf, q), p, q)
        for p, c in g.subject_objects(RDFS.domain):
            self.domain_or_range((p, RDFS.domain, c), p, c, "domain")
        for p, c in g.subject_objects(RDFS.range):
            self.domain_or_range((p, RDFS.range, c), p, c, "range")
        for p in g.subjects(RDF.type, OWL.SymmetricProperty):
            self.symmetric(p)
        for p, chain in g.subject_objects(OWL.propertyChainAxiom):
            self.chain(p, chain)
        self.outside_dllite()

    def outside_dllite(self) -> None:
        """Axioms with no consequence DL-Lite_R states: listed whole, with their triples."""
        g = self.g
        for kind, name in CHARACTERISTICS.items():
            for p in g.subjects(RDF.type, kind):
                self.skip(name, f"{name}({self.show_role(p)})", "property characteristic outside DL-Lite",
                          self._role_triples((p, RDF.type, kind), p))
        for p, q in g.subject_objects(OWL.propertyDisjointWith):
            self.skip("propertyDisjointWith", f"{self.show_role(p)} disjointWith {self.show_role(q)}",
                      ROLE_DISJOINTNESS, self._role_triples((p, OWL.propertyDisjointWith, q), p, q))
        for node in g.subjects(RDF.type, OWL.AllDisjointProperties):
            value = g.value(node, OWL.members)
            items, used = self.parser.items(value) if value is not None else (None, frozenset())
            used |= {(node, RDF.type, OWL.AllDisjointProperties)}
            used |= {(node, OWL.members, value)} if value is not None else set()
            for item in items or ():
                used |= self.parser.role(item)[1]
            text = "AllDisjointProperties(" + ", ".join(map(self.show_role, items or ())) + ")"
            self.skip("AllDisjointProperties", text, ROLE_DISJOINTNESS, used)
        for c, keys in g.subject_objects(OWL.hasKey):
            items, used = self.parser.items(keys)
            owner = self.parser.cls(c)
            self.skip("hasKey", f"hasKey({show(owner)})", "keys are outside DL-Lite",
                      used | owner.triples | {(c, OWL.hasKey, keys)})

    def show_role(self, node) -> str:
        role = self.parser.role(node)[0]
        return role.show() if role is not None else show_node(node)

    def _role_triples(self, triple, *nodes) -> frozenset:
        out = {triple}
        for node in nodes:
            out |= self.parser.role(node)[1]
        return frozenset(out)

    def sub_property(self, triple, p, q, kind: str, both: bool = False) -> None:
        """P ⊑ Q gives ∃P ⊑ ∃Q and ∃P⁻ ⊑ ∃Q⁻ (data properties: ∃U ⊑ ∃V only; a literal has no concept)."""
        if self.is_annotation(p, q):
            self.annotations.add(triple)
            return
        sign = "≡" if both else "⊑"
        text = f"{self.show_role(p)} {sign} {self.show_role(q)}"
        roles, used, problem = self.roles(p, q)
        used = used | {triple}
        if roles is None:
            self.skip(kind, text, problem, used)
            return
        ax = _Axiom(kind, text, used)
        pairs = [(roles[0], roles[1])] + ([(roles[1], roles[0])] if both else [])
        for r, s in pairs:
            ax.pi(exists_of(r), exists_of(s), kind)
            if not r.data:
                ax.pi(exists_of(r.flipped()), exists_of(s.flipped()), kind)
                self.role_pis.append((exists_of(r), exists_of(s)))
            if not (r.inverse or s.inverse):
                self.role_inclusions.append((r.iri, s.iri))
        self.record(ax)

    def inverse(self, triple, p, q) -> None:
        """P inverseOf Q: ∃P ≡ ∃Q⁻ and ∃P⁻ ≡ ∃Q."""
        text = f"{self.show_role(p)} inverseOf {self.show_role(q)}"
        roles, used, problem = self.roles(p, q)
        used = used | {triple}
        if roles is None or roles[0].data:
            self.skip("inverseOf", text, problem or "data properties have no inverse", used)
            return
        ax = _Axiom("inverseOf", text, used)
        r, s = roles
        for x, y in ((exists_of(r), exists_of(s.flipped())), (exists_of(r.flipped()), exists_of(s))):
            ax.pi(x, y, "inverseOf")
            ax.pi(y, x, "inverseOf")
        self.role_pis += [(exists_of(r), exists_of(s.flipped())), (exists_of(s.flipped()), exists_of(r))]
        self.record(ax)

    def domain_or_range(self, triple, p, c, kind: str) -> None:
        """domain(P) = C is ∃P ⊑ C, range(P) = C is ∃P⁻ ⊑ C; a data property's domain is ∃U ⊑ C (a literal
        object gives its subject the concept ∃U), its range is a data range (no concept)."""
        if self.is_annotation(p):
            self.annotations.add(triple)
            return
        role, role_triples, problem = self.parser.role(p)
        data = role is not None and role.data
        target = self.parser.cls(c, data=data and kind == "range")
        used = frozenset({triple}) | role_triples | target.triples
        text = f"{kind}({self.show_role(p)}) = {show(target)}"
        if role is None:
            self.skip(kind, text, f"{problem}: not a DL-Lite role", used)
            return
        if kind == "range" and (data or isinstance(target, DataRange)):
            if isinstance(target, DataRange) and target.top:
                self.record(_Axiom("range (datatype)", text, used))    # rdfs:Literal: holds for every literal
            else:
                self.skip("range (datatype)", text, NOT_CONCEPTS, used)
            return
        ax = _Axiom(kind, text, used)
        self.include(ax, Restriction("some", role.flipped() if kind == "range" else role), target)
        self.record(ax)

    def symmetric(self, p) -> None:
        triple = (p, RDF.type, OWL.SymmetricProperty)
        roles, used, problem = self.roles(p)
        used = used | {triple}
        text = f"SymmetricProperty({show_node(p)})"
        if roles is None or roles[0].data:
            self.skip("SymmetricProperty", text, problem or "a data property cannot be symmetric", used)
            return
        ax = _Axiom("SymmetricProperty", text, used)
        ax.pi(exists_of(roles[0]), exists_of(roles[0].flipped()), "SymmetricProperty")
        ax.pi(exists_of(roles[0].flipped()), exists_of(roles[0]), "SymmetricProperty")
        self.role_pis += [(exists_of(roles[0]), exists_of(roles[0].flipped())),
                          (exists_of(roles[0].flipped()), exists_of(roles[0]))]
        self.record(ax)

    def chain(self, p, chain) -> None:
        """A chain of one property is a sub-property axiom; longer chains are outside DL-Lite."""
        items, used = self.parser.items(chain)
        triple = (p, OWL.propertyChainAxiom, chain)
        if items is not None and len(items) == 1:
            roles, role_used, _ = self.roles(items[0])
            if roles is not None:
                self.sub_property(triple, items[0], p, "propertyChainAxiom")
                self.used |= used | role_used
                return
        for item in items or ():
            used |= self.parser.role(item)[1]
        text = f"{self.show_role(p)} ⊒ " + " ∘ ".join(map(self.show_role, items or ()))
        self.skip("propertyChainAxiom", text, "property chains are outside DL-Lite", used | {triple})
