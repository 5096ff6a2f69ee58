"""The runner-aware cost model, its fitting and calibration file, and the default ``cost`` balancer."""
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from srtopo.cli import main
from srtopo.consistency.balance import cost, cost_candidates
from srtopo.consistency.choose import choose_topology
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.cost import (
    CALIBRATION_ENV,
    Coefficients,
    Observation,
    Target,
    cores_of_master,
    fit,
    nnls,
    predict_tps,
    read_calibration,
    stage_loads,
    write_calibration,
)
from srtopo.consistency.nis import analyse
from srtopo.consistency.owl import load_tbox
from srtopo.errors import TopologyError
from tests.randomgen import random_tbox

ROOT = Path(__file__).resolve().parents[2]
TEX = str(ROOT / "examples" / "tex.ttl")
LUBM = str(ROOT / "src" / "srtopo" / "consistency" / "data" / "lubm-dllite.ttl")


@pytest.fixture(scope="module")
def tex():
    return analyse(load_tbox(TEX))


@pytest.fixture(scope="module")
def lubm():
    return analyse(load_tbox(LUBM))


def test_loads_are_the_routing_counts_of_the_ir():
    """stage_loads re-derives per stage what Topology.route_counts says per concept: the same sums on random
    TBoxes and splits (rate 1 per concept)."""
    rng = random.Random(11)
    for _ in range(15):
        analysis = analyse(random_tbox(rng))
        k = len(analysis.groups)
        if k < 2:
            continue
        cut = rng.randint(0, k)
        topology = compile_ltm(analysis, [cut, k - cut])
        expected = [Counter() for _ in topology.stages]
        concepts = topology.source.concepts
        for c in concepts:
            for i, (n_in, n_cached, n_fwd, n_inf, _ops) in enumerate(topology.route_counts(c)):
                expected[i].update(arrivals=1, concepts=n_in, cached=n_cached, passed=n_fwd + n_inf,
                                   met=n_in * len(topology.stages[i].conjunction_ops))
        for load, want in zip(stage_loads(topology), expected):
            for name, value in load.loads.items():
                assert value * len(concepts) == pytest.approx(want[name])


def test_the_indexed_plan_does_not_pay_for_a_larger_closure():
    """A tuple of the indexed plan probes its subject's cached tuples, whatever the stage's conjunction ops: two
    TBoxes with the same concepts, all cached, and 2 vs 6 disjointness pairs get the same NTM prediction from any
    indexed coefficients, while the operators plan, where every op meets the tuple, predicts the bigger closure
    slower."""
    from srtopo.consistency.tbox import TBox
    few = [("urn:A", "urn:B"), ("urn:C", "urn:D")]
    many = few + [("urn:A", "urn:C"), ("urn:A", "urn:D"), ("urn:B", "urn:C"), ("urn:B", "urn:D")]
    small, large = (compile_ntm(analyse(TBox.build(nis=nis)), parallelism=2) for nis in (few, many))
    assert len(large.stages[0].conjunction_ops) == 3 * len(small.stages[0].conjunction_ops)
    indexed = Target("local", "indexed")
    for coefficients in (None, Coefficients({"arrivals": 1e-6, "cached": 3e-6, "passed": 5e-7})):
        assert predict_tps(large, indexed, coefficients) == pytest.approx(predict_tps(small, indexed, coefficients))
    operators = Target("local", "operators")
    assert predict_tps(large, operators) < predict_tps(small, operators)


def test_predictions_by_hand(tex):
    """TEX, every concept at the same rate. Local, one unit of cost per tuple reaching a stage: NTM's one stage
    with both tasks does 1/2 per tuple, LTM's stages one task each do 1 each: 2x the throughput for NTM."""
    ntm, ltm = compile_ntm(tex, parallelism=2), compile_ltm(tex, [1, 2], parallelism=[1, 1])
    per_arrival = Coefficients({"arrivals": 1e-6})
    local = Target("local", "indexed")
    assert predict_tps(ntm, local, per_arrival) == pytest.approx(2e6)
    assert predict_tps(ltm, local, per_arrival) == pytest.approx(1e6)
    # Spark staged, 1 s per batch and 0.5 s per exchange, nothing per tuple: B / (1 + 0.5 x stages)
    fixed = Coefficients({}, per_batch=1.0, per_exchange=0.5)
    staged = Target("spark", "staged", cores=2, batch_tuples=1000)
    assert predict_tps(ntm, staged, fixed) == pytest.approx(1000 / 1.5)
    assert predict_tps(ltm, staged, fixed) == pytest.approx(1000 / 2.0)
    assert predict_tps(ltm, Target("spark", "fused", cores=2, batch_tuples=1000), fixed) == pytest.approx(1000 / 1.5)


def test_the_operators_plan_favours_the_pipeline_and_the_indexed_plan_ntm(lubm):
    """With the default constants: when every op of a stage meets every tuple (the paper's bolts), splitting the
    closure pays and the balancer picks an LTM split; with hash lookups it picks NTM (one stage, all the tasks)."""
    assert cost(lubm, tasks=2, target=Target("local", "operators")).split != (len(lubm.groups),)
    chosen = cost(lubm, tasks=2, target=Target("local", "indexed"))
    assert chosen.split == (len(lubm.groups),) and chosen.parallelism == (4,)
    assert choose_topology(lubm, tasks=2).label == "ntm"
    assert len(choose_topology(lubm, method="ltm", tasks=2).stages) == 2
    assert len(choose_topology(lubm, tasks=2, target=Target("local", "operators")).stages) == 2


def test_the_balancer_picks_the_best_predicted_candidate(lubm):
    target = Target("spark", "staged", cores=2)
    candidates = cost_candidates(lubm, tasks=3)
    assert [len(s) for s, _ in candidates] == [1] + [2] * (len(lubm.groups) - 1)
    assert all(sum(st.parallelism for st in t.stages) == 6 for _, t in candidates)     # one budget for all
    best = max(candidates, key=lambda c: predict_tps(c[1], target))
    assert cost(lubm, tasks=3, target=target).split == best[0]
    with pytest.raises(TopologyError, match="only 5 NI groups"):
        cost(lubm, tasks=1, stages=6)


def test_on_spark_with_known_cores_no_stage_gets_more_tasks_than_cores(lubm):
    """The budget is a ceiling where the cores are known: tasks beyond them run one after the other, so the
    capped plan is predicted as fast without ``per_task`` and faster with it; where the cores are a guess (a
    cluster URL) the whole budget is used."""
    known = Target("spark", "staged", cores=2, cores_known=True)
    k = len(lubm.groups)
    for tasks in (1, 2, 3):
        chosen = cost(lubm, tasks=tasks, target=known)
        assert chosen.split == (k,) and chosen.parallelism == (min(2 * tasks, 2),)
        assert choose_topology(lubm, tasks=tasks, target=known).stages[0].parallelism == min(2 * tasks, 2)
    guessed = Target("spark", "staged", cores=2)
    assert cost(lubm, tasks=3, target=guessed).parallelism == (6,)
    with_tasks = Coefficients({"cached": 1e-7}, per_tuple=1e-5, per_batch=0.5, per_exchange=0.3, per_task=0.1)
    two, six = compile_ntm(lubm, parallelism=2), compile_ntm(lubm, parallelism=6)
    batch = Target("spark", "staged", cores=2, batch_tuples=1000, cores_known=True)
    assert 1000 / predict_tps(six, batch, with_tasks) - 1000 / predict_tps(two, batch, with_tasks) \
        == pytest.approx(0.4)
    # an LTM split asked for keeps its stages, each capped
    assert cost(lubm, tasks=3, stages=2, target=known).parallelism == (2, 2)
    # the local runner runs every task of the budget (one thread each)
    assert cost(lubm, tasks=3, target=Target("local", "indexed", cores=2, cores_known=True)).parallelism == (6,)
    assert cores_of_master("local[2]") == 2
    from srtopo.consistency.cost import target_for
    from srtopo.runners import SparkOptions
    assert target_for("spark", SparkOptions(master="local[2]")).cores_known
    assert not target_for("spark", SparkOptions(master="spark://elsewhere:7077")).cores_known


def test_nnls_recovers_known_coefficients():
    rng = random.Random(5)
    truth = [3.0, 0.0, 0.25]
    rows = [[rng.random(), rng.random() * 100, rng.random() * 10] for _ in range(40)]
    targets = [sum(a * b for a, b in zip(r, truth)) for r in rows]
    assert nnls(rows, targets) == pytest.approx(truth, abs=1e-9)
    # the unconstrained solution would make the second coefficient negative: it is held at zero
    rows = [[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]]
    x = nnls(rows, [3.0, 2.0, 1.0])
    assert x[1] == 0.0 and x[0] == pytest.approx(2.0)


def test_fit_recovers_the_constants_that_made_the_observations(lubm):
    plans = [compile_ntm(lubm, parallelism=2)] + [compile_ltm(lubm, [n, 5 - n], parallelism=[1, 2]) for n in range(6)]
    local = Target("local", "operators")
    truth = Coefficients({"arrivals": 2e-7, "cached": 5e-7, "passed": 1e-7, "met": 3e-8})
    observations = []
    for t in plans:
        for k, load in enumerate(stage_loads(t)):
            observations.append(Observation(t, local, sum(truth.per_load[f] * load.loads[f] for f in truth.per_load),
                                            stage=k))
    got = fit(observations)
    for name, value in truth.per_load.items():
        assert got.per_load[name] == pytest.approx(value, rel=1e-6)
    spark = Target("spark", "staged", cores=2)
    truth = Coefficients({"concepts": 1e-6, "cached": 2e-6}, per_tuple=4e-6, per_batch=0.7, per_exchange=0.3,
                         per_task=0.05)
    observations = []
    for t in plans + [compile_ntm(lubm, parallelism=4), compile_ltm(lubm, [2, 3], parallelism=[4, 4])]:
        for b in (100_000, 400_000):
            sized = Target("spark", "staged", 2, b)
            observations.append(Observation(t, spark, b / predict_tps(t, sized, truth), batch_tuples=b))
    got = fit(observations)
    assert (got.per_batch, got.per_exchange, got.per_tuple, got.per_task) == pytest.approx((0.7, 0.3, 4e-6, 0.05),
                                                                                           rel=1e-6)
    assert got.per_load["cached"] == pytest.approx(2e-6, rel=1e-5)


def test_calibration_file_round_trip_and_bad_file(tmp_path):
    path = str(tmp_path / "c" / "calibration.json")
    assert read_calibration(path) == {}
    mine = Coefficients({"cached": 1e-6}, per_tuple=1e-6, per_batch=0.5, source="here", per_task=0.02)
    write_calibration({"spark/fused": mine}, path)
    write_calibration({"local/indexed": Coefficients({"arrivals": 1e-7})}, path)     # merged, not replaced
    assert read_calibration(path) == {"spark/fused": mine, "local/indexed": Coefficients({"arrivals": 1e-7})}
    Path(path).write_text("{not json", encoding="utf-8")
    with pytest.raises(TopologyError, match="not a calibration file"):
        read_calibration(path)
    Path(path).write_text(json.dumps({"engines": {"local/indexed": {"per_load": {"warp": 1}}}}), encoding="utf-8")
    with pytest.raises(TopologyError, match="calibration.json: cost coefficients name unknown loads"):
        read_calibration(path)
    # calibrating again, as the message says, replaces what cannot be read (an entry of an earlier model, a file
    # that is not JSON) and keeps what can
    Path(path).write_text(json.dumps({"engines": {"local/indexed": {"per_load": {"lookups": 1e-9}},
                                                  "spark/fused": mine.to_dict()}}), encoding="utf-8")
    write_calibration({"local/indexed": Coefficients({"arrivals": 2e-7})}, path)
    assert read_calibration(path) == {"spark/fused": mine, "local/indexed": Coefficients({"arrivals": 2e-7})}
    Path(path).write_text("{not json", encoding="utf-8")
    write_calibration({"spark/fused": mine}, path)
    assert read_calibration(path) == {"spark/fused": mine}
    Path(path).write_bytes(b"\xff\xfe{")
    with pytest.raises(TopologyError, match="not a calibration file"):
        read_calibration(path)
    for bad in ("NaN", -1e-6, "Infinity"):
        Path(path).write_text('{"engines": {"local/indexed": {"per_load": {"cached": %s}}}}' % bad, encoding="utf-8")
        with pytest.raises(TopologyError, match="finite seconds >= 0"):
            read_calibration(path)
    Path(path).write_text('{"engines": {"local/indexed": {"per_load": {"cached": 0}}}}', encoding="utf-8")
    with pytest.raises(TopologyError, match="not all zero"):
        read_calibration(path)
    Path(path).write_text('{"engines": {"spark/staged": {"per_load": {}, "per_batch": 0.5, "per_task": -0.1}}}',
                          encoding="utf-8")
    with pytest.raises(TopologyError, match="finite seconds >= 0"):
        read_calibration(path)
    # a file of an earlier version, without per_task: nothing per task
    Path(path).write_text('{"engines": {"spark/staged": {"per_load": {"cached": 1e-6}, "per_batch": 0.5}}}',
                          encoding="utf-8")
    assert read_calibration(path)["spark/staged"].per_task == 0.0
    # a byte-order mark, as an editor may write one, is read past
    Path(path).write_bytes("\ufeff".encode() + json.dumps({"engines": {"spark/fused": mine.to_dict()}}).encode())
    assert read_calibration(path) == {"spark/fused": mine}


def test_cores_of_master():
    assert cores_of_master("local[3]") == 3 and cores_of_master("local") == 1
    assert cores_of_master("local[*]") >= 1 and cores_of_master("spark://h:7077") >= 1


def test_calibrate_then_compile_plans_with_the_file(tmp_path, monkeypatch, capsys):
    """``srtopo calibrate`` measures the local runner's plans on a short stream (checking every run's reports
    against the planted violations) and writes the file the balancer reads; ``compile`` then plans with it."""
    path = tmp_path / "calibration.json"
    monkeypatch.setenv(CALIBRATION_ENV, str(path))
    assert main(["calibrate", "--engines", "local", "--local-tuples", "8000", "--operators-tuples", "3000"]) == 0
    found = read_calibration(str(path))
    assert set(found) == {"local/indexed", "local/operators", "local/columnar"}
    assert found["local/operators"].per_load["met"] > 0 and "srtopo calibrate" in found["local/operators"].source
    runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
    assert {r["plan"] for r in runs} >= {"ntm", "ltm-0", "ltm-2"} and all(r["measured_tuples_s"] for r in runs)
    capsys.readouterr()
    assert main(["compile", "--tbox", LUBM, "--format", "json", "--engine", "local", "--local-plan", "operators",
                 "--tasks", "2"]) == 0
    chosen = json.loads(capsys.readouterr().out)
    assert len(chosen["stages"]) == 2
    assert main(["calibrate", "--engines", "warp"]) == 2
    assert "no cost model named 'warp'" in capsys.readouterr().err
    flat = tmp_path / "flat.ttl"
    flat.write_text("@prefix owl: <http://www.w3.org/2002/07/owl#> .\n<http://e/A> a owl:Class .\n", encoding="utf-8")
    assert main(["calibrate", "--tbox", str(flat), "--local-tuples", "100", "--operators-tuples", "50"]) == 2
    assert "no disjointness" in capsys.readouterr().err
    assert set(read_calibration(str(path))) == {"local/indexed", "local/operators", "local/columnar"}  # as it was


def test_every_physical_plan_of_every_runner_has_a_cost_model(lubm, capsys):
    """The ``cost`` balancer (``check``'s default) plans for every plan a runner runs: each has a target, default
    coefficients and a finite prediction, and ``compile`` takes each plan's name for the runner it models."""
    from types import SimpleNamespace

    from srtopo.consistency.cost import target_for
    from srtopo.runners.local import PHYSICAL_PLANS as LOCAL_PLANS
    from srtopo.runners.spark.runner import PHYSICAL_PLANS as SPARK_PLANS
    ntm, ltm = compile_ntm(lubm), compile_ltm(lubm, [2, 3])
    for runner, plans, flag in (("local", LOCAL_PLANS, "--local-plan"), ("spark", SPARK_PLANS, "--physical-plan")):
        for plan in plans:
            target = target_for(runner, SimpleNamespace(physical_plan=plan, master="local[2]"))
            assert target.key == f"{runner}/{plan}"
            for topology in (ntm, ltm):
                assert 0 < predict_tps(topology, target) < float("inf"), (target.key, topology.label)
            assert main(["compile", "--tbox", LUBM, "--format", "json", "--engine", runner, flag, plan]) == 0, plan
            assert json.loads(capsys.readouterr().out)["stages"]
