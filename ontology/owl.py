"""Load a DL-Lite TBox from an OWL ontology in RDF (RDF/XML, Turtle, N-Triples) with rdflib.

OWL/XML files are read through owlready2, which hands rdflib the equivalent triples.

What is kept (DL-Lite_R over basic concepts A, exists P, exists P^-):
  PIs  named subClassOf / equivalentClass; rdfs:domain (exists P ⊑ A); rdfs:range (exists P^- ⊑ A);
       subPropertyOf (exists P ⊑ exists Q, exists P^- ⊑ exists Q^-); inverseOf; SymmetricProperty;
       A ⊑ exists R.B (kept as A ⊑ exists R); exists R ⊑ A; A ⊑ B ⊓ C (split); disjointUnionOf's members.
  NIs  disjointWith, AllDisjointClasses, disjointUnionOf, A ⊑ ¬B and A ≡ ¬B (named complement).
Everything else goes to the loader report with its kind and a rendering of the axiom: never silently
dropped, never fatal. A file that is missing, not RDF, or RDF without any OWL class is an OntologyError
naming the file (and line, when the parser knows it).
"""
from __future__ import annotations

import logging
import os
import re
from collections import Counter

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS

from srtopo.concepts import exists, exists_inverse, local_name
from srtopo.errors import OntologyError
from srtopo.ontology.model import LoaderReport, NegativeInclusion, SkippedAxiom, TBox

_HINT = "give an OWL ontology serialised as RDF/XML, Turtle, N-Triples or OWL/XML"


# --- reading the file -------------------------------------------------------------------------------

def _guess_format(path: str, head: str) -> list[str]:
    ext = os.path.splitext(path)[1].lower()
    text = head.lstrip("\ufeff \t\r\n")
    if text.startswith("<"):
        if re.search(r"<(\w+:)?Ontology[\s>]", head) and "rdf:RDF" not in head and "RDF" not in head[:2000]:
            return ["owlxml"]
        return ["xml", "turtle"]
    if ext == ".nt":
        return ["nt", "turtle"]
    return ["turtle", "xml"] if ext not in (".owl", ".rdf", ".xml") else ["turtle", "xml"]


def _located(error: Exception) -> tuple[int | None, str]:
    """(line, message) from whatever rdflib or the XML parser raised."""
    line = None
    if hasattr(error, "getLineNumber"):
        try:
            line = int(error.getLineNumber())
        except Exception:   # noqa: BLE001 - best effort location only
            line = None
    argstr, index = getattr(error, "_str", None), getattr(error, "_i", None)   # rdflib's BadSyntax
    message = None
    if line is None and isinstance(argstr, (str, bytes)) and isinstance(index, int):
        text = argstr.decode("utf-8", "replace") if isinstance(argstr, bytes) else argstr
        line = text[:index].count("\n") + 1
        near = text[index:index + 40].split("\n")[0]
        message = f"{getattr(error, '_why', 'bad syntax')} near {near!r}"
    if message is None:
        message = error.getMessage() if hasattr(error, "getMessage") else str(error)
    if line is None:
        match = re.search(r"line (\d+)", str(message))
        if match:
            line = int(match.group(1))
    message = " ".join(str(message).split())
    message = re.sub(r"^file:///\S+?:\d+:\d+: ", "", message)
    if len(message) > 200:
        message = message[:200] + "..."
    return line, message


def _owlxml_as_ntriples(path: str) -> str:
    """OWL/XML is not RDF: owlready2 reads it and hands rdflib the equivalent triples."""
    import contextlib
    import io

    import owlready2
    world = owlready2.World()
    with contextlib.redirect_stderr(io.StringIO()):   # owlready2 prints parser tracebacks itself
        try:
            ontology = world.get_ontology("file://" + os.path.abspath(path)).load()
        except Exception as error:   # noqa: BLE001 - re-raised with a plain message
            match = re.search(r"(OWL/XML parsing error).*?(line \d+, column \d+)", str(error))
            text = f"{match.group(1)} at {match.group(2)}" if match else type(error).__name__
            raise ValueError(text) from None
    buffer = io.BytesIO()
    ontology.save(file=buffer, format="ntriples")
    return buffer.getvalue().decode("utf-8")


def read_graph(path: str) -> Graph:
    if not os.path.exists(path):
        raise OntologyError("file not found", file=path, hint="check the path given to --tbox")
    if os.path.isdir(path):
        raise OntologyError("is a directory, not an ontology file", file=path, hint=_HINT)
    with open(path, "rb") as handle:
        raw = handle.read(65536)
    if b"\x00" in raw:
        raise OntologyError("binary file, not an RDF ontology", file=path, hint=_HINT)
    head = raw.decode("utf-8", errors="replace")
    formats = _guess_format(path, head)
    first_error: tuple[int | None, str] | None = None
    for fmt in formats:
        graph = Graph()
        quiet = logging.getLogger("rdflib")
        level = quiet.level
        quiet.setLevel(logging.CRITICAL)   # rdflib logs noise while a wrong format is tried
        try:
            if fmt == "owlxml":
                graph.parse(data=_owlxml_as_ntriples(path), format="nt")
            else:
                graph.parse(path, format=fmt)
            return graph
        except OntologyError:
            raise
        except Exception as error:   # noqa: BLE001 - rdflib raises many types; we re-raise ours
            if first_error is None:
                first_error = _located(error)
        finally:
            quiet.setLevel(level)
    line, message = first_error or (None, "unknown parse error")
    name = {"xml": "RDF/XML", "turtle": "Turtle", "nt": "N-Triples", "owlxml": "OWL/XML"}[formats[0]]
    raise OntologyError(f"not readable as {name}: {message}", file=path, line=line, hint=_HINT)


# --- from triples to axioms -------------------------------------------------------------------------

class _Loader:
    def __init__(self, graph: Graph, source: str):
        self.g = graph
        self.source = source
        self.pis: list[tuple[str, str]] = []
        self.nis: list[NegativeInclusion] = []
        self.role_inclusions: list[tuple[str, str]] = []
        self.pi_kinds: Counter = Counter()
        self.ni_kinds: Counter = Counter()
        self.skipped: list[SkippedAxiom] = []
        self.concepts: set[str] = set()

    # rendering ---------------------------------------------------------------------------------
    def show(self, node, depth: int = 0) -> str:
        g = self.g
        if isinstance(node, URIRef):
            return local_name(str(node))
        if isinstance(node, Literal):
            return repr(str(node))
        if depth > 3:
            return "[...]"
        props = {str(p).split("#")[-1]: o for p, o in g.predicate_objects(node) if p != RDF.type}
        if "onProperty" in props:
            rest = ", ".join(f"{k} {self.show(v, depth + 1)}" for k, v in props.items() if k != "onProperty")
            return f"[{self.show(props['onProperty'], depth + 1)}: {rest}]"
        for key in ("unionOf", "intersectionOf", "oneOf"):
            if key in props:
                items = [self.show(x, depth + 1) for x in self._list(props[key])]
                return f"{key}(" + ", ".join(items) + ")"
        if "complementOf" in props:
            return "not " + self.show(props["complementOf"], depth + 1)
        if "inverseOf" in props:
            return self.show(props["inverseOf"], depth + 1) + "^-"
        return "[" + ", ".join(f"{k} {self.show(v, depth + 1)}" for k, v in props.items()) + "]"

    def _list(self, node):
        try:
            return list(Collection(self.g, node))
        except Exception:   # noqa: BLE001 - a malformed list is reported by the caller
            return []

    def skip(self, kind: str, text: str, reason: str) -> None:
        self.skipped.append(SkippedAxiom(kind, text, reason))

    # basic expressions ---------------------------------------------------------------------------
    def role(self, node) -> tuple[str, bool] | None:
        """(property IRI, inverse?) for P or an anonymous inverse(P)."""
        if isinstance(node, URIRef):
            return str(node), False
        inner = self.g.value(node, OWL.inverseOf)
        if isinstance(inner, URIRef):
            return str(inner), True
        return None

    def exists_concept(self, role: tuple[str, bool]) -> str:
        name, inverse = role
        return exists_inverse(name) if inverse else exists(name)

    def is_thing(self, node) -> bool:
        return node is None or node in (OWL.Thing, RDFS.Literal) or (
            isinstance(node, URIRef) and str(node).startswith("http://www.w3.org/2001/XMLSchema#"))

    def basic(self, node) -> str | None:
        """A basic concept for a class expression usable on the left of ⊑: A or exists R (unqualified)."""
        if isinstance(node, URIRef):
            if node == OWL.Thing:
                return None
            return str(node)
        if isinstance(node, BNode):
            some = self.g.value(node, OWL.someValuesFrom)
            prop = self.g.value(node, OWL.onProperty)
            if some is not None and prop is not None and self.is_thing(some):
                role = self.role(prop)
                if role is not None:
                    return self.exists_concept(role)
            min_card = self.g.value(node, OWL.minCardinality) or self.g.value(node, OWL.minQualifiedCardinality)
            if prop is not None and min_card is not None and str(min_card) == "1":
                on_class = self.g.value(node, OWL.onClass)
                if self.is_thing(on_class):
                    role = self.role(prop)
                    if role is not None:
                        return self.exists_concept(role)
        return None

    def rhs(self, node) -> list[str] | None:
        """Concepts C_i with X ⊑ node equivalent to X ⊑ C_1, ..., X ⊑ C_n (None if not DL-Lite)."""
        basic = self.basic(node)
        if basic is not None:
            return [basic]
        if node == OWL.Thing:
            return []
        if isinstance(node, BNode):
            some = self.g.value(node, OWL.someValuesFrom)
            prop = self.g.value(node, OWL.onProperty)
            if some is not None and prop is not None and self.role(prop) is not None:
                return [self.exists_concept(self.role(prop))]   # A ⊑ exists R.B kept as A ⊑ exists R
            members = self.g.value(node, OWL.intersectionOf)
            if members is not None:
                out: list[str] = []
                for member in self._list(members):
                    part = self.rhs(member)
                    if part is None:
                        return None
                    out.extend(part)
                return out
        return None

    def complement(self, node) -> str | None:
        if isinstance(node, BNode):
            inner = self.g.value(node, OWL.complementOf)
            if inner is not None:
                return self.basic(inner)
        return None

    # axioms ----------------------------------------------------------------------------------------
    def add_pi(self, sub: str, sup: str, kind: str) -> None:
        self.pis.append((sub, sup))
        self.pi_kinds[kind] += 1

    def add_ni(self, a: str, b: str, kind: str, text: str) -> None:
        self.nis.append(NegativeInclusion(a, b, f"{kind}: {text}"))
        self.ni_kinds[kind] += 1

    def subclass(self, sub, sup, kind: str = "subClassOf") -> None:
        text = f"{self.show(sub)} ⊑ {self.show(sup)}"
        left = self.basic(sub)
        if left is None:
            if sub == OWL.Thing:
                self.skip(kind, text, "owl:Thing on the left is outside DL-Lite")
            else:
                self.skip(kind, text, "the subclass is not a basic concept (A, exists R)")
            return
        negated = self.complement(sup)
        if negated is not None:
            self.add_ni(left, negated, "complementOf", text)
            return
        right = self.rhs(sup)
        if right is None:
            self.skip(kind, text, "the superclass is not a basic concept, exists R.B or a conjunction of them")
            return
        if isinstance(sup, URIRef):
            detail = kind
        elif self.basic(sup) is not None:
            detail = f"{kind} exists R"
        elif self.g.value(sup, OWL.someValuesFrom) is not None:
            detail = f"{kind} exists R.B (kept as exists R)"
        else:
            detail = f"{kind} conjunction"
        for concept in right:
            self.add_pi(left, concept, detail)

    def run(self) -> None:
        g = self.g
        for c in set(g.subjects(RDF.type, OWL.Class)) | set(g.subjects(RDF.type, RDFS.Class)):
            if isinstance(c, URIRef) and c != OWL.Thing and c != OWL.Nothing:
                self.concepts.add(str(c))
        properties = set()
        for kind in (OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property):
            properties |= {p for p in g.subjects(RDF.type, kind) if isinstance(p, URIRef)}
        self.n_properties = len(properties)

        for sub, sup in g.subject_objects(RDFS.subClassOf):
            self.subclass(sub, sup)
        for a, b in g.subject_objects(OWL.equivalentClass):
            self.equivalent(a, b)
        for a, b in g.subject_objects(OWL.disjointWith):
            left, right = self.basic(a), self.basic(b)
            text = f"{self.show(a)} disjointWith {self.show(b)}"
            if left is None or right is None:
                self.skip("disjointWith", text, "a side is not a basic concept")
            else:
                self.add_ni(left, right, "disjointWith", text)
        for node in g.subjects(RDF.type, OWL.AllDisjointClasses):
            members = self._list(g.value(node, OWL.members))
            basics = [self.basic(m) for m in members]
            text = "AllDisjointClasses(" + ", ".join(self.show(m) for m in members) + ")"
            if any(b is None for b in basics):
                self.skip("AllDisjointClasses", text, "a member is not a basic concept")
                continue
            for i in range(len(basics)):
                for j in range(i + 1, len(basics)):
                    self.add_ni(basics[i], basics[j], "AllDisjointClasses", text)
        for owner, lst in g.subject_objects(OWL.disjointUnionOf):
            members = self._list(lst)
            text = f"{self.show(owner)} disjointUnionOf(" + ", ".join(self.show(m) for m in members) + ")"
            basics = [self.basic(m) for m in members]
            if self.basic(owner) is None or any(b is None for b in basics):
                self.skip("disjointUnionOf", text, "a member is not a basic concept")
                continue
            for b in basics:
                self.add_pi(b, self.basic(owner), "disjointUnionOf member")
            for i in range(len(basics)):
                for j in range(i + 1, len(basics)):
                    self.add_ni(basics[i], basics[j], "disjointUnionOf", text)
            self.skip("disjointUnionOf", text, "the covering part (owner ⊑ union of members) is outside DL-Lite")
        self.properties_axioms()
        self.other_axioms()

    def equivalent(self, a, b) -> None:
        text = f"{self.show(a)} ≡ {self.show(b)}"
        ba, bb = self.basic(a), self.basic(b)
        if ba is not None and bb is not None:
            self.add_pi(ba, bb, "equivalentClass")
            self.add_pi(bb, ba, "equivalentClass")
            return
        for named, expr in ((a, b), (b, a)):
            bn = self.basic(named)
            if bn is None:
                continue
            negated = self.complement(expr)
            if negated is not None:
                self.add_ni(bn, negated, "complementOf", text)
                self.skip("equivalentClass", text, "only the direction A ⊑ not B is DL-Lite (kept as an NI)")
                return
            right = self.rhs(expr)
            if right is not None:
                for concept in right:
                    self.add_pi(bn, concept, "equivalentClass (⊑ direction)")
                self.skip("equivalentClass", text,
                          "only the direction named ⊑ expression is DL-Lite (kept); the other is skipped")
                return
        self.skip("equivalentClass", text, "neither direction is a DL-Lite inclusion")

    def properties_axioms(self) -> None:
        g = self.g
        for p, c in g.subject_objects(RDFS.domain):
            role = self.role(p)
            right = self.rhs(c)
            text = f"domain({self.show(p)}) = {self.show(c)}"
            if role is None or right is None:
                self.skip("domain", text, "domain is not a basic concept")
                continue
            for concept in right:
                self.add_pi(self.exists_concept(role), concept, "domain")
        for p, c in g.subject_objects(RDFS.range):
            role = self.role(p)
            text = f"range({self.show(p)}) = {self.show(c)}"
            if role is None:
                self.skip("range", text, "not a named property")
                continue
            if (p, RDF.type, OWL.DatatypeProperty) in g or isinstance(c, URIRef) and (
                    str(c).startswith("http://www.w3.org/2001/XMLSchema#") or c == RDFS.Literal):
                self.skip("range (datatype)", text, "data ranges are not concepts")
                continue
            right = self.rhs(c)
            if right is None:
                self.skip("range", text, "range is not a basic concept")
                continue
            for concept in right:
                self.add_pi(self.exists_concept((role[0], not role[1])), concept, "range")
        for p, q in g.subject_objects(RDFS.subPropertyOf):
            rp, rq = self.role(p), self.role(q)
            text = f"{self.show(p)} ⊑ {self.show(q)}"
            if rp is None or rq is None:
                self.skip("subPropertyOf", text, "not a (possibly inverse) named property")
                continue
            self.role_inclusions.append((str(p), str(q)))
            self.add_pi(self.exists_concept(rp), self.exists_concept(rq), "subPropertyOf")
            self.add_pi(self.exists_concept((rp[0], not rp[1])), self.exists_concept((rq[0], not rq[1])),
                        "subPropertyOf")
        for p, q in g.subject_objects(OWL.equivalentProperty):
            rp, rq = self.role(p), self.role(q)
            if rp is None or rq is None:
                self.skip("equivalentProperty", f"{self.show(p)} ≡ {self.show(q)}", "not a named property")
                continue
            for x, y in ((rp, rq), (rq, rp)):
                self.add_pi(self.exists_concept(x), self.exists_concept(y), "equivalentProperty")
                self.add_pi(self.exists_concept((x[0], not x[1])), self.exists_concept((y[0], not y[1])),
                            "equivalentProperty")
        for p, q in g.subject_objects(OWL.inverseOf):
            if not (isinstance(p, URIRef) and isinstance(q, URIRef)):
                continue   # anonymous inverse(P) expressions are used inside other axioms
            for x, y in ((exists(str(p)), exists_inverse(str(q))), (exists_inverse(str(p)), exists(str(q)))):
                self.add_pi(x, y, "inverseOf")
                self.add_pi(y, x, "inverseOf")
        for p in g.subjects(RDF.type, OWL.SymmetricProperty):
            if isinstance(p, URIRef):
                self.add_pi(exists(str(p)), exists_inverse(str(p)), "SymmetricProperty")
                self.add_pi(exists_inverse(str(p)), exists(str(p)), "SymmetricProperty")

    def other_axioms(self) -> None:
        g = self.g
        outside = {
            OWL.FunctionalProperty: "FunctionalProperty", OWL.InverseFunctionalProperty: "InverseFunctionalProperty",
            OWL.TransitiveProperty: "TransitiveProperty", OWL.ReflexiveProperty: "ReflexiveProperty",
            OWL.IrreflexiveProperty: "IrreflexiveProperty", OWL.AsymmetricProperty: "AsymmetricProperty",
        }
        for cls, kind in outside.items():
            for p in g.subjects(RDF.type, cls):
                self.skip(kind, f"{kind}({self.show(p)})", "property characteristic outside DL-Lite")
        for p, q in g.subject_objects(OWL.propertyDisjointWith):
            self.skip("propertyDisjointWith", f"{self.show(p)} disjoint {self.show(q)}",
                      "role disjointness does not constrain the concept streams checked here")
        for p, chain in g.subject_objects(OWL.propertyChainAxiom):
            self.skip("propertyChainAxiom", f"{self.show(p)} ⊒ chain", "property chains are outside DL-Lite")
        for key in (OWL.hasKey,):
            for c in g.subjects(key, None):
                self.skip("hasKey", f"hasKey({self.show(c)})", "keys are outside DL-Lite")
        for kind in (OWL.AllDifferent, OWL.NegativePropertyAssertion):
            for node in g.subjects(RDF.type, kind):
                self.skip(local_name(str(kind)), self.show(node), "not a TBox axiom")
        individuals = set(g.subjects(RDF.type, OWL.NamedIndividual))
        if individuals:
            self.skip("ABox assertions", f"{len(individuals)} named individuals",
                      "individuals in the ontology file are ignored; stream them instead")
        for s, o in g.subject_objects(OWL.sameAs):
            self.skip("sameAs", f"{self.show(s)} sameAs {self.show(o)}", "ABox assertion")


def load_tbox(path: str, name: str | None = None) -> TBox:
    """Read an OWL file into a TBox with a loader report (see module docstring for the mapping)."""
    graph = read_graph(path)
    loader = _Loader(graph, path)
    loader.run()
    has_owl = loader.concepts or loader.pis or loader.nis or (None, RDF.type, OWL.Ontology) in graph
    if not has_owl:
        raise OntologyError(f"no OWL classes or axioms found ({len(graph)} triples)", file=path,
                            hint="is this an ontology? " + _HINT)
    concepts = set(loader.concepts)
    report = LoaderReport(
        source=path, classes=len(loader.concepts), properties=loader.n_properties,
        pi_counts=tuple(sorted(loader.pi_kinds.items())), ni_counts=tuple(sorted(loader.ni_kinds.items())),
        skipped=tuple(loader.skipped),
    )
    return TBox.build(loader.pis, loader.nis, concepts=concepts, role_inclusions=loader.role_inclusions,
                      name=name or os.path.splitext(os.path.basename(path))[0], report=report)
