"""Class, property and data-range expressions of an OWL 2 ontology in RDF, parsed from its triples.

Follows the reverse mapping of "OWL 2 Web Ontology Language Mapping to RDF Graphs" (section 3.2, tables 11-13):
a blank node with ``owl:intersectionOf``, ``owl:onProperty``, ``owl:inverseOf``, ... is an expression. Every
expression records the triples it was read from (its own, those of its lists and of its sub-expressions), so
the loader can show that each triple of the file was used or accounted for. A blank node that matches no
construct parses as ``Unknown`` and consumes nothing: its triples stay left over and are reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from srtopo.concepts import local_name

#: datatypes of the OWL 2 datatype map (section 4 of the Structural Specification) plus rdfs:Literal
BUILTIN_DATATYPES = frozenset({RDFS.Literal, RDF.PlainLiteral, RDF.XMLLiteral, RDF.langString, RDF.HTML,
                               OWL.real, OWL.rational})
#: annotation properties every OWL 2 ontology may use without declaring them (Structural Specification 5.5)
BUILTIN_ANNOTATION_PROPERTIES = frozenset({RDFS.label, RDFS.comment, RDFS.seeAlso, RDFS.isDefinedBy,
                                           OWL.versionInfo, OWL.deprecated, OWL.priorVersion,
                                           OWL.backwardCompatibleWith, OWL.incompatibleWith})
SPECIAL_PROPERTIES = frozenset({OWL.topObjectProperty, OWL.bottomObjectProperty, OWL.topDataProperty,
                                OWL.bottomDataProperty})
CARDINALITIES = {  # predicate -> (kind, qualified?)
    OWL.minCardinality: ("min", False), OWL.maxCardinality: ("max", False), OWL.cardinality: ("exact", False),
    OWL.minQualifiedCardinality: ("min", True), OWL.maxQualifiedCardinality: ("max", True),
    OWL.qualifiedCardinality: ("exact", True),
}

Triple = tuple


@dataclass(frozen=True)
class Role:
    """A property expression: a named property or the inverse of one (only object properties invert)."""
    iri: str
    inverse: bool = False
    data: bool = False

    def flipped(self) -> "Role":
        return Role(self.iri, not self.inverse, self.data)

    def show(self) -> str:
        return local_name(self.iri) + ("⁻" if self.inverse else "")


@dataclass(frozen=True)
class Expr:
    """A class expression or data range; ``triples`` are those it was parsed from."""
    triples: frozenset = field(default=frozenset(), compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Named(Expr):
    iri: URIRef          # a class IRI, owl:Thing and owl:Nothing included


@dataclass(frozen=True)
class DataRange(Expr):
    """A datatype or a data range built from datatypes: never a concept."""
    text: str
    top: bool = False    # rdfs:Literal, the range of every data property


@dataclass(frozen=True)
class And(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Or(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Not(Expr):
    inner: Expr


@dataclass(frozen=True)
class OneOf(Expr):
    items: tuple


@dataclass(frozen=True)
class Restriction(Expr):
    """kind: some, all, value, self, min, max, exact. ``filler`` None means unqualified (owl:Thing)."""
    kind: str
    role: Role | None
    filler: Expr | None = None
    n: int | None = None
    value: object = None
    role_problem: str = ""   # why ``role`` is None


@dataclass(frozen=True)
class Unknown(Expr):
    """A construct the loader recognises but cannot read as a concept (n-ary restrictions, malformed lists),
    or a blank node that is no construct at all (then ``triples`` is empty and its triples are left over)."""
    node: object
    what: str


def is_top(expr: Expr | None) -> bool:
    """owl:Thing, rdfs:Literal, or an unqualified filler."""
    return expr is None or (isinstance(expr, Named) and expr.iri == OWL.Thing) or (
        isinstance(expr, DataRange) and expr.top)


def is_bottom(expr: Expr | None) -> bool:
    return isinstance(expr, Named) and expr.iri == OWL.Nothing


class ExpressionParser:
    """Reads expressions off a graph; ``data_properties`` and ``datatypes`` are the declared ones."""

    def __init__(self, graph, data_properties=frozenset(), datatypes=frozenset()):
        self.g = graph
        self.data_properties = frozenset(data_properties)
        self.datatypes = frozenset(datatypes) | BUILTIN_DATATYPES
        self._open: set = set()    # blank nodes being parsed: a cycle of blank nodes is no expression
        #: the named classes and properties met where an axiom expects one (a file need not declare them)
        self.classes: set = set()
        self.properties: set = set()
        #: properties an axiom's context makes data properties though the file does not declare them (beside a
        #: declared one, or with a datatype filler)
        self.data_roles: set = set()

    # lists and properties ----------------------------------------------------------------------
    def items(self, node) -> tuple[list | None, frozenset]:
        """The members of an RDF list and the list's triples (None if the list is malformed)."""
        out, used, seen = [], set(), set()
        while node != RDF.nil:
            if not isinstance(node, BNode) or node in seen:
                return None, frozenset()
            seen.add(node)
            first, rest = self.g.value(node, RDF.first), self.g.value(node, RDF.rest)
            if first is None or rest is None:
                return None, frozenset()
            out.append(first)
            used |= {(node, RDF.first, first), (node, RDF.rest, rest)}
            if (node, RDF.type, RDF.List) in self.g:
                used.add((node, RDF.type, RDF.List))
            node = rest
        return out, frozenset(used)

    def is_datatype(self, node) -> bool:
        return isinstance(node, URIRef) and (node in self.datatypes or str(node).startswith(str(XSD)))

    def role(self, node) -> tuple[Role | None, frozenset, str]:
        """(role, triples, problem): a named property or ``[ owl:inverseOf P ]`` (nested inverses flip)."""
        if isinstance(node, URIRef):
            if node in SPECIAL_PROPERTIES:
                return None, frozenset(), "the universal and empty properties"
            self.properties.add(node)
            return Role(str(node), False, node in self.data_properties), frozenset(), ""
        inner = self.g.value(node, OWL.inverseOf) if isinstance(node, BNode) else None
        if inner is None or node in self._open:
            return None, frozenset(), "an unrecognised property expression"
        self._open.add(node)
        try:
            role, used, problem = self.role(inner)
        finally:
            self._open.discard(node)
        if role is None:
            return None, frozenset(), problem
        if role.data:
            return None, frozenset(), "the inverse of a data property"
        return role.flipped(), used | {(node, OWL.inverseOf, inner)}, ""

    # class expressions and data ranges -------------------------------------------------------------
    def cls(self, node, data: bool = False) -> Expr:
        """The class expression (or, with ``data`` or for a datatype, the data range) at ``node``."""
        if isinstance(node, URIRef):
            if data or self.is_datatype(node):
                return DataRange(local_name(str(node)), top=node == RDFS.Literal)
            if node not in (OWL.Thing, OWL.Nothing):
                self.classes.add(node)
            return Named(node)
        if not isinstance(node, BNode):
            return Unknown(node, "a literal where a class is expected")
        if node in self._open:
            return Unknown(node, "a cycle of blank nodes")
        self._open.add(node)
        try:
            return self._anonymous(node, data)
        finally:
            self._open.discard(node)

    def _anonymous(self, node, data: bool) -> Expr:
        types = set(self.g.objects(node, RDF.type))
        if data or types & {RDFS.Datatype, OWL.DataRange}:
            return self.data_range(node, types)
        if (node, OWL.onProperty, None) in self.g or (node, OWL.onProperties, None) in self.g:
            return self.restriction(node)
        for predicate in (OWL.intersectionOf, OWL.unionOf, OWL.complementOf, OWL.oneOf):
            value = self.g.value(node, predicate)
            if value is not None:
                typed = {(node, RDF.type, t) for t in types & {OWL.Class}}
                return self.boolean(predicate, value, frozenset(typed | {(node, predicate, value)}))
        return Unknown(node, "an unrecognised class expression")

    def boolean(self, predicate, value, used: frozenset) -> Expr:
        """``owl:intersectionOf``, ``unionOf``, ``complementOf`` or ``oneOf`` with its object ``value``; also
        used for the OWL 1 form where these hang off a named class."""
        if predicate == OWL.complementOf:
            inner = self.cls(value)
            return Not(inner, triples=used | inner.triples)
        members, list_triples = self.items(value)
        if members is None:
            return Unknown(value, "a malformed RDF list", triples=used)
        used = used | list_triples
        if predicate == OWL.oneOf:
            return OneOf(tuple(members), triples=used)
        parts = tuple(self.cls(m) for m in members)
        for part in parts:
            used = used | part.triples
        return (And if predicate == OWL.intersectionOf else Or)(parts, triples=used)

    def data_range(self, node, types) -> Expr:
        """A blank-node data range (table 12): parsed for its triples only, since no data range is a concept."""
        used = {(node, RDF.type, t) for t in types & {RDFS.Datatype, OWL.DataRange}}
        text = "data range"
        for predicate in (OWL.intersectionOf, OWL.unionOf, OWL.oneOf, OWL.withRestrictions):
            value = self.g.value(node, predicate)
            if value is None:
                continue
            members, list_triples = self.items(value)
            if members is None:
                return Unknown(node, "a malformed RDF list")
            used |= {(node, predicate, value)} | list_triples
            for member in members:
                if predicate == OWL.withRestrictions and isinstance(member, BNode):
                    used |= set(self.g.triples((member, None, None)))   # facet restriction: xsd:minInclusive 5
                elif predicate in (OWL.intersectionOf, OWL.unionOf):
                    used |= self.cls(member, data=True).triples
            text = f"{local_name(str(predicate))}(...)"
        for predicate in (OWL.datatypeComplementOf, OWL.onDatatype):
            value = self.g.value(node, predicate)
            if value is not None:
                used |= {(node, predicate, value)} | self.cls(value, data=True).triples
                text = f"{local_name(str(predicate))} {local_name(str(value))}"
        if not used - {(node, RDF.type, t) for t in types}:
            return Unknown(node, "an unrecognised data range")
        return DataRange(text, triples=frozenset(used))

    def restriction(self, node) -> Expr:
        g = self.g
        used = {(node, RDF.type, OWL.Restriction)} if (node, RDF.type, OWL.Restriction) in g else set()
        prop = g.value(node, OWL.onProperty)
        if prop is None:   # owl:onProperties: an n-ary data restriction
            props = g.value(node, OWL.onProperties)
            members, list_triples = self.items(props)
            used |= {(node, OWL.onProperties, props)} | list_triples
            for predicate in (OWL.someValuesFrom, OWL.allValuesFrom):
                value = g.value(node, predicate)
                if value is not None:
                    used |= {(node, predicate, value)} | self.cls(value, data=True).triples
            return Unknown(node, "an n-ary data restriction (owl:onProperties)", triples=frozenset(used))
        used.add((node, OWL.onProperty, prop))
        role, role_triples, problem = self.role(prop)
        used |= role_triples
        data_filler = g.value(node, OWL.onDataRange)
        data = (role is not None and role.data) or data_filler is not None
        if role is not None and data_filler is not None and not role.data:
            role = Role(role.iri, role.inverse, True)
            self.data_roles.add(role.iri)

        def make(kind, filler=None, n=None, value=None, extra=frozenset()):
            triples = frozenset(used) | extra | (filler.triples if filler is not None else frozenset())
            return Restriction(kind, role, filler, n, value, problem, triples=triples)

        for predicate, kind in ((OWL.someValuesFrom, "some"), (OWL.allValuesFrom, "all")):
            value = g.value(node, predicate)
            if value is not None:
                filler = self.cls(value, data=data)
                if isinstance(filler, DataRange) and role is not None and not role.data:
                    role = Role(role.iri, role.inverse, True)   # an undeclared property with a datatype filler
                    self.data_roles.add(role.iri)
                return make(kind, filler, extra=frozenset({(node, predicate, value)}))
        value = g.value(node, OWL.hasValue)
        if value is not None:
            return make("value", value=value, extra=frozenset({(node, OWL.hasValue, value)}))
        value = g.value(node, OWL.hasSelf)
        if value is not None:
            return make("self", extra=frozenset({(node, OWL.hasSelf, value)}))
        for predicate, (kind, qualified) in CARDINALITIES.items():
            value = g.value(node, predicate)
            if value is None:
                continue
            try:
                n = int(value)
            except (TypeError, ValueError):
                return Unknown(node, "a cardinality that is not a number", triples=frozenset(used))
            extra = {(node, predicate, value)}
            filler = None
            if qualified:
                on = data_filler if data_filler is not None else g.value(node, OWL.onClass)
                if on is not None:
                    extra.add((node, OWL.onDataRange if data_filler is not None else OWL.onClass, on))
                    filler = self.cls(on, data=data)
            return make(kind, filler, n, extra=frozenset(extra))
        return Unknown(node, "a restriction without a recognised constraint", triples=frozenset(used))


# --- rendering -------------------------------------------------------------------------------------

def show_node(node) -> str:
    if isinstance(node, URIRef):
        return local_name(str(node))
    if isinstance(node, Literal):
        return repr(str(node))
    return "[]"


def show(expr: Expr | None) -> str:
    """A compact description-logic rendering: ``Person ⊓ ∃headOf.Department``."""
    if expr is None:
        return "owl:Thing"
    if isinstance(expr, Named):
        return {OWL.Thing: "owl:Thing", OWL.Nothing: "owl:Nothing"}.get(expr.iri, local_name(str(expr.iri)))
    if isinstance(expr, DataRange):
        return expr.text
    if isinstance(expr, (And, Or)):
        sign = " ⊓ " if isinstance(expr, And) else " ⊔ "
        return "(" + sign.join(show(i) for i in expr.items) + ")"
    if isinstance(expr, Not):
        return "¬" + show(expr.inner)
    if isinstance(expr, OneOf):
        return "{" + ", ".join(show_node(i) for i in expr.items) + "}"
    if isinstance(expr, Restriction):
        role = expr.role.show() if expr.role is not None else "?"
        filler = "" if is_top(expr.filler) else "." + show(expr.filler)
        if expr.kind == "some":
            return f"∃{role}{filler}"
        if expr.kind == "all":
            return f"∀{role}.{show(expr.filler)}"
        if expr.kind == "value":
            return f"∃{role}.{{{show_node(expr.value)}}}"
        if expr.kind == "self":
            return f"∃{role}.Self"
        sign = {"min": "≥", "max": "≤", "exact": "="}[expr.kind]
        return f"{sign}{expr.n} {role}{filler}"
    if isinstance(expr, Unknown):
        return f"[{expr.what}]"
    return "?"


# --- declarations ----------------------------------------------------------------------------------

def is_vocabulary_term(node) -> bool:
    """An IRI of the OWL, RDF, RDFS or XSD namespaces."""
    return isinstance(node, URIRef) and any(str(node).startswith(str(ns)) for ns in (OWL, RDF, RDFS, XSD))


@dataclass(frozen=True)
class Vocabulary:
    """The entities a file declares (Structural Specification section 5.8): what kind each IRI is."""
    classes: frozenset
    object_properties: frozenset
    data_properties: frozenset
    annotation_properties: frozenset
    datatypes: frozenset
    individuals: frozenset
    ontologies: frozenset

    @staticmethod
    def of(graph) -> "Vocabulary":
        def typed(*kinds):
            return frozenset(s for kind in kinds for s in graph.subjects(RDF.type, kind) if isinstance(s, URIRef))
        classes = typed(OWL.Class, RDFS.Class, OWL.DeprecatedClass) - {OWL.Thing, OWL.Nothing}
        # a class assertion makes its subject an individual; owl:Thing and class expressions included
        asserted = frozenset(s for s, o in graph.subject_objects(RDF.type)
                             if isinstance(s, URIRef) and (not is_vocabulary_term(o) or o == OWL.Thing))
        return Vocabulary(
            classes=classes,
            object_properties=typed(OWL.ObjectProperty, RDF.Property, OWL.DeprecatedProperty),
            data_properties=typed(OWL.DatatypeProperty),
            annotation_properties=typed(OWL.AnnotationProperty) | BUILTIN_ANNOTATION_PROPERTIES,
            datatypes=typed(RDFS.Datatype),
            individuals=typed(OWL.NamedIndividual) | asserted,
            ontologies=typed(OWL.Ontology),
        )

    def entities(self) -> frozenset:
        return (self.classes | self.object_properties | self.data_properties | self.annotation_properties
                | self.datatypes | self.ontologies)
