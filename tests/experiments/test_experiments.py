"""Experiment inputs: the LUBM DL-Lite_core TBox, the UBA data against it, the stream generators."""
from __future__ import annotations

import json
import os

import pytest

from experiments import common
from experiments.streams import uba_replay, uba_triples
from srtopo.concepts import is_exists
from srtopo.consistency.compile import compile_ntm, ltm_n
from srtopo.consistency.generate import class_streams
from srtopo.io.tnt import read_tnt, tuples_of_statement, write_tnt
from srtopo.runners import LocalRunner
from srtopo.testing import run_topology, tuples

HAVE_DATA = all(os.path.exists(p) for p in common.UBA)
HAVE_NPD = os.path.exists(common.TBOXES["npd"])


def test_lubm_tbox_statistics():
    stats = common.tbox_stats("lubm")
    assert stats["classes"] == 43
    assert stats["pis"] == 55 and stats["pi_kinds"] == {"domain": 8, "range": 8, "subClassOf": 39}
    assert stats["nis"] == 71
    assert stats["ni_closure_named"] == 776            # the paper: 773
    assert stats["ni_roots"] == 71
    assert stats["ni_groups"] == 5                     # the paper: 5
    assert stats["unsatisfiable"] == 0


@pytest.mark.skipif(not HAVE_NPD, reason="NPD ontology not available")
def test_npd_tbox_statistics():
    stats = common.tbox_stats("npd")
    assert stats["classes"] == 342
    assert stats["nis"] == 54 and stats["ni_kinds"] == {"AllDisjointClasses": 3, "disjointWith": 51}
    assert stats["ni_roots"] == 48
    assert stats["ni_groups"] == 5


def _uba_tuples(triples):
    out = []
    for s, p, o in triples:
        out.extend(tuples_of_statement(0, f"<{s}>", p, o if o.startswith('"') else f"<{o}>"))
    return out


@pytest.fixture(scope="session")      # the session's: a worker may run other modules between its tests
def uba():
    if not HAVE_DATA:
        pytest.skip("UBA universities not available")
    return uba_triples(common.UBA)


def test_real_uba_data_is_consistent(uba):
    a = common.analysis_for("lubm")
    stream = _uba_tuples(uba)
    assert len(stream) > 15000
    relevant = set(a.relevant_concepts())
    assert sum(1 for t in stream if a.hierarchy.rep(t.concept) in relevant) > 5000   # the check sees real data
    for topo in (compile_ntm(a), ltm_n(a, 2)):
        assert run_topology(LocalRunner(), topo, [tuples(stream)], window=None).outputs == []


def test_uba_replay_reports_every_planted_violation(uba):
    a = common.analysis_for("lubm")
    replay = uba_replay(a, uba, per_time=100, violation=0.05, seed=3)
    assert 20 < len(replay.planted)
    stream = []
    for t, s, p, o in replay.lines:
        stream.extend(tuples_of_statement(t, f"<{s}>", p, o if o.startswith('"') else f"<{o}>"))
    keys = run_topology(LocalRunner(), compile_ntm(a), [tuples(stream)], window=5).keys
    assert replay.planted <= keys
    assert {s for s, _ in keys} == {s for s, _ in replay.planted}
    assert uba_replay(a, uba, per_time=100, violation=0.05, seed=3).lines == replay.lines


def test_class_streams_deterministic_and_one_stream_per_class():
    a = common.analysis_for("lubm")
    one = class_streams(a, time_points=50, rate=2, violation=0.05, seed=7)
    two = class_streams(a, time_points=50, rate=2, violation=0.05, seed=7)
    other = class_streams(a, time_points=50, rate=2, violation=0.05, seed=8)
    assert one.tuples == two.tuples and one.planted == two.planted
    assert one.tuples != other.tuples
    per_class = {}
    for t in one.tuples:
        per_class[(t.concept, t.time)] = per_class.get((t.concept, t.time), 0) + 1
    assert set(per_class.values()) == {2}                      # every stream at the same rate
    assert len({c for c, _ in per_class}) == 43


@pytest.mark.parametrize("fraction", [0.0, 0.02, 0.1])
def test_violation_fraction_and_reports_equal_planted(fraction):
    a = common.analysis_for("lubm")
    gen = class_streams(a, time_points=120, rate=2, violation=fraction, seed=1)
    assert abs(gen.violation_fraction - fraction) <= max(0.006, 0.15 * fraction)
    for topo in (compile_ntm(a), ltm_n(a, 0), ltm_n(a, 3)):
        keys = run_topology(LocalRunner(), topo, [tuples(gen.tuples)], window=3, lateness=0).keys
        assert keys == gen.planted


def test_written_stream_reads_back(tmp_path):
    a = common.analysis_for("lubm")
    gen = class_streams(a, time_points=20, rate=1, violation=0.05, seed=2)
    files = write_tnt(str(tmp_path / "s"), gen.tuples, time_points_per_file=5)
    assert len(files) == 4
    assert [os.path.getmtime(f) for f in files] == sorted(os.path.getmtime(f) for f in files)
    back = list(read_tnt(str(tmp_path / "s")))
    assert [(t.subject, t.concept, t.time) for t in back] == [(t.subject, t.concept, t.time) for t in gen.tuples]
    assert not any(is_exists(t.concept) for t in back)


def test_rdflib_baseline_agrees_on_a_small_stream():
    from experiments.rdflib_baseline import run_rdflib
    a = common.analysis_for("lubm")
    gen = class_streams(a, time_points=6, rate=1, violation=0.1, seed=4)
    result = run_rdflib(common.TBOXES["lubm"], gen.tuples, 3)
    assert result["report_keys"] == gen.planted and gen.planted


def test_fig5_slice_runs_through_the_runner_protocol(tmp_path):
    """A small fig5 on the local runner: every topology reports exactly the planted violations (the experiment
    checks it and stops otherwise), one row per topology and budget, and its table and plot are written."""
    from experiments.run_paper import main
    out = tmp_path / "results"
    assert main(["fig5", "--engines", "local", "--tboxes", "lubm", "--tasks", "2", "--scale", "0.05",
                 "--out", str(out), "--work", str(tmp_path / "work")]) == 0
    rows = common.read_rows("fig5", str(out))
    a = common.analysis_for("lubm")
    assert [r.topology for r in rows] == ["ntm"] + [f"ltm-{n}" for n in range(len(a.groups) + 1)]
    assert len({r.reports for r in rows}) == 1 and rows[0].reports > 0
    assert all(r["model_tps"] > 0 and r.throughput_tps > 0 for r in rows)
    assert (out / "fig5.md").read_text().startswith("# Fig. 5") and (out / "fig5.png").exists()


def test_a_dependency_runs_first_when_its_results_are_missing(tmp_path):
    """cost_model reads fig5 (run first here), calibrates the runners and plans it predicts for, and writes a plain list of
    rows: one per plan and budget, exactly one picked per budget, predictions and measurements positive."""
    from experiments.run_paper import main
    out = tmp_path / "results"
    assert main(["cost_model", "--engines", "local,operators", "--tboxes", "lubm", "--tasks", "2,4", "--scale",
                 "0.05", "--operators-tuples", "lubm=2000", "--out", str(out), "--work", str(tmp_path / "work")]) == 0
    assert (out / "fig5.json").exists() and (out / "calibration.json").exists()
    rows = json.loads((out / "cost_model.json").read_text(encoding="utf-8"))
    assert isinstance(rows, list)
    a = common.analysis_for("lubm")
    assert len(rows) == 2 * 2 * (len(a.groups) + 2)
    for key in {(r["engine"], r["budget"]) for r in rows}:
        sub = [r for r in rows if (r["engine"], r["budget"]) == key]
        assert [r["plan"] for r in sub] == ["ntm"] + [f"ltm-{n}" for n in range(len(a.groups) + 1)]
        assert sum(r["picked"] for r in sub) == 1
        assert all(r["predicted_tuples_s"] > 0 and r["measured_tuples_s"] > 0 for r in sub)
        assert set(sub[0]) >= {"tbox", "engine", "budget", "plan", "predicted_tuples_s", "measured_tuples_s",
                               "picked"}
    # the indexed plan's one-stage NTM with the whole budget is both predicted and measured the fastest
    assert all(r["plan"] == "ntm" for r in rows if r["engine"] == "local" and r["picked"])
    assert (out / "cost_model.md").read_text().startswith("# The default balancer")


def test_spark_streams_are_whole_micro_batches_of_whole_files(tmp_path):
    """fig5's Spark stream: at least --spark-tuples, in files of about --spark-file-tuples, a whole number of
    micro-batches of --spark-batch-tuples (no small last batch to weigh on the steady rate)."""
    from experiments.context import Context
    from experiments.run_paper import parser
    args = parser().parse_args(["fig5", "--spark-tuples", "30000", "--spark-file-tuples", "4000",
                                "--spark-batch-tuples", "8000"])
    for tbox in ("lubm", "npd") if HAVE_NPD else ("lubm",):
        stream = Context(args, str(tmp_path)).stream(tbox, "spark")
        p = stream.params
        sizes = [len(read_tnt_lines) for read_tnt_lines in
                 (open(os.path.join(stream.directory, f), encoding="utf-8").readlines()
                  for f in sorted(os.listdir(stream.directory)))]
        assert p["tuples"] >= 30000 and p["files_per_batch"] == 2 and p["files"] % 2 == 0
        assert len(set(sizes)) == 1 and sum(sizes) == p["tuples"] and abs(sizes[0] - 4000) < 4000 * 0.2


def test_fig5_races_the_fastest_plans_again_and_keeps_their_median():
    """fig5 on Spark: every plan runs once, then each round runs the two fastest of every budget (by their median
    so far) and the default balancer's pick again, budget after budget; a plan's figure is the median of its
    runs."""
    from experiments.figures.fig5 import combined, race
    speeds = {"a": [100, 50, 60], "b": [90, 95, 96], "c": [80, 70], "x": [10], "y": [20, 30, 5], "z": [30, 10, 5]}
    calls = []

    def measure(key):
        calls.append(key)
        return common.Row("fig5", topology=key, throughput_tps=speeds[key][calls.count(key) - 1])

    runs = race({2: ["a", "b", "c"], 4: ["x", "y", "z"]}, measure, rounds=3, contenders=2)
    # round 2: a, b (budget 2), then z, y (budget 4); round 3: b, then c (a's median fell to 75, below c's 80),
    # then y and z (medians 25 and 20); x stays at one run
    assert calls == ["a", "b", "c", "x", "y", "z", "a", "b", "z", "y", "b", "c", "y", "z"]
    assert [r.throughput_tps for r in runs["b"]] == [90, 95, 96]
    row = combined(runs["y"])
    assert row.throughput_tps == 20 and row["runs_tps"] == [20, 30, 5] and row is not runs["y"][0]
    assert combined(runs["x"]).throughput_tps == 10 and "turn" not in combined(runs["x"]).detail
    assert combined(runs["a"]).throughput_tps == 75 and combined(runs["c"]).throughput_tps == 75
    assert [r["turn"] for r in runs["b"]] == [2, 2, 2] and [r["turn"] for r in runs["z"]] == [4, 4, 4]
    # a kept key (the default balancer's pick) runs in every round, next to the two fastest
    calls.clear()
    speeds["x"] = [10, 11, 12]
    race({2: ["a", "b", "c"], 4: ["x", "y", "z"]}, measure, rounds=2, contenders=2, keep={4: "x", 2: "a"})
    assert calls == ["a", "b", "c", "x", "y", "z", "a", "b", "z", "y", "x"]
    # no contenders (or a negative count): only the kept keys run again
    calls.clear()
    race({2: ["a", "b", "c"]}, lambda k: measure(k) if k != "a" else common.Row("fig5", throughput_tps=1.0),
         rounds=2, contenders=-1, keep={2: "c"})
    assert calls == ["b", "c", "c"]


def test_a_plan_shared_by_budgets_is_judged_on_the_runs_of_each_budgets_turn():
    """The pick ``ntm@2`` is NTM at budget 2 and the pick at budget 4: its figure at a budget is the median of the
    runs made in that budget's turns, next to that budget's leaders, so the machine's drift between turns does not
    enter the comparison; a plan with no run in a budget's turn keeps all its runs."""
    from experiments.figures.fig5 import combined, in_turns, race
    speeds = {"s": [100, 150, 120, 200], "b": [150, 150, 150], "c": [10], "d": [210, 190, 200]}
    calls = []

    def measure(key):
        calls.append(key)
        return common.Row("fig5", topology=key, throughput_tps=speeds[key][calls.count(key) - 1])

    runs = race({2: ["s", "b", "c"], 4: ["d", "s"]}, measure, rounds=3, contenders=1, keep={4: "s"})
    # s is kept at budget 4: it runs in budget 4's turn from the first round on, right after d
    assert calls == ["s", "b", "c", "d", "s", "b", "d", "s", "b", "d", "s"]
    assert [r["turn"] for r in runs["s"]] == [2, 4, 4, 4]
    assert combined(in_turns(runs["s"], 4)).throughput_tps == 150     # the three runs next to d (median 200)
    assert combined(in_turns(runs["s"], 2)).throughput_tps == 100     # its first run, in budget 2's turn
    assert combined(in_turns(runs["c"], 4)).throughput_tps == 10      # no run at 4: all of them


def test_a_plans_figure_is_relative_to_the_pick_in_the_same_turns():
    """The machine slows between rounds: the pick, run in every round, would lose to a plan whose only run fell on
    the fast first round if figures were plain medians. Relative to the pick's run in the same turn, a plan's
    figure carries no drift: ``c`` ran at 0.9 of the pick, ``a`` at 0.95 and 0.95."""
    from experiments.figures.fig5 import blocked_rate, combined, race, relative_to
    speeds = {"p": [200, 100, 100], "a": [190, 95, 95], "c": [180], "b": [100]}
    calls = []

    def measure(key):
        calls.append(key)
        return common.Row("fig5", topology=key, throughput_tps=speeds[key][calls.count(key) - 1])

    runs = race({2: ["p", "a", "c", "b"]}, measure, rounds=3, contenders=2, keep={2: "p"})
    assert calls == ["p", "a", "c", "b", "p", "a", "p", "a"]
    assert combined(runs["c"]).throughput_tps == 180 > combined(runs["p"]).throughput_tps == 100   # plain medians
    assert blocked_rate(runs["c"], runs["p"], 2) == 100 * 0.9 and blocked_rate(runs["a"], runs["p"], 2) == 95
    row = relative_to(combined(runs["c"]), runs["c"], runs["p"], 2)
    assert row.throughput_tps == 90 and row["median_tps"] == 180 and row.get("runs_tps") is None
    assert blocked_rate(runs["c"], runs["p"], 4) is None        # no shared turn: the plain figure stays
    assert relative_to(combined(runs["c"]), runs["c"], runs["p"], 4).throughput_tps == 180


def test_the_race_starts_no_round_that_would_end_after_the_deadline():
    """Rounds after the first give way to the run's time budget: a round whose runs, at the seconds per run seen so
    far, would end after the deadline is not started (and no later one)."""
    from experiments.figures.fig5 import race
    now = [0.0]

    def measure(key):
        now[0] += 10.0                  # every run takes 10 s
        return common.Row("fig5", topology=key, throughput_tps={"a": 3.0, "b": 2.0, "c": 1.0}[key])

    def runs_until(deadline):
        now[0] = 0.0
        runs = race({2: ["a", "b", "c"]}, measure, rounds=4, contenders=2, deadline=deadline, clock=lambda: now[0])
        return sum(len(r) for r in runs.values())

    # round 1: 3 runs (30 s); each later round 2 runs (20 s)
    assert runs_until(None) == 3 + 3 * 2
    assert runs_until(49.0) == 3 and runs_until(50.0) == 5 and runs_until(70.0) == 7 and runs_until(1e9) == 9


def test_fig5_measures_a_pick_outside_the_grid_and_cost_model_judges_it(tmp_path):
    """On Spark the default balancer may give no stage more tasks than the cores: at budget 4 it picks NTM on 2
    tasks, the same run as NTM at budget 2. fig5 measures that key in each budget's turn of a round, keeps it out
    of the figure's grid as a ``pick_only`` row ``ntm@2``, and cost_model compares it with the best evenly shared
    plan."""
    from types import SimpleNamespace

    from experiments.figures import cost_model, fig5
    from experiments.picks import plan_name
    a = common.analysis_for("lubm")
    ntm2 = compile_ntm(a, parallelism=2)
    assert plan_name(ntm2, 2) == "ntm" and plan_name(ntm2, 4) == "ntm@2"
    assert plan_name(ltm_n(a, 1, parallelism=[2, 2]), 4) == "ltm-1"
    assert plan_name(ltm_n(a, 1, parallelism=[2, 2]), 6) == "ltm-1@2+2"
    calls = []

    def measure(engine, topology, stream, label):
        key = (topology.label, tuple(s.parallelism for s in topology.stages))
        calls.append(key)
        # NTM on 2 tasks: the warm-up and budget 2's turns at 200, budget 4's turns (the machine's drift) at 300 (its
        # runs: warm-up, round 1 at 2 and at 4, round 2 at 2 and at 4); the others a little faster with every run
        speed = (300.0 if calls.count(key) in (3, 5) else 200.0) if key == ("ntm", (2,)) else 100.0 + len(calls)
        return common.Row("fig5", topology=topology.label, engine=engine, tbox="lubm", throughput_tps=speed,
                          detail={"stream_tuples": 1000, "batch_tuples": 500})

    args = SimpleNamespace(tboxes=["lubm"], tasks=[2, 4], spark_rounds=2, spark_contenders=1)
    ctx = SimpleNamespace(args=args, measure=measure,
                          stream_for=lambda tbox, engine: SimpleNamespace(params={"tuples": 1000}))
    rows = fig5.measure_engine(ctx, "spark", {("lubm", "spark"): {2: ntm2, 4: ntm2}})
    plans = len(a.groups) + 2
    assert calls[0] == ("ntm", (2,))                                    # the warm-up
    # round 1: every plan of both budgets, and the pick again in budget 4's turn, after budget 4's plans
    first = calls[1:2 + 2 * plans]
    assert first.count(("ntm", (2,))) == 2 and len(set(first)) == 2 * plans and first[-1] == ("ntm", (2,))
    # round 2: the fastest of each budget and the pick, in each budget's turn: NTM on 2 tasks at 2 and at 4
    assert calls[2 + 2 * plans:] == [("ntm", (2,)), ("ntm", (2,))]
    picks = [r for r in rows if r.get("pick_only")]
    # at budget 4 the pick's figure is its runs in budget 4's turns; at budget 2 NTM's are the runs of budget 2's
    # turns (the warm-up is not kept)
    assert [(r.topology, r.tasks, r.throughput_tps) for r in picks] == [("ntm@2", 4, 300.0)]
    ntm_at_2 = next(r for r in rows if r.tasks == 2 and r.topology == "ntm")
    assert ntm_at_2.throughput_tps == 200.0 and ntm_at_2["runs_tps"] == [200.0, 200.0]
    assert len(fig5.grid(rows)) == 2 * plans and "ntm@2" not in fig5.table(rows)
    ctx.dependency = lambda name: rows
    ctx.cost_target = lambda engine: common_target()
    ctx.args.cost_calibration = str(tmp_path / "none.json")
    judged = cost_model.run(ctx)
    at4 = [r for r in judged if r["budget"] == 4]
    assert [r["plan"] for r in at4 if r["picked"]] == ["ntm@2"] and len(at4) == plans + 1
    verdict = next(s for s in cost_model.summary(judged) if s["budget"] == 4)
    assert verdict["picked"] == "ntm@2" and verdict["best"] != "ntm@2"
    assert verdict["pick_over_best"] == pytest.approx(300.0 / max(r.throughput_tps for r in rows
                                                                   if r.tasks == 4 and not r.get("pick_only")))
    assert "| - |" in cost_model.table(judged)          # ntm@2 has no cell at budget 2, where it is the grid's NTM


def common_target():
    from srtopo.consistency.cost import Target
    return Target("spark", "staged", 2, batch_tuples=500_000, partitions=2, cores_known=True)
