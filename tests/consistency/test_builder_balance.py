"""Builder validation and the pluggable balancers."""
import random
from pathlib import Path

import pytest

from srtopo.consistency.balance import Balance, contiguous_splits, even, paper, proportional_tasks, stage_costs
from srtopo.consistency.builder import TopologyBuilder
from srtopo.consistency.choose import choose_topology
from srtopo.consistency.compile import compile_ltm
from srtopo.consistency.nis import analyse
from srtopo.consistency.owl import load_tbox
from srtopo.errors import TopologyError
from srtopo.ir.topology import Topology
from srtopo.runners import LocalRunner
from srtopo.testing import run_topology, tuples
from tests.oracle import oracle_reports
from tests.randomgen import random_stream, random_tbox

TEX = str(Path(__file__).resolve().parents[2] / "examples" / "tex.ttl")


@pytest.fixture(scope="module")
def tex():
    return load_tbox(TEX)


def test_duplicate_stage_id(tex):
    with pytest.raises(TopologyError, match="stage 'B1' already exists"):
        TopologyBuilder(tbox=tex).stage("B1").stage("B1").build()


def test_unknown_concept(tex):
    with pytest.raises(TopologyError, match="unknown concept 'Dragon'"):
        TopologyBuilder(tbox=tex).stage("B1", conjunctions=[("Dragon", "Person")]).build()


def test_reading_a_concept_no_earlier_stage_emits(tex):
    with pytest.raises(TopologyError, match="reads Admin, which no earlier stage emits") as info:
        (TopologyBuilder(tbox=tex)
         .stage("B1", infer=[("Faculty", "Employee")], forward=["Person"])
         .stage("B2", conjunctions=[("Faculty", "Admin")])
         .build())
    assert "forward it" in str(info.value)


def test_inference_must_follow_the_tbox(tex):
    with pytest.raises(TopologyError, match="not entailed"):
        TopologyBuilder(tbox=tex).stage("B1", infer=[("Person", "Student")]).build()


def test_topology_json_round_trip(tex):
    topo = compile_ltm(tex, [1, 2], parallelism=[2, 3])
    assert Topology.from_dict(topo.to_dict()) == topo
    assert Topology.from_dict(topo.to_dict()).to_dict() == topo.to_dict()      # name, label and notes too
    assert [s.parallelism for s in topo.stages] == [2, 3]


def test_contiguous_splits():
    assert list(contiguous_splits(3, 2)) == [(1, 2), (2, 1)]
    assert len(list(contiguous_splits(5, 3))) == 6


def test_proportional_tasks():
    assert proportional_tasks([1.0, 3.0], 8) == (2, 6)
    assert sum(proportional_tasks([5.0, 0.0, 1.0], 6)) == 6
    assert min(proportional_tasks([100.0, 0.0], 2)) == 1


def test_even_picks_min_max_cost_split(tex):
    analysis = analyse(tex)
    plan = even(analysis, tasks=2, stages=2)
    costs = {s: max(stage_costs(compile_ltm(analysis, s))) for s in contiguous_splits(3, 2)}
    assert max(plan.costs) == min(costs.values())
    assert plan.split == min(costs, key=costs.get)
    assert sum(plan.parallelism) == 4 and len(plan.parallelism) == 2
    assert plan.split == (2, 1)   # [G1+G2 | G3] is the paper's balanced choice on T_ex (5 vs 6 ops)


def test_even_uses_rates(tex):
    analysis = analyse(tex)
    ns = "http://example.org/tex#"
    heavy = {c: (1000.0 if c.endswith(("Faculty", "Admin")) else 1.0) for c in analysis.hierarchy.concepts}
    plan = even(analysis, tasks=1, stages=2, rates=heavy)
    assert plan.costs and len(plan.split) == 2
    assert stage_costs(compile_ltm(analysis, plan.split), heavy) == plan.costs
    assert ns  # rates are keyed by concept IRI


def test_paper_balancer(tex):
    analysis = analyse(tex)
    assert paper(analysis, tasks=3, split=[1, 2]) == Balance((1, 2), (3, 3), balancer="paper")
    assert paper(analysis, tasks=1, stages=3).split == (1, 1, 1)
    with pytest.raises(TopologyError, match="only 3 NI groups"):
        paper(analysis, tasks=1, stages=4)


def test_custom_balancer_callable_and_correctness():
    rng = random.Random(3)
    for _ in range(20):
        tbox = random_tbox(rng)
        analysis = analyse(tbox)
        k = len(analysis.groups)

        def last_heavy(analysis, *, tasks, stages=None, split=None, rates=None):
            return Balance((0, k), (1, tasks), balancer="mine")

        topo = choose_topology(analysis, balancer=last_heavy, tasks=4)
        assert [s.parallelism for s in topo.stages] == [1, 4]
        stream = random_stream(rng, tbox, n=50)
        expected = oracle_reports(tbox.pis, [n.pair for n in tbox.nis], stream, 3)
        assert run_topology(LocalRunner(), topo, [tuples(stream)], window=3).keys == expected
