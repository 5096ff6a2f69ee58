"""The Streamlog shortest-path benchmark on tiny graphs: both evaluators agree, the pruned formulation gives the
slides' minpath atoms and the ones a Dijkstra oracle computes, and the results file has its fields."""
from __future__ import annotations

import heapq
import json

import pytest

from experiments import bench_streamlog as bench
from experiments.common import ExperimentError

TINY = {"nodes": 9, "timestamps": 14, "arcs_per_ts": 2, "max_weight": 4, "bound": 10, "program": "pruned",
        "baseline_program": "same", "baseline_budget": 60.0, "seed": 3}


def oracle(stream: list[list[tuple]], bound: int) -> dict[int, list[str]]:
    """minpath(t,X,Z,D): D is the length of a shortest X->Z walk (at least one arc, at most ``bound``) over the
    arcs up to t, and some walk of that length uses an arc of timestamp t. Dijkstra over (node, used an arc of
    t)."""
    out, arcs = {}, []
    for t, new in enumerate(stream, start=1):
        arcs += [(x, y, d, t) for x, y, d in new]
        succ: dict = {}
        for x, y, d, ts in arcs:
            succ.setdefault(x, []).append((y, d, ts == t))
        atoms = []
        for source in {x for x, _y, _d, _ts in arcs}:
            best: dict = {}
            queue = [(d, y, now) for y, d, now in succ.get(source, [])]
            heapq.heapify(queue)
            while queue:
                dist, node, now = heapq.heappop(queue)
                if dist > bound or (node, now) in best:
                    continue
                best[(node, now)] = dist
                for y, d, is_now in succ.get(node, []):
                    heapq.heappush(queue, (dist + d, y, now or is_now))
            for (node, now), dist in best.items():
                if now and dist <= best.get((node, False), dist):
                    atoms.append(f"minpath({t},{source},{node},{dist})")
        out[t] = sorted(atoms)
    return out


def test_both_evaluators_agree_on_a_tiny_graph():
    row = bench.run_size(dict(TINY), isolate=False, bar=False)
    assert row["timestamps"] == 14 and row["arcs"] == 28
    assert row["common_prefix"] == 14 and row["agree_on_common_prefix"]
    assert not row["baseline"]["stopped_early"] and row["baseline"]["timestamps_completed"] == 14
    assert row["minpath_atoms"] > 28                      # paths of several arcs, not only the arcs
    assert len(row["incremental"]["latencies_ms"]) == 14 and row["ratio_baseline_over_incremental"] > 0


def test_pruned_program_gives_the_slides_minpaths_and_the_oracles():
    stream = bench.make_stream(TINY["nodes"], TINY["timestamps"], TINY["arcs_per_ts"], TINY["max_weight"], seed=5)
    expected = oracle(stream, TINY["bound"])
    assert sum(len(a) for a in expected.values()) > 40
    for name in ("pruned", "slides"):
        got = bench.run_incremental(bench.program_text(name, TINY["bound"]), stream, bar=False)["atoms"]
        assert got == expected, name
    # the slides' rules re-solved in one shot: the same atoms at the last timestamp
    last = bench.run_baseline(bench.program_text("slides", TINY["bound"]), stream[:6], budget_s=60, bar=False)
    assert last["atoms"][6] == expected[6]


def test_a_disagreement_fails_loudly():
    inc = {"latencies_s": [0.1, 0.1], "atoms": {1: ["minpath(1,0,1,2)"], 2: ["minpath(2,0,2,3)"]}}
    base = {"latencies_s": [0.1], "atoms": {1: ["minpath(1,0,1,2)"]}}
    assert bench.compare(inc, base) == 1                  # compared on the common prefix only
    base["atoms"][1] = []
    with pytest.raises(ExperimentError, match="timestamp 1"):
        bench.compare(inc, base)


def test_results_json_and_plot(tmp_path):
    assert bench.main(["--sizes", "8,12", "--timestamps", "6", "--arcs-per-ts", "2", "--bound", "8",
                       "--in-process", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "bench_streamlog.json").read_text())
    assert (tmp_path / "bench_streamlog.png").stat().st_size > 0
    assert data["experiment"] == "bench_streamlog" and "machine" in data
    assert data["params"]["sizes"] == [8, 12] and data["params"]["program"] == "pruned"
    assert "minpath(T,X,Z,D) :- path(T,X,Z,D), not shorter(T,X,Z,D)." in data["program_text"]
    assert "bound(8)." in data["baseline_rules"]
    for row in data["rows"]:
        assert {"nodes", "timestamps", "arcs", "minpath_atoms", "incremental", "baseline", "common_prefix",
                "agree_on_common_prefix", "ratio_baseline_over_incremental"} <= set(row)
        assert {"p50_ms", "p95_ms", "max_ms", "timestamps_per_s", "arcs_per_s", "peak_rss_mb",
                "latencies_ms"} <= set(row["incremental"])
        assert {"p50_ms", "p95_ms", "timestamps_completed", "stopped_early",
                "latencies_ms"} <= set(row["baseline"])
        assert row["timestamps"] == 6 and row["common_prefix"] == 6 and row["agree_on_common_prefix"]
