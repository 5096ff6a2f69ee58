"""The paper's running example T_ex: NTM/LTM counts of "Distributed Stream Consistency Checking", groups, Fig. 3c by hand."""
import json
import random
from pathlib import Path

import pytest

from srtopo.cli import main
from srtopo.consistency.builder import TopologyBuilder
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.consistency.owl import load_tbox
from srtopo.runners import LocalRunner
from srtopo.testing import run_topology, tuples

TEX = str(Path(__file__).resolve().parents[2] / "examples" / "tex.ttl")
NS = "http://example.org/tex#"


def short(pair):
    return tuple(sorted(x.replace(NS, "") for x in pair))


@pytest.fixture(scope="module")
def tex():
    return load_tbox(TEX)


def test_loader_reads_tex(tex):
    assert len(tex.concepts) == 10
    assert len(tex.pis) == 6
    assert len(tex.nis) == 10
    assert tex.report.skipped == ()


def test_ntm_has_37_conjunction_ops(tex):
    topo = compile_ntm(tex)
    assert topo.conjunction_counts == [37]
    assert topo.notes.ni_closure_size == 37


def test_roots_and_groups(tex):
    analysis = analyse(tex)
    assert len(analysis.roots) == 9
    assert ("Faculty", "Student") not in {short(r) for r in analysis.roots}   # axiom 10 is subsumed by 7
    groups = [sorted(short(r) for r in g) for g in analysis.groups]
    assert groups == [
        [("Admin", "Faculty")],
        [("Article", "Book"), ("Employee", "Student")],
        sorted([("Person", "Publication"), ("Organization", "Person"), ("Person", "Work"),
                ("Organization", "Publication"), ("Publication", "Work"), ("Organization", "Work")]),
    ]


@pytest.mark.parametrize("split,counts", [([1, 2], [1, 24]), ([2, 1], [5, 6]), ([1, 1, 1], [1, 2, 6]),
                                          ([3], [37])])
def test_ltm_counts(tex, split, counts):
    assert compile_ltm(tex, split).conjunction_counts == counts


def test_ltm_1_2_inference_ops(tex):
    b1 = compile_ltm(tex, [1, 2]).stages[0]
    assert {(o.sub.replace(NS, ""), o.sup.replace(NS, "")) for o in b1.inference_ops} == \
        {("Faculty", "Employee"), ("Admin", "Employee")}


def test_subclass_in_no_ni_is_inferred_upwards(tex):
    """The paper's FemaleEmployee: a subclass of Employee in no NI becomes Employee in B1."""
    from srtopo.consistency.tbox import TBox
    extended = TBox.build(tex.pis + ((NS + "FemaleEmployee", NS + "Employee"),), tex.nis)
    b1 = compile_ltm(extended, [1, 2]).stages[0]
    assert (NS + "FemaleEmployee", NS + "Employee") in {(o.sub, o.sup) for o in b1.inference_ops}


def fig3c(tex):
    return (TopologyBuilder(tbox=tex, name="fig3c")
            .stage("B1", conjunctions=[("Faculty", "Admin")],
                   infer=[("Faculty", "Employee"), ("Admin", "Employee")])
            .stage("B2", conjunctions=[("Student", "Employee"), ("Article", "Book")],
                   infer=[("Student", "Person"), ("Employee", "Person"), ("Article", "Publication"),
                          ("Book", "Publication")])
            .stage("B3", conjunctions=[("Person", "Publication"), ("Organization", "Person"), ("Person", "Work"),
                                       ("Publication", "Organization"), ("Publication", "Work"),
                                       ("Organization", "Work")])
            .build())


def test_fig3c_by_hand_equals_compiled(tex):
    assert fig3c(tex) == compile_ltm(tex, split=[1, 1, 1])


def test_fig3c_reports_equal_ntm_on_random_stream(tex):
    rng = random.Random(7)
    concepts = sorted(tex.concepts)
    stream = [(f"http://x/s{rng.randrange(30)}", rng.choice(concepts), t // 3) for t in range(3000)]
    hand = run_topology(LocalRunner(), fig3c(tex), [tuples(stream)], window=4).keys
    ntm = run_topology(LocalRunner(), compile_ntm(tex), [tuples(stream)], window=4).keys
    assert hand == ntm
    assert len(ntm) > 100


def test_compile_json(tex, capsys):
    assert main(["compile", "--tbox", TEX, "--method", "ltm", "--split", "1,2", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["notes"]["ni_closure_size"] == 37
    assert len(data["notes"]["ni_roots"]) == 9
    assert [len(g) for g in data["notes"]["ni_groups"]] == [1, 2, 6]
    stages = data["stages"]
    assert [s["id"] for s in stages] == ["B1", "B2"]
    assert [len(s["conjunction_ops"]) for s in stages] == [1, 24]
    assert sorted(tuple(p) for p in stages[0]["inference_ops"]) == [(NS + "Admin", NS + "Employee"),
                                                                    (NS + "Faculty", NS + "Employee")]
    assert all(s["parallelism"] == 1 for s in stages)
