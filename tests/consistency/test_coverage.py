"""A topology declared by hand must detect every pair of its TBox's NI closure, or be accepted as partial: the
builder (and ``srtopo check --topology``) refuse one that misses a pair, naming it; a partial one runs, reports
exactly the conflicts of the pairs it covers (checked against the brute-force oracle), and says so."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from srtopo.cli import main
from srtopo.concepts import RDF_TYPE
from srtopo.consistency.builder import TopologyBuilder
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.coverage import check_coverage
from srtopo.consistency.nis import analyse
from srtopo.consistency.owl import load_tbox
from srtopo.errors import TopologyError
from srtopo.io.tnt import format_tnt
from srtopo.runners import LocalRunner
from srtopo.testing import run_topology, tuples
from tests.oracle import oracle_reports, pi_closure
from tests.randomgen import random_stream, random_tbox

TEX = str(Path(__file__).resolve().parents[2] / "examples" / "tex.ttl")
NS = "http://example.org/tex#"
B2_INFER = [("Student", "Person"), ("Employee", "Person"), ("Article", "Publication"), ("Book", "Publication")]
B3 = [("Person", "Publication"), ("Organization", "Person"), ("Person", "Work"), ("Publication", "Organization"),
      ("Publication", "Work"), ("Organization", "Work")]
#: Admin forwarded unchanged past B1 meets no op: every pair of Admin but Admin/Faculty (B1's own)
ADMIN_MISSED = {("Admin", other) for other in ("Student", "Publication", "Article", "Book", "Organization", "Work")}


@pytest.fixture(scope="module")
def tex():
    return load_tbox(TEX)


def fig3c(tex, b1_infer=(("Faculty", "Employee"), ("Admin", "Employee")), b2=(("Student", "Employee"),
                                                                             ("Article", "Book"))):
    return (TopologyBuilder(tbox=tex, name="fig3c")
            .stage("B1", conjunctions=[("Faculty", "Admin")], infer=list(b1_infer))
            .stage("B2", conjunctions=list(b2), infer=B2_INFER)
            .stage("B3", conjunctions=B3))


def test_the_readmes_fig3c_is_complete(tex):
    topology = fig3c(tex).build()
    assert topology == compile_ltm(tex, [1, 1, 1])
    assert topology.partial == "" and topology.notes.unchecked == 0


def test_a_stage_without_one_disjointness_pair_is_refused_naming_it(tex):
    with pytest.raises(TopologyError) as info:
        fig3c(tex, b2=[("Student", "Employee")]).build()
    message = str(info.value)
    assert "topology 'fig3c' leaves 1 of the 37 pairs of the NI closure unchecked, among them Article ∧ Book" in message
    assert len(message.splitlines()) == 1 and "partial=True" in message


def test_a_missing_inference_op_is_refused(tex):
    with pytest.raises(TopologyError, match="leaves 6 of the 37 pairs .* among them Admin ∧ "):
        fig3c(tex, b1_infer=[("Faculty", "Employee")]).build()


def test_a_partial_topology_runs_reports_what_it_covers_and_says_so(tex):
    topology = fig3c(tex, b1_infer=[("Faculty", "Employee")]).build(partial=True)
    assert topology.notes.unchecked == 6
    assert topology.partial == "partial topology: 6 of the 37 pairs of the NI closure are checked by no stage"
    assert "partial: 6 pairs of the NI closure are checked by no stage" in topology.to_text()
    rng = random.Random(11)
    names = sorted(c[len(NS):] for c in tex.concepts)
    stream = [(f"http://x/s{rng.randrange(20)}", NS + rng.choice(names), t // 3) for t in range(2000)]
    result = run_topology(LocalRunner(), topology, [tuples(stream)], window=4)
    assert result.partial == topology.partial
    # the oracle: every conflicting pair of concepts (brute-force PI closure) but the six the topology misses
    concepts = {NS + n for n in names}
    sup = pi_closure(tex.pis, concepts)
    stated = {frozenset(n.pair) for n in tex.nis}
    conflicts = {(a, b) for a in concepts for b in concepts
                 if any(frozenset((d, e)) in stated for d in sup[a] for e in sup[b])}
    missed = {(NS + a, NS + b) for a, b in ADMIN_MISSED} | {(NS + b, NS + a) for a, b in ADMIN_MISSED}
    expected = oracle_reports([], sorted(conflicts - missed), stream, 4)
    assert result.keys == expected
    assert len(expected) < len(oracle_reports(tex.pis, [n.pair for n in tex.nis], stream, 4))
    assert run_topology(LocalRunner(), compile_ntm(tex), [tuples(stream)], window=4).partial == ""


def test_compiled_topologies_cover_the_whole_closure():
    """The check agrees with the compilers: NTM and every all-groups-apart LTM split of random TBoxes miss nothing."""
    rng = random.Random(5)
    for _ in range(40):
        analysis = analyse(random_tbox(rng))
        for topology in (compile_ntm(analysis), compile_ltm(analysis, [1] * len(analysis.groups) or [0])):
            assert check_coverage(topology, analysis).notes.unchecked == 0


def test_an_op_outside_the_closure_is_refused(tex):
    topology = compile_ntm(tex)
    stage = topology.stages[0]
    from dataclasses import replace

    from srtopo.ir.topology import ConjunctionOp
    wrong = replace(topology, stages=(replace(stage, conjunction_ops=stage.conjunction_ops + (
        ConjunctionOp(NS + "Faculty", NS + "Employee", (NS + "Faculty", NS + "Employee")),)),))
    with pytest.raises(TopologyError, match="Faculty ∧ Employee is no pair of the TBox's NI closure"):
        check_coverage(wrong, tex)


def test_check_runs_a_topology_file_only_if_complete_or_partial(tex, tmp_path, capsys):
    stream = tmp_path / "s.tnt"
    stream.write_text("\n".join([format_tnt(1, "http://x/a", RDF_TYPE, NS + "Admin"),
                                 format_tnt(2, "http://x/a", RDF_TYPE, NS + "Student"),
                                 format_tnt(3, "http://x/b", RDF_TYPE, NS + "Article"),
                                 format_tnt(4, "http://x/b", RDF_TYPE, NS + "Book")]) + "\n")
    complete, partial = tmp_path / "complete.json", tmp_path / "partial.json"
    complete.write_text(compile_ltm(tex, [1, 2]).to_json())
    hand = fig3c(tex, b1_infer=[("Faculty", "Employee")]).build(partial=True)
    partial.write_text(hand.to_json())
    run = ["check", "--tbox", TEX, "--stream", str(stream), "--window", "5", "--topology"]
    assert main(run + [str(complete)]) == 0
    captured = capsys.readouterr()
    assert {(r["subject"], r["time"]) for r in map(json.loads, captured.out.splitlines())} == {
        ("http://x/a", 2), ("http://x/b", 4)}
    assert "partial" not in captured.err
    assert main(run + [str(partial)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"srtopo: error: {partial}: topology 'fig3c' leaves 6 of the 37")
    assert main(run + [str(partial), "--partial"]) == 0
    captured = capsys.readouterr()
    assert {(r["subject"], r["time"]) for r in map(json.loads, captured.out.splitlines())} == {("http://x/b", 4)}
    assert "partial topology: 6 of the 37 pairs of the NI closure are checked by no stage" in captured.err
    assert main(run + [str(complete), "--split", "1,2"]) == 2
    assert "--split" in capsys.readouterr().err
    assert main(["check", "--tbox", TEX, "--stream", str(stream), "--window", "5", "--partial"]) == 2
    assert "--topology" in capsys.readouterr().err
