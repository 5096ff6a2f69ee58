"""The rules benchmarks' module: its first word names the workload (none: restart vs incremental), an unknown
input is a usage error, and the default workload on a few time points of one ICLP2021 input writes both
strategies' figures, which must give the same atoms."""
from __future__ import annotations

import json
import os

import pytest

from experiments import bench_rules
from experiments.common import ICLP, ICLP_INPUTS


def test_the_first_word_names_the_workload(monkeypatch):
    called = []
    for name in ("strategies", "spark", "check", "parts"):
        monkeypatch.setattr(bench_rules, name, lambda argv, name=name: called.append((name, argv)) or 0)
    assert bench_rules.main(["check", "--inputs", "cc-50"]) == 0
    assert bench_rules.main(["--points", "3"]) == 0
    assert called == [("check", ["--inputs", "cc-50"]), ("strategies", ["--points", "3"])]


def test_an_unknown_input_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        bench_rules.main(["check", "--inputs", "no-such-input"])
    assert stop.value.code == 2 and "no-such-input" in capsys.readouterr().err


@pytest.mark.skipif(not os.path.exists(os.path.join(ICLP, ICLP_INPUTS["pv-20x20"][0])),
                    reason="the ICLP2021 inputs are not available")
def test_restart_and_incremental_on_a_few_time_points(tmp_path):
    out = tmp_path / "bench_reasoning.json"
    assert bench_rules.main(["--pv", "20x20", "--hj", "", "--cc", "", "--points", "3", "--reps", "1",
                             "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["results"]
    assert row["bench"] == "PV 20x20" and row["ratio_incremental_over_restart"] > 0
    assert row["restart"]["points"] == row["incremental"]["points"] == 3
    assert row["restart"]["output_atoms"] == row["incremental"]["output_atoms"] > 0
