"""The choice-part strategies benchmark on its quick slice: every strategy answers every step validly (the
checkers), all agree on satisfiability, the kept ones ground once per input domain, and the results files
carry the per-strategy figures and the ratio against restart."""
from __future__ import annotations

import csv
import json

from experiments import bench_choice


def test_quick_slice_runs_every_strategy_and_writes_its_results(tmp_path):
    out = tmp_path / "bench_choice.json"
    assert bench_choice.main(["--quick", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["failures"] == []
    rows = data["rows"]
    assert {(r["problem"], r["size"]) for r in rows} == {("qc", 8), ("qc", 12), ("pup", 4)}
    assert {r["strategy"] for r in rows} == set(bench_choice.STRATEGIES)
    for r in rows:
        assert r["steps"] == 32 and r["invalid"] == 0 and len(r["seconds"]) == 32
        assert r["median_ms"] <= r["p95_ms"] <= r["max_ms"]
        if r["strategy"] == "restart":
            assert r["groundings"] == 32 and r["restart_over_this_median"] == 1.0
        elif r["strategy"] != "auto":           # (auto runs restart too, while it explores)
            assert r["groundings"] <= 2          # the QC encoding declares its input domain; PUP's is fixed
    with open(out.with_suffix(".csv")) as handle:
        assert len(list(csv.DictReader(handle))) == len(rows)
    assert out.with_suffix(".png").stat().st_size > 0
