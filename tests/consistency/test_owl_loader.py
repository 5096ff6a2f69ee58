"""OWL -> DL-Lite mapping, loader report, and the real NPD / LUBM ontologies."""
from pathlib import Path

import pytest

from srtopo.concepts import exists, exists_inverse
from srtopo.consistency.nis import analyse
from srtopo.consistency.owl import load_tbox
from srtopo.errors import OntologyError

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
X = "http://x.org/o#"

ONTOLOGY = """
@prefix : <http://x.org/o#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:A a owl:Class . :B a owl:Class . :C a owl:Class . :D a owl:Class . :E a owl:Class . :F a owl:Class .
:p a owl:ObjectProperty ; rdfs:domain :A ; rdfs:range :B .
:q a owl:ObjectProperty ; rdfs:subPropertyOf :p .
:r a owl:ObjectProperty ; owl:inverseOf :p .
:age a owl:DatatypeProperty ; rdfs:range xsd:integer .
:C rdfs:subClassOf :A .
:C owl:equivalentClass :D .
:E rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :q ; owl:someValuesFrom :F ] .
:E rdfs:subClassOf [ a owl:Class ; owl:complementOf :F ] .
:A owl:disjointWith :B .
[] a owl:AllDisjointClasses ; owl:members ( :C :E :F ) .
:F rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ; owl:allValuesFrom :B ] .
:p a owl:TransitiveProperty .
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("owl") / "small.ttl"
    path.write_text(ONTOLOGY)
    return load_tbox(str(path))


def test_mapping_of_pis(small):
    pis = set(small.pis)
    assert (exists(X + "p"), X + "A") in pis                       # domain
    assert (exists_inverse(X + "p"), X + "B") in pis               # range
    assert (exists(X + "q"), exists(X + "p")) in pis               # subPropertyOf, both directions
    assert (exists_inverse(X + "q"), exists_inverse(X + "p")) in pis
    assert (exists(X + "r"), exists_inverse(X + "p")) in pis       # inverseOf
    assert (exists_inverse(X + "p"), exists(X + "r")) in pis
    assert (X + "C", X + "A") in pis
    assert (X + "C", X + "D") in pis and (X + "D", X + "C") in pis  # equivalence
    assert (X + "E", exists(X + "q")) in pis                       # E ⊑ exists q.F kept as E ⊑ exists q


def test_mapping_of_nis_and_report(small):
    nis = {n.pair for n in small.nis}
    assert (X + "A", X + "B") in nis
    assert (X + "E", X + "F") in nis                               # complementOf
    assert {(X + "C", X + "E"), (X + "C", X + "F"), (X + "E", X + "F")} <= nis   # AllDisjointClasses
    kinds = small.report.skipped_by_kind()
    assert kinds.get("TransitiveProperty") == 1
    assert kinds.get("range (datatype)") == 1
    assert kinds.get("subClassOf") == 2          # the allValuesFrom axiom, and the filler F of E ⊑ exists q.F
    text = small.report.to_text()
    assert "F ⊑ ∀p.B" in text and "E ⊑ ∃q.F" in text and "TransitiveProperty(p)" in text


def test_equivalences_collapse_and_unsatisfiable(tmp_path):
    path = tmp_path / "u.ttl"
    path.write_text(ONTOLOGY + "\n:G a owl:Class ; rdfs:subClassOf :A , :B .\n")
    analysis = analyse(load_tbox(str(path)))
    assert analysis.hierarchy.rep(X + "C") == analysis.hierarchy.rep(X + "D")
    assert X + "G" in analysis.unsatisfiable
    # exists p ⊑ A and exists p^- ⊑ B: a subject cannot be both; exists q ⊑ exists p lies below A too
    assert analysis.hierarchy.is_sub(exists(X + "q"), X + "A")


@pytest.mark.skipif(not DATA.exists(), reason="shared data not available")
def test_npd_statistics():
    tbox = load_tbox(str(DATA / "npd" / "npd-v2-ql.owl"))
    report = tbox.report
    assert report.classes == 342
    assert dict(report.ni_counts) == {"disjointWith": 51, "AllDisjointClasses": 3}
    assert dict(report.pi_counts)["subClassOf"] == 332
    a = analyse(tbox)
    named = [p for p in a.closure if not p[0].startswith("exists") and not p[1].startswith("exists")]
    assert 15000 < len(named) < 17000     # the project's design notes: ~16k pairs among named classes
    assert len(a.groups) == 5             # the paper also found 5 NI groups for NPD


@pytest.mark.skipif(not DATA.exists(), reason="shared data not available")
@pytest.mark.parametrize("variant", ["owl-toolkit", "swat-lehigh"])
def test_lubm_univ_bench_loads(variant):
    tbox = load_tbox(str(DATA / "lubm" / variant / "univ-bench.owl"))
    assert tbox.report.classes == 43
    assert tbox.nis == ()
    assert "TransitiveProperty" in tbox.report.skipped_by_kind()


def univ_bench_with(tmp_path, variant: str, extra: str):
    """univ-bench.owl of one serialisation plus ``extra`` Turtle, in one Turtle file."""
    from rdflib import Graph
    graph = Graph().parse(str(DATA / "lubm" / variant / "univ-bench.owl"), format="xml")
    graph.parse(data=extra, format="turtle")
    path = tmp_path / f"{variant}.ttl"
    path.write_text(graph.serialize(format="turtle"))
    return str(path)


@pytest.mark.skipif(not DATA.exists(), reason="shared data not available")
def test_owl1_intersection_on_a_named_class(tmp_path):
    """swat-lehigh's univ-bench defines Chair with owl:intersectionOf on the class itself (OWL 1): it reads as
    Chair ≡ Person ⊓ ∃headOf.Department, so Chair ⊑ Person, and the direction DL-Lite cannot state is listed."""
    ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
    path = univ_bench_with(tmp_path, "swat-lehigh", f"<{ub}Person> <http://www.w3.org/2002/07/owl#disjointWith>"
                                                    f" <{ub}Organization> .")
    tbox = load_tbox(path)
    assert (ub + "Chair", ub + "Person") in tbox.pis and (ub + "Chair", exists(ub + "headOf")) in tbox.pis
    lost = {s.part for s in tbox.report.skipped if s.kind == "equivalentClass"}
    assert "(Person ⊓ ∃headOf.Department) ⊑ Chair" in lost and "Chair ⊑ ∃headOf.Department" in lost
    from srtopo.consistency.compile import compile_ntm
    from srtopo.runners import LocalRunner
    from srtopo.testing import run_topology, tuples
    stream = [("http://x/ann", ub + "Chair", 1), ("http://x/ann", ub + "Organization", 2),
              ("http://x/bob", ub + "Professor", 1), ("http://x/bob", ub + "Course", 2)]
    result = run_topology(LocalRunner(), compile_ntm(tbox), [tuples(stream)], window=5)
    assert result.keys == {("http://x/ann", 2)}


def one_ontology(tmp_path, text: str):
    path = tmp_path / "o.ttl"
    path.write_text("@prefix : <http://x.org/o#> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n:p a owl:ObjectProperty .\n"
                    + "".join(f":{c} a owl:Class .\n" for c in "ABCDEF") + text)
    return load_tbox(str(path))


def test_union_on_the_left_gives_one_inclusion_per_member(tmp_path):
    tbox = one_ontology(tmp_path, "[ owl:unionOf ( :A :B [ a owl:Restriction ; owl:onProperty :p ;"
                                  " owl:someValuesFrom :C ] ) ] rdfs:subClassOf :D .")
    assert set(tbox.pis) == {(X + "A", X + "D"), (X + "B", X + "D")}
    assert [(s.kind, s.part) for s in tbox.report.skipped] == [("subClassOf", "∃p.C ⊑ D")]


def test_every_consequence_dllite_states(tmp_path):
    """Parts the loader used to drop with the whole axiom: ≤0 R and owl:Nothing on the right, the complement of
    a union, the union side of an equivalence."""
    tbox = one_ontology(tmp_path, """
        :A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ; owl:maxCardinality 0 ] .
        :B rdfs:subClassOf owl:Nothing .
        :C rdfs:subClassOf [ owl:complementOf [ owl:unionOf ( :D :E ) ] ] .
        :F owl:equivalentClass [ owl:unionOf ( :D :E ) ] .
        """)
    assert {tuple(sorted(n.pair)) for n in tbox.nis} == {tuple(sorted(pair)) for pair in [
        (X + "A", exists(X + "p")), (X + "B", X + "B"), (X + "C", X + "D"), (X + "C", X + "E")]}
    assert set(tbox.pis) >= {(X + "D", X + "F"), (X + "E", X + "F")}
    assert [(s.kind, s.part) for s in tbox.report.skipped] == [("equivalentClass", "F ⊑ (D ⊔ E)")]


@pytest.mark.skipif(not DATA.exists(), reason="shared data not available")
@pytest.mark.parametrize("path", ["npd/npd-v2-ql.owl", "lubm/owl-toolkit/univ-bench.owl",
                                  "lubm/swat-lehigh/univ-bench.owl"])
def test_real_ontologies_have_every_triple_accounted_for(path):
    from srtopo.consistency.owl import load_graph, read_graph
    graph = read_graph(str(DATA / path))
    tbox = load_graph(graph, str(DATA / path))
    assert tbox.report.accounting.all() == set(graph)
    assert "unrecognised triple" not in tbox.report.skipped_by_kind()


def test_report_text_groups_by_kind_and_reason():
    from srtopo.consistency.tbox import LoaderReport, SkippedAxiom
    skipped = tuple(SkippedAxiom("range (datatype)", f"range(u{i}) = string", "data ranges are not concepts")
                    for i in range(5)) + (SkippedAxiom("subClassOf", "A ⊑ ∃p.B", "the filler B is lost", "A ⊑ ∃p.B"),
                                          SkippedAxiom("equivalentClass", "A ≡ B ⊓ C", "an intersection on the left",
                                                       "B ⊓ C ⊑ A"))
    report = LoaderReport(source="o.owl", skipped=skipped)
    lines = [line for line in report.to_text().splitlines() if line.startswith("    - ")]
    assert lines == ["    - [equivalentClass] an intersection on the left: 1: A ≡ B ⊓ C (lost: B ⊓ C ⊑ A)",
                     "    - [range (datatype)] data ranges are not concepts: 5: range(u0) = string | range(u1) = string"
                     " | range(u2) = string | ... 2 more",
                     "    - [subClassOf] the filler B is lost: 1: A ⊑ ∃p.B"]
    verbose = [line for line in report.to_text(verbose=True).splitlines() if line.startswith("    - ")]
    assert len(verbose) == 7 and "    - [range (datatype)] range(u4) = string: data ranges are not concepts" in verbose


@pytest.mark.skipif(not DATA.exists(), reason="shared data not available")
def test_report_text_groups_skipped_axioms():
    """NPD skips hundreds of axioms for a handful of reasons: one line per (kind, reason), all with verbose."""
    report = load_tbox(str(DATA / "npd" / "npd-v2-ql.owl")).report
    short, full = report.to_text().splitlines(), report.to_text(verbose=True).splitlines()
    groups = [line for line in short if line.startswith("    - ")]
    assert len(groups) == len(report.skipped_groups()) <= 5
    assert any(line.startswith("    - [range (datatype)] data ranges are not concepts: 202: ") for line in groups)
    assert len([line for line in full if line.startswith("    - ")]) == len(report.skipped)


@pytest.mark.parametrize("content,needle,line", [
    ("hello world\n", "not readable as Turtle", 1),
    ('@prefix : <http://x#> .\n:a :b :c .\n:d :e \n', "not readable as Turtle", 3),
    ('<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
     '<rdf:Description rdf:about="http://x">\n</rdf:RDFX>\n', "not readable as RDF/XML", 4),
])
def test_broken_files_are_located(tmp_path, content, needle, line):
    path = tmp_path / "broken.owl"
    path.write_text(content)
    with pytest.raises(OntologyError) as info:
        load_tbox(str(path))
    assert needle in str(info.value) and "RDF/XML, Turtle" in str(info.value)
    assert info.value.line == line and info.value.file == str(path)


def test_rdf_without_owl_is_rejected(tmp_path):
    path = tmp_path / "data.ttl"
    path.write_text("<http://x/a> <http://x/b> <http://x/c> .\n")
    with pytest.raises(OntologyError, match="no OWL classes or axioms"):
        load_tbox(str(path))


OWX = """<?xml version="1.0"?>
<Ontology xmlns="http://www.w3.org/2002/07/owl#" xml:base="http://x.org/o" ontologyIRI="http://x.org/o">
    <Declaration><Class IRI="#A"/></Declaration>
    <Declaration><Class IRI="#B"/></Declaration>
    <Declaration><Class IRI="#C"/></Declaration>
    <SubClassOf><Class IRI="#C"/><Class IRI="#A"/></SubClassOf>
    <DisjointClasses><Class IRI="#A"/><Class IRI="#B"/></DisjointClasses>
</Ontology>
"""


def test_owl_xml_through_owlready2(tmp_path):
    path = tmp_path / "o.owx"
    path.write_text(OWX)
    tbox = load_tbox(str(path))
    assert set(tbox.pis) == {("http://x.org/o#C", "http://x.org/o#A")}
    assert {n.pair for n in tbox.nis} == {("http://x.org/o#A", "http://x.org/o#B")}


def test_broken_owl_xml_is_located(tmp_path):
    path = tmp_path / "bad.owx"
    path.write_text(OWX.replace("</Declaration>\n    <Declaration><Class IRI=\"#B\"/>", "</Declarat>", 1))
    with pytest.raises(OntologyError, match="not readable as OWL/XML") as info:
        load_tbox(str(path))
    assert info.value.line is not None
