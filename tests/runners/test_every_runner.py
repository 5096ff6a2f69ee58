"""The differential suite: every case runs on every runner variant (``conftest.RUNNER_VARIANTS``) through the
runner protocol, fed by records held in memory, and is checked against an independent oracle or hand-checked
expectations. A runner that cannot run a case says why (``UnsupportedByRunner``) and the case is skipped."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from srtopo.concepts import RDF_TYPE
from srtopo.consistency.choose import choose_topology
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.consistency.owl import load_tbox
from srtopo.consistency.tbox import TBox
from srtopo.io.sources import RdfFiles, TntFiles
from srtopo.io.tnt import format_tnt, parse_tnt_lines
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalRunner, RunConfig
from srtopo.testing import lines, run_topology, timeline, tuples, unsupported
from tests.oracle import oracle_choices, oracle_reports
from tests.randomgen import (
    MALFORMED_TBOX,
    bounded_disorder,
    malformed_stream,
    merge,
    prefixed,
    random_stream,
    random_tbox,
)

TEX = str(Path(__file__).resolve().parents[2] / "examples" / "tex.ttl")
NS = "http://example.org/tex#"
CASES = 6
LATENESS = 4


def _run(runner_variant, topology, sources, **config):
    runner, options = runner_variant
    if topology.kind != "consistency" and getattr(options, "physical_plan", None) not in (None, "fused", "indexed"):
        pytest.skip("a physical plan is a consistency topology's: other topologies run one way on each runner")
    reason = unsupported(runner, topology, sources)
    if reason:
        pytest.skip(reason)
    return run_topology(runner, topology, sources, options=options, **config)


def _merged_cases(window):
    """Six random TBoxes with random streams, prefixed apart and merged into one stream (one query for all)."""
    rng = random.Random(20240)
    cases, merged, expected = [], [], {}
    for i in range(CASES):
        tbox = random_tbox(rng)
        stream = random_stream(rng, tbox, n=rng.randint(40, 120), n_subjects=rng.randint(1, 5), horizon=60)
        p = f"c{i}|"
        cases.append((p, tbox))
        expected[p] = oracle_reports(tbox.pis, [n.pair for n in tbox.nis], stream, window)
        merged += [(p + s, p + c, t) for s, c, t in stream]
    return cases, bounded_disorder(merged, LATENESS, random.Random(7)), expected


@pytest.mark.parametrize("window", [3, None], ids=["w3", "unbounded"])
def test_random_tboxes_and_out_of_order_streams_match_the_oracle(runner_variant, window):
    """Each case compiled as NTM and as LTM with a group per stage, side by side in one query (concepts and
    subjects prefixed apart)."""
    cases, base, expected = _merged_cases(window)
    parts = []
    for method in ("ntm", "ltm"):
        for p, tbox in cases:
            a = analyse(tbox)
            compiled = compile_ntm(a) if method == "ntm" else compile_ltm(a, [1] * len(a.groups) or [0])
            parts.append(prefixed(compiled, method + p))
    # each tuple twice in a row, once per method: the stream's disorder stays within the lateness
    stream = [(m + s, m + c, t) for s, c, t in base for m in ("ntm", "ltm")]
    topology = merge(parts)
    result = _run(runner_variant, topology, [tuples(stream, batches=3)], window=window, lateness=LATENESS)
    keys = [r.key for r in result.reports]
    assert len(keys) == len(set(keys)), "one report per (subject, time)"
    for method in ("ntm", "ltm"):
        for p, _ in cases:
            q = method + p
            assert {(s[len(q):], t) for s, t in keys if s.startswith(q)} == expected[p], f"{method} case {p}"
    c = result.counters
    assert (c.records, c.late, c.malformed, c.batches) == (len(stream), 0, 0, 3)
    # per-stage counters follow from the routing rule of the IR: the same on every runner
    reference = LocalRunner().run(topology, [tuples(stream)], RunConfig(window=window, lateness=LATENESS)).counters
    for got, want in zip(c.stages, reference.stages):
        assert (got.records_in, got.cached_in, got.forwarded, got.inferred, got.ops_evaluated) == \
               (want.records_in, want.cached_in, want.forwarded, want.inferred, want.ops_evaluated), got.stage


def _lines(result, prefix=""):
    """The reports as their lines' fields, without ``prefix`` in the subject, the NI and the evidence."""
    cut = len(prefix)
    return sorted((r.subject[cut:], r.time, tuple(c[cut:] for c in r.ni), tuple((c[cut:], t) for c, t in r.evidence),
                   r.stage, r.topology) for r in result.reports if r.subject.startswith(prefix))


def _also_the_spark_write(runner_variant):
    """The variant, and for Spark's fused plan also with every micro-batch closed in the Spark write (its small
    batches close on the driver by default); for the columnar plan (run in executor tasks) also on the driver."""
    from dataclasses import replace
    runner, options = runner_variant
    variants = [runner_variant]
    plan = getattr(options, "physical_plan", None)
    if plan == "fused" and hasattr(options, "driver_tuples"):
        variants.append((runner, replace(options, driver_tuples=0)))
    if plan == "columnar" and hasattr(options, "driver_tuples"):
        variants.append((runner, replace(options, driver_tuples=None)))
    return variants


@pytest.mark.parametrize("window", [3, None], ids=["w3", "unbounded"])
def test_every_plan_names_the_same_ni_and_evidence(runner_variant, window):
    """Random TBoxes, each compiled as NTM, LTM with a group per stage and LTM-0, with its stream given to each
    (concepts and subjects prefixed apart, one query for all). Every report names the NI and evidence of the rule of
    docs/consistency.md (an oracle over every pair of tuples), whatever the split and the runner; its stage is the
    local runner's for the same topology: whole report lines are equal on every runner."""
    rng = random.Random(5150)
    parts, stream, expected = [], [], {}
    for i in range(CASES):
        tbox = random_tbox(rng)
        part = random_stream(rng, tbox, n=rng.randint(40, 120), n_subjects=rng.randint(1, 4), horizon=40)
        a = analyse(tbox)
        splits = {"n": [len(a.groups)], "l": [1] * len(a.groups) or [0], "z": [0, len(a.groups)]}
        expected[i] = oracle_choices(tbox.pis, [n.pair for n in tbox.nis], part, window)
        for name, split in splits.items():
            p = f"c{i}{name}|"
            parts.append(prefixed(compile_ltm(a, split), p))
            stream += [(p + s, p + c, t) for s, c, t in part]
    topology = merge(parts)
    stream = bounded_disorder(stream, LATENESS, random.Random(11))
    reference = LocalRunner().run(topology, [tuples(stream)], RunConfig(window=window, lateness=LATENESS))
    assert sum(len(e) for e in expected.values()) > 100
    for variant in _also_the_spark_write(runner_variant):
        result = _run(variant, topology, [tuples(stream, batches=3)], window=window, lateness=LATENESS)
        assert _lines(result) == _lines(reference)
        for i in range(CASES):
            for name in "nlz":
                got = {(s, t): (ni, ev) for s, t, ni, ev, *_ in _lines(result, f"c{i}{name}|")}
                assert got == expected[i], (i, name)


def test_the_report_names_the_least_ni_and_the_latest_evidence(runner_variant):
    """By hand. Cat, Dog ⊑ Animal; Tree ⊑ Plant; DJ(Animal, Plant), DJ(Cat, Dog). Cat, Dog and Tree at one time
    violate both NIs: the report names Animal/Plant (before Cat/Dog by IRI) with Cat and Tree (Cat before Dog), in
    every plan, on the stage that checks Animal/Plant. Two Trees before a Cat: the later Tree is the evidence."""
    ex = "http://ex.org/pets#"
    cat, dog, tree, animal, plant = (ex + c for c in ("Cat", "Dog", "Tree", "Animal", "Plant"))
    tbox = TBox.build([(cat, animal), (dog, animal), (tree, plant)], [(animal, plant), (cat, dog)])
    x = "http://x/"
    text = [format_tnt(1, x + "s", RDF_TYPE, c) for c in (tree, dog, cat)]
    text += [format_tnt(t, x + "u", RDF_TYPE, c) for t, c in ((2, tree), (3, tree), (4, dog), (5, cat))]
    a = analyse(tbox)
    for topology, stage in ((compile_ntm(a), "B1"), (compile_ltm(a, [1, 1]), "B2"), (compile_ltm(a, [0, 2]), "B2")):
        for variant in _also_the_spark_write(runner_variant):
            result = _run(variant, topology, [lines(text, batches=2)], window=5, lateness=1)
            got = {(r.subject, r.time): (r.ni, r.evidence, r.stage) for r in result.reports}
            assert got == {
                (x + "s", 1): ((animal, plant), ((cat, 1), (tree, 1)), stage),
                (x + "u", 4): ((animal, plant), ((tree, 3), (dog, 4)), stage),
                # Dog at 4 and Cat at 5 violate Cat/Dog, one back; Tree at 3 and Cat violate Animal/Plant, two back
                (x + "u", 5): ((animal, plant), ((tree, 3), (cat, 5)), stage)}, topology.label


def test_malformed_lines_are_rejected_with_line_and_reason_and_change_nothing_else(runner_variant):
    tbox = MALFORMED_TBOX
    text = malformed_stream(random.Random(3), 1200, bad=0.02)
    want_rejected = []
    good = list(parse_tnt_lines(text, "<lines>", want_rejected))
    result = _run(runner_variant, compile_ntm(analyse(tbox)), [lines(text, batches=2)], window=5, lateness=1000)
    assert sorted((r.line, r.reason) for r in result.rejected) == sorted((r.line, r.reason) for r in want_rejected)
    assert len(want_rejected) > 10 and result.counters.malformed == len(want_rejected)
    assert result.counters.records == len(good)
    expected = oracle_reports(tbox.pis, [n.pair for n in tbox.nis], good, 5)
    assert result.keys == expected and expected


def test_late_tuples_are_rejected_once_per_line_and_counted(runner_variant):
    ex = "http://ex.org/l#"
    tbox = TBox.build([], [(ex + "A", ex + "B")])
    batch1 = [format_tnt(t, ex + "x", RDF_TYPE, ex + "A") for t in range(10, 21)]
    batch2 = [format_tnt(3, ex + "y", ex + "p", ex + "z"),              # a role assertion: two late tuples, one line
              format_tnt(20, ex + "x", RDF_TYPE, ex + "B"), format_tnt(2, ex + "x", RDF_TYPE, ex + "B")]
    result = _run(runner_variant, compile_ntm(analyse(tbox)), [lines(batch1 + batch2, batches=2)], window=2,
                  lateness=1)
    assert result.counters.late == 3
    assert sorted(r.line for r in result.rejected) == [12, 14]
    assert all(r.reason.startswith("late: event time") for r in result.rejected)
    assert result.keys == {(ex + "x", 20)}


def test_tex_reports_hand_checked(runner_variant):
    """T_ex by hand: Student at 1 and Faculty at 3 violate Student/Employee at 3; Book at 20 is outside the window
    of both; Article at 21 and Book at 22 violate Article/Book at 22."""
    x = "http://x/"
    text = [format_tnt(1, x + "bob", RDF_TYPE, NS + "Student"), format_tnt(3, x + "bob", RDF_TYPE, NS + "Faculty"),
            format_tnt(20, x + "bob", RDF_TYPE, NS + "Book"), format_tnt(21, x + "ann", RDF_TYPE, NS + "Article"),
            format_tnt(22, x + "ann", RDF_TYPE, NS + "Book")]
    tex = load_tbox(TEX)
    for topology in (compile_ntm(tex), compile_ltm(tex, [1, 2]), choose_topology(tex, split=[1, 1, 1])):
        result = _run(runner_variant, topology, [lines(text)], window=5)
        assert result.keys == {(x + "bob", 3), (x + "ann", 22)}
        bob = next(r for r in result.reports if r.subject == x + "bob")
        assert bob.evidence == ((NS + "Student", 1), (NS + "Faculty", 3))
        assert bob.topology == topology.label and bob.stage in {s.id for s in topology.stages}


def test_rdf_graph_files(runner_variant, tmp_path):
    """Turtle and N-Triples graph files, the event time from prov:generatedAtTime or the file name; a broken file
    is one rejected record."""
    ex = "http://ex.org/r#"
    tbox = TBox.build([(ex + "Student", ex + "Person")], [(ex + "Person", ex + "Course"),
                                                          ("exists:" + ex + "teaches", ex + "Student")])
    d = tmp_path / "graphs"
    d.mkdir()

    def ttl(path, triples, generated=None):
        out = [f"<{s}> <{p}> <{o}> ." for s, p, o in triples]
        if generated is not None:
            out.append(f'<{ex}graph> <http://www.w3.org/ns/prov#generatedAtTime> "{generated}"^^'
                       f'<http://www.w3.org/2001/XMLSchema#integer> .')
        path.write_text("\n".join(out) + "\n")

    ttl(d / "obs-0001.ttl", [(ex + "a", RDF_TYPE, ex + "Student"), (ex + "b", ex + "teaches", ex + "c")])
    ttl(d / "obs-0002.nt", [(ex + "a", RDF_TYPE, ex + "Course"), (ex + "b", RDF_TYPE, ex + "Student")])
    ttl(d / "late-name-99.ttl", [(ex + "c", RDF_TYPE, ex + "Person")], generated=3)
    (d / "broken-4.ttl").write_text(f"<{ex}a> a <{ex}B> .\nthis is not turtle <<<\n")
    (d / "broken-5.rdf").write_text('<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/'
                                    '22-rdf-syntax-ns#">\n<rdf:Description rdf:about="http://x/a">\n<oops\n')
    for i, name in enumerate(sorted(os.listdir(d))):
        os.utime(d / name, (1_600_000_000 + i, 1_600_000_000 + i))
    result = _run(runner_variant, compile_ntm(analyse(tbox)), [RdfFiles(str(d))], window=5)
    assert result.keys == {(ex + "a", 2), (ex + "b", 2)}
    rejected = {os.path.basename(r.source): (r.line, r.reason) for r in result.rejected}
    assert set(rejected) == {"broken-4.ttl", "broken-5.rdf"}
    assert rejected["broken-4.ttl"][0] == 2 and "of <>" not in rejected["broken-4.ttl"][1]
    assert rejected["broken-4.ttl"][1].startswith("not parseable as turtle: ") and \
        len(rejected["broken-4.ttl"][1]) > len("not parseable as turtle: ") + 10
    assert rejected["broken-5.rdf"][0] == 4 and "unclosed token" in rejected["broken-5.rdf"][1]


def test_an_escaped_iri_gets_the_documented_reason(runner_variant):
    """IRIs take no \\uXXXX escapes (docs/consistency.md): the reason says so, on every runner."""
    from srtopo.io.tnt import IRI_ESCAPE
    ex = "http://ex.org/e#"
    tbox = TBox.build([], [(ex + "A", ex + "B")])
    text = [format_tnt(1, ex + "x", RDF_TYPE, ex + "A"), f"2\t<{ex}caf\\u00e9> <{RDF_TYPE}> <{ex}B> .",
            f"3\t<{ex}x> <{RDF_TYPE}> <{ex}B\\u0041> .", format_tnt(4, ex + "x", RDF_TYPE, ex + "B")]
    result = _run(runner_variant, compile_ntm(analyse(tbox)), [lines(text)], window=5)
    assert sorted((r.line, r.reason) for r in result.rejected) == [(2, IRI_ESCAPE), (3, IRI_ESCAPE)]
    assert result.keys == {(ex + "x", 4)}


def test_rule_topology_gives_the_papers_streaming_models(runner_variant):
    """Examples 1-2 of the I-DLV-sr paper: b(5) at least 2 in {0,1,3} holds at time point 3."""
    topology = compile_program(parse_program("c(X) :- b(X) at least 2 in {0,1,3}."))
    points = [["a(2)", "b(5)"], ["a(3)", "c(7)"], ["b(5)"], ["a(3)"]]
    result = _run(runner_variant, topology, [timeline(points)])
    assert [set(m.atoms) for m in result.models] == [{"a(2)", "b(5)"}, {"a(3)", "c(7)"}, {"b(5)"}, {"a(3)", "c(5)"}]


def test_a_byte_order_mark_is_not_data(runner_variant, tmp_path):
    """A file saved with a BOM loses nothing: its first line is a statement like any other."""
    x = "http://x/"
    path = tmp_path / "bom.tnt"
    path.write_bytes(b"\xef\xbb\xbf" + (format_tnt(1, x + "bob", RDF_TYPE, NS + "Student") + "\n"
                                        + format_tnt(3, x + "bob", RDF_TYPE, NS + "Faculty") + "\n").encode())
    result = _run(runner_variant, compile_ntm(load_tbox(TEX)), [TntFiles(str(path))], window=5)
    assert result.rejected == [] and result.counters.records == 2
    assert result.keys == {(x + "bob", 3)}


OWL_NOTHING = "http://www.w3.org/2002/07/owl#Nothing"


def test_an_assertion_of_owl_nothing_is_a_violation_whatever_the_tbox(runner_variant):
    """``x rdf:type owl:Nothing`` is inconsistent by itself: a report at its time naming owl:Nothing with that one
    tuple as evidence, on every plan of T_ex and on a TBox without any NI; other tuples are checked as before (the
    oracle is given owl:Nothing as the one concept disjoint from itself)."""
    x = "http://x/"
    text = [format_tnt(1, x + "bob", RDF_TYPE, NS + "Student"), format_tnt(2, x + "eve", RDF_TYPE, OWL_NOTHING),
            format_tnt(3, x + "bob", RDF_TYPE, NS + "Faculty"), format_tnt(4, x + "bob", RDF_TYPE, OWL_NOTHING),
            format_tnt(9, x + "eve", RDF_TYPE, OWL_NOTHING)]
    tex = load_tbox(TEX)
    empty = TBox.build([(NS + "Student", NS + "Person")], [])
    for tbox in (tex, empty):
        good = list(parse_tnt_lines(text, "<lines>", []))
        expected = oracle_reports(tbox.pis, [n.pair for n in tbox.nis] + [(OWL_NOTHING, OWL_NOTHING)], good, 5)
        analysis = analyse(tbox)
        plans = [compile_ntm(analysis)] + ([compile_ltm(analysis, [1, 2]), compile_ltm(analysis, [1, 1, 1])]
                                           if analysis.groups else [])
        for topology in plans:
            result = _run(runner_variant, topology, [lines(text, batches=2)], window=5, lateness=10)
            assert result.keys == expected, topology.label
            eve = sorted((r for r in result.reports if r.subject == x + "eve"), key=lambda r: r.time)
            assert [(r.time, r.ni, r.evidence, r.stage) for r in eve] == [
                (t, (OWL_NOTHING, OWL_NOTHING), ((OWL_NOTHING, t),), topology.stages[0].id) for t in (2, 9)]
            assert result.counters.irrelevant == (0 if tbox is tex else 2)
    assert expected == {(x + "eve", 2), (x + "bob", 4), (x + "eve", 9)}


def test_a_partial_topology_says_so_and_reports_the_same_on_every_runner(runner_variant):
    """A topology by hand without Admin's inference op, accepted as partial: every runner reports the conflicts it
    covers (Student/Faculty, Article/Book; not Admin/Student) and says what it leaves unchecked."""
    from srtopo.consistency.builder import TopologyBuilder
    x = "http://x/"
    tex = load_tbox(TEX)
    topology = (TopologyBuilder(tbox=tex, name="no-admin")
                .stage("B1", conjunctions=[("Faculty", "Admin")], infer=[("Faculty", "Employee")])
                .stage("B2", conjunctions=[("Student", "Employee"), ("Article", "Book")],
                       infer=[("Student", "Person"), ("Employee", "Person"), ("Article", "Publication"),
                              ("Book", "Publication")])
                .stage("B3", conjunctions=[("Person", "Publication"), ("Organization", "Person"), ("Person", "Work"),
                                           ("Publication", "Organization"), ("Publication", "Work"),
                                           ("Organization", "Work")])
                .build(partial=True))
    text = [format_tnt(1, x + "bob", RDF_TYPE, NS + "Student"), format_tnt(3, x + "bob", RDF_TYPE, NS + "Faculty"),
            format_tnt(4, x + "amy", RDF_TYPE, NS + "Student"), format_tnt(5, x + "amy", RDF_TYPE, NS + "Admin"),
            format_tnt(21, x + "ann", RDF_TYPE, NS + "Article"), format_tnt(22, x + "ann", RDF_TYPE, NS + "Book")]
    result = _run(runner_variant, topology, [lines(text)], window=5)
    assert result.keys == {(x + "bob", 3), (x + "ann", 22)}
    assert result.partial == "partial topology: 6 of the 37 pairs of the NI closure are checked by no stage"
