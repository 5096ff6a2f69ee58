"""Every construct of the OWL 2 RDF mapping through the DL-Lite loader: each gives the PIs, NIs and skipped entries
worked out by hand (``owl2_constructs.CASES``), and every triple of the file is used or accounted for."""
from __future__ import annotations

from collections import Counter

import pytest
from rdflib import Graph, URIRef

from srtopo.concepts import exists, exists_inverse
from srtopo.consistency.owl import load_tbox
from tests.consistency.owl2_constructs import CASES, HEADER, VOCABULARY

#: every triple of a file is in exactly one of these (the loader report's accounting)
TRIPLE_CATEGORIES = ("used", "skipped", "declarations", "annotations")

PREFIXES = {"owl": "http://www.w3.org/2002/07/owl#", "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
            "rdfs": "http://www.w3.org/2000/01/rdf-schema#"}


def namespace(index: int) -> str:
    return f"http://x.org/case{index}#"


def concept(token: str, ns: str) -> str:
    token = token.strip()
    if token.startswith("∃"):
        name = token[1:]
        return exists_inverse(ns + name[:-1]) if name.endswith("⁻") else exists(ns + name)
    return ns + token


def expected_pis(case, ns: str) -> set:
    return {tuple(concept(x, ns) for x in item.split("⊑")) for item in case.pis.split(";") if item.strip()}


def expected_nis(case, ns: str) -> set:
    return {tuple(sorted(concept(x, ns) for x in item.split("/"))) for item in case.nis.split(";") if item.strip()}


def turtle(index: int) -> str:
    return HEADER.format(ns=namespace(index)) + CASES[index].ttl + "\n"


def header_triples(index: int) -> set:
    return set(Graph().parse(data=HEADER.format(ns=namespace(index)), format="turtle"))


def matches(actual: list, expected: tuple) -> bool:
    """Each skipped entry (kind, reason) is matched by one expected (kind, words of the reason), and none is left."""
    left = list(actual)
    for kind, words in expected:
        hit = next((a for a in left if a[0] == kind and words in a[1]), None)
        if hit is None:
            return False
        left.remove(hit)
    return not left


@pytest.fixture(scope="module")
def case_files(tmp_path_factory):
    """case index -> a Turtle file of the case alone."""
    folder = tmp_path_factory.mktemp("owl2")
    out = {}
    for index in range(len(CASES)):
        out[index] = folder / f"case{index}.ttl"
        out[index].write_text(turtle(index))
    return out


def load_with_graph(path: str):
    """The TBox and the very graph it was loaded from (blank nodes differ between two parses of a file)."""
    from srtopo.consistency.owl import load_graph, read_graph
    graph = read_graph(path)
    return load_graph(graph, path), graph


IDS = [case.name for case in CASES]


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_construct_gives_its_inclusions(case_files, index):
    case, ns = CASES[index], namespace(index)
    tbox = load_tbox(str(case_files[index]))
    assert set(tbox.pis) == expected_pis(case, ns)
    assert {tuple(sorted(n.pair)) for n in tbox.nis} == expected_nis(case, ns)
    actual = [(s.kind, s.reason) for s in tbox.report.skipped]
    assert matches(actual, case.skipped), actual


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_construct_accounts_for_its_triples(case_files, index):
    case = CASES[index]
    tbox, graph = load_with_graph(str(case_files[index]))
    accounting = tbox.report.accounting
    own = set(graph) - header_triples(index)
    found = Counter(name for triple in own for name in TRIPLE_CATEGORIES if triple in getattr(accounting, name))
    want = {case.triples: len(own)} if isinstance(case.triples, str) else case.triples
    assert dict(found) == want


@pytest.fixture(scope="session")      # the session's: a worker may run other modules between its tests
def combined(tmp_path_factory):
    """All cases in one file, each in its own namespace."""
    path = tmp_path_factory.mktemp("owl2all") / "all.ttl"
    path.write_text("".join(turtle(i) for i in range(len(CASES))))
    return load_with_graph(str(path))


def test_every_triple_is_used_or_accounted_for(combined):
    tbox, graph = combined
    accounting = tbox.report.accounting
    parts = [getattr(accounting, name) for name in TRIPLE_CATEGORIES]
    assert sum(len(p) for p in parts) == len(graph)       # pairwise disjoint ...
    assert accounting.all() == set(graph)                 # ... and covering the file
    in_entries = set().union(*(s.triples for s in tbox.report.skipped))
    assert accounting.skipped <= in_entries               # every skipped triple is in a listed entry
    assert in_entries <= accounting.used | accounting.skipped
    assert dict(tbox.report.triples) == {name: len(p) for name, p in zip(TRIPLE_CATEGORIES, parts)}


def test_cases_do_not_interact(combined):
    tbox, _ = combined
    pis, nis, skipped = set(), set(), Counter()
    for index, case in enumerate(CASES):
        pis |= expected_pis(case, namespace(index))
        nis |= expected_nis(case, namespace(index))
        skipped.update(kind for kind, _ in case.skipped)
    assert set(tbox.pis) == pis
    assert {tuple(sorted(n.pair)) for n in tbox.nis} == nis
    assert Counter(s.kind for s in tbox.report.skipped) == skipped


def test_the_fixture_uses_the_whole_reserved_vocabulary(combined):
    _, graph = combined
    terms = {term for triple in graph for term in triple if isinstance(term, URIRef)}
    wanted = {URIRef(PREFIXES[word.split(":")[0]] + word.split(":")[1]) for word in VOCABULARY.split()}
    assert not wanted - terms, sorted(wanted - terms)


def test_a_damaged_file_is_still_accounted_for():
    """The loader never fails on a construct: the fixture with triples dropped and objects swapped at random (broken
    lists, restrictions without a property, cycles) still loads, and every triple is still in one category."""
    import random

    from srtopo.consistency.owl import load_graph
    full = sorted(Graph().parse(data="".join(turtle(i) for i in range(len(CASES))), format="turtle"), key=str)
    rng = random.Random(7)
    for _ in range(20):
        graph = Graph()
        for triple in full:
            if rng.random() > 0.15:
                graph.add(triple)
        for s, p, o in rng.sample(sorted(graph, key=str), 30):
            graph.remove((s, p, o))
            graph.add((s, p, rng.choice(full)[rng.randrange(3)]))
        accounting = load_graph(graph, "damaged").report.accounting
        assert sum(len(getattr(accounting, name)) for name in TRIPLE_CATEGORIES) == len(graph)
        assert accounting.all() == set(graph)
