"""The DL-Lite loader against a real OWL reasoner: HermiT (bundled with owlready2) classifies the original ontology,
the DL-Lite image of the loaded TBox, and that image plus the triples of every skipped axiom.

For univ-bench.owl (both serialisations) and T_ex, over the named classes:
* nothing we infer is unsound: our PI closure is inside HermiT's classification of the original;
* our closure is exactly what the DL-Lite image entails (the closure computation is complete for the image);
* every subsumption HermiT finds that we lack is explained by the skipped axioms: HermiT finds it once their
  triples are added to the image (and the image plus the skipped triples entails nothing the original does not).
One Java run per ontology and variant, about a second each; the OWL 2 constructs fixture takes ~25 s (one run
for both of its tests).
"""
from __future__ import annotations

import contextlib
import io
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from rdflib import BNode, Graph, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from srtopo.concepts import role_of
from srtopo.consistency.hierarchy import Hierarchy
from srtopo.consistency.nis import analyse
from tests.consistency.owl2_constructs import CASES
from tests.consistency.test_owl_constructs import load_with_graph, turtle

owlready2 = pytest.importorskip("owlready2")
# one worker runs the whole module, and each classification is a fixture of the session: it runs once, not once per
# worker that meets one of its tests, nor again when the worker runs other modules' tests between two of these
pytestmark = [pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs a Java runtime"), pytest.mark.slow,
              pytest.mark.xdist_group("hermit")]

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
ONTOLOGIES = {
    "univ-bench (owl-toolkit)": DATA / "lubm" / "owl-toolkit" / "univ-bench.owl",
    "univ-bench (swat-lehigh)": DATA / "lubm" / "swat-lehigh" / "univ-bench.owl",
    "T_ex": ROOT / "examples" / "tex.ttl",
}


@dataclass(frozen=True)
class Classification:
    subsumptions: frozenset   # (sub, super) between satisfiable named classes, sub != super
    unsatisfiable: frozenset


def hermit(graph: Graph, classes: frozenset, tmp: Path) -> Classification:
    """HermiT's classification of ``graph`` restricted to ``classes`` (owl:imports left out: nothing is fetched)."""
    path = tmp / f"hermit-{len(list(tmp.iterdir()))}.nt"
    copy = Graph()
    for triple in graph:
        if triple[1] != OWL.imports:
            copy.add(triple)
    path.write_bytes(copy.serialize(format="nt", encoding="utf-8"))
    world = owlready2.World()
    world.get_ontology(path.as_uri()).load()
    with contextlib.redirect_stderr(io.StringIO()):   # owlready2 warns about the cycles equivalences make
        owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
    unsatisfiable = frozenset(str(c.iri) for c in world.inconsistent_classes()) & classes
    pairs = set()
    for cls in world.classes():
        sub = str(cls.iri)
        if sub not in classes or sub in unsatisfiable:
            continue
        for sup in cls.ancestors():
            if sup is not cls and isinstance(sup, owlready2.ThingClass) and str(sup.iri) in classes:
                pairs.add((sub, str(sup.iri)))
    world.close()
    return Classification(frozenset(pairs), unsatisfiable)


def concept_node(graph: Graph, concept: str, data_properties) -> URIRef | BNode:
    """A basic concept as an OWL class expression: A, [ owl:onProperty P ; owl:someValuesFrom owl:Thing ], ..."""
    role = role_of(concept)
    if role is None:
        return URIRef(concept)
    name, inverse = role
    node, prop = BNode(), URIRef(name)
    if inverse:
        prop = BNode()
        graph.add((prop, OWL.inverseOf, URIRef(name)))
    graph.add((node, RDF.type, OWL.Restriction))
    graph.add((node, OWL.onProperty, prop))
    graph.add((node, OWL.someValuesFrom, RDFS.Literal if URIRef(name) in data_properties else OWL.Thing))
    return node


def dllite_image(tbox, original: Graph) -> Graph:
    """The loaded TBox as OWL: the file's declarations, one subClassOf per PI, one disjointness per NI."""
    image = Graph()
    for triple in tbox.report.accounting.declarations:
        image.add(triple)
    data = set(original.subjects(RDF.type, OWL.DatatypeProperty))
    for sub, sup in tbox.pis:
        image.add((concept_node(image, sub, data), RDFS.subClassOf, concept_node(image, sup, data)))
    for ni in tbox.nis:
        left = concept_node(image, ni.left, data)
        if ni.left == ni.right:
            image.add((left, RDFS.subClassOf, OWL.Nothing))
        else:
            image.add((left, OWL.disjointWith, concept_node(image, ni.right, data)))
    return image


def named_classes(graph: Graph) -> frozenset:
    return frozenset(str(c) for c in graph.subjects(RDF.type, OWL.Class) if isinstance(c, URIRef)) - {
        str(OWL.Thing), str(OWL.Nothing)}


def our_classification(tbox, classes: frozenset) -> Classification:
    hierarchy = Hierarchy(tbox)
    unsatisfiable = frozenset(analyse(tbox).unsatisfiable) & classes
    pairs = {(a, b) for a in classes - unsatisfiable for b in classes
             if a != b and a in tbox.concepts and hierarchy.is_sub(a, b)}
    return Classification(frozenset(pairs), unsatisfiable)


@pytest.fixture(scope="session", params=list(ONTOLOGIES))
def compared(request, tmp_path_factory):
    path = ONTOLOGIES[request.param]
    if not path.exists():
        pytest.skip("shared data not available")
    tmp = tmp_path_factory.mktemp("hermit")
    tbox, graph = load_with_graph(str(path))
    classes = named_classes(graph)
    image = dllite_image(tbox, graph)
    explained = Graph()
    for triple in image:
        explained.add(triple)
    for axiom in tbox.report.skipped:
        for triple in axiom.triples:
            explained.add(triple)
    return {"name": request.param, "ours": our_classification(tbox, classes),
            "original": hermit(graph, classes, tmp), "image": hermit(image, classes, tmp),
            "explained": hermit(explained, classes, tmp)}


def test_we_infer_nothing_hermit_does_not(compared):
    ours, original = compared["ours"], compared["original"]
    assert ours.subsumptions <= original.subsumptions
    assert ours.unsatisfiable <= original.unsatisfiable


def test_our_closure_is_what_the_dllite_image_entails(compared):
    assert compared["ours"] == compared["image"]


def test_what_we_lack_is_explained_by_skipped_axioms(compared):
    ours, original, explained = compared["ours"], compared["original"], compared["explained"]
    missing = original.subsumptions - ours.subsumptions
    print(f"{compared['name']}: HermiT {len(original.subsumptions)} subsumptions between named classes, "
          f"ours {len(ours.subsumptions)}, missing {len(missing)}: "
          + ", ".join(sorted(f"{a.split('#')[-1]} ⊑ {b.split('#')[-1]}" for a, b in missing)))
    assert missing <= explained.subsumptions
    assert original.unsatisfiable - ours.unsatisfiable <= explained.unsatisfiable
    assert explained.subsumptions <= original.subsumptions          # the skipped triples are the file's own
    assert explained.unsatisfiable <= original.unsatisfiable


@pytest.fixture(scope="session")
def constructs(tmp_path_factory):
    """The OWL 2 constructs fixture (every case in its own namespace; one left out: HermiT rejects
    owl:topDataProperty outside a super-property position, OWL 2 DL's restriction), its TBox as loaded, and ONE
    HermiT classification of it with probe classes added: one per NI the loader takes, defined as the intersection
    of its two concepts, and one for a pair of a three-class intersection below owl:Nothing. A probe is a fresh
    name defined by an equivalence (a conservative extension): what HermiT finds between the fixture's own classes
    is what it finds without the probes."""
    tmp = tmp_path_factory.mktemp("constructs")
    text = "".join(turtle(i) for i, case in enumerate(CASES) if "topDataProperty" not in case.name)
    path = tmp / "constructs.ttl"
    path.write_text(text)
    tbox, graph = load_with_graph(str(path))
    classes = named_classes(graph)
    data = set(graph.subjects(RDF.type, OWL.DatatypeProperty))
    probes = {}
    for index, ni in enumerate(sorted(tbox.nis)):
        probe = URIRef(f"http://x.org/probe#ni{index}")
        members = [concept_node(graph, ni.left, data), concept_node(graph, ni.right, data)]
        graph.add((probe, RDF.type, OWL.Class))
        graph.add((probe, OWL.equivalentClass, _intersection(graph, members)))
        probes[str(probe)] = ni
    three = next(i for i, case in enumerate(CASES) if case.name.startswith("ObjectIntersectionOf of three"))
    pair = URIRef("http://x.org/probe#three")
    graph.add((pair, RDF.type, OWL.Class))
    graph.add((pair, OWL.equivalentClass, _intersection(graph, [URIRef(f"http://x.org/case{three}#A"),
                                                                 URIRef(f"http://x.org/case{three}#B")])))
    assert not classes & (set(probes) | {str(pair)})
    found = hermit(graph, classes | frozenset(probes) | {str(pair)}, tmp)
    original = Classification(frozenset((a, b) for a, b in found.subsumptions if a in classes and b in classes),
                              found.unsatisfiable & classes)
    return {"tbox": tbox, "classes": classes, "original": original, "probes": probes, "pair": str(pair),
            "found": found}


def test_the_constructs_fixture_is_sound(constructs):
    """Every case of the OWL 2 constructs fixture at once: nothing we infer between named classes, nor any class
    we find unsatisfiable, is unknown to HermiT."""
    ours, original = our_classification(constructs["tbox"], constructs["classes"]), constructs["original"]
    assert ours.unsatisfiable <= original.unsatisfiable
    assert ours.subsumptions <= original.subsumptions
    assert len(ours.subsumptions) > 20 and ours.unsatisfiable


def test_every_ni_of_the_constructs_fixture_is_entailed(constructs):
    """Each NI the loader takes from the constructs fixture (disjointness, complements, intersections below
    owl:Nothing, ≤0 R, ...) is entailed by the case it comes from: HermiT finds its probe class unsatisfiable. An
    intersection of three classes below owl:Nothing makes no two of them disjoint: the probe of a pair of it stays
    satisfiable (why the loader skips it)."""
    probes, found = constructs["probes"], constructs["found"]
    assert len(probes) > 20
    assert {probes[p] for p in set(probes) - found.unsatisfiable} == set()
    assert constructs["pair"] not in found.unsatisfiable


def _intersection(graph: Graph, members) -> BNode:
    from rdflib.collection import Collection
    node, items = BNode(), BNode()
    Collection(graph, items, members)
    graph.add((node, RDF.type, OWL.Class))
    graph.add((node, OWL.intersectionOf, items))
    return node
