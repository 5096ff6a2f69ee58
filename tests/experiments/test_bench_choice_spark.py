"""The choice-part benchmark on Spark on its quick slice: every run of every strategy, local and Spark, answers
every time point once and validly, and the results carry what the table reports; the validator it relies on
rejects what it must (a wrong answer, a time point answered twice or not at all, a false "no answer")."""
from __future__ import annotations

import csv
import json

from experiments.reconfig import queens
from experiments.reconfig.validate import validate

N = 8


def _answers(lines):
    """Answers by a fresh clingo for each line (a model, or none)."""
    import clingo
    from experiments.reconfig.validate import line_atoms
    out = []
    for t, line in enumerate(lines):
        ctl = clingo.Control(["--warn=none"])
        ctl.add("base", [], queens.program(N) + "".join(f"{a}.\n" for a in line_atoms(line)))
        ctl.ground([("base", [])])
        found = []
        ctl.solve(on_model=lambda m: found.append(sorted(str(s) for s in m.symbols(shown=True))) or False)
        out.append({"time": t, "atoms": found[0]} if found else {"time": t, "atoms": [], "unsatisfiable": True})
    return out


def test_the_validator_accepts_right_answers_and_names_each_wrong_one():
    lines = queens.log_lines(queens.qc_stream(N, steps=4, seed=3))
    lines[2] = "2 given(1,1); given(2,2)"
    right = _answers(lines)
    assert right[2].get("unsatisfiable") and validate("qc", N, lines, right) == []
    wrong = [dict(a) for a in right]
    wrong[0]["atoms"] = wrong[0]["atoms"][1:]                               # a queen missing
    wrong[1] = {"time": 1, "atoms": [], "unsatisfiable": True}              # a false "no answer"
    problems = validate("qc", N, lines, wrong + [right[3]])                 # time point 3 twice
    assert any(p.startswith("time point 0:") for p in problems)
    assert "time point 1: no answer, but a fresh clingo finds one" in problems
    assert "time point 3 answered 2 times" in problems
    assert validate("qc", N, lines, right[:3]) == ["time point 3 has no answer"]


def test_quick_slice_answers_validly_on_the_local_runner(tmp_path):
    """The benchmark's own bookkeeping on its quick slice, local runs only: the Spark half starts a JVM per
    problem (about 40 s here); tests/spark/test_choice_spark.py runs the same strategies on Spark."""
    from experiments import bench_choice
    out = tmp_path / "bench.json"
    assert bench_choice.main(["spark", "--quick", "--runners", "local", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["failures"] == []
    rows = data["rows"]
    assert {(r["problem"], r["strategy"], r["runner"]) for r in rows} == {
        (p, s, "local") for p in ("qc", "pup") for s in ("incremental", "rl")}
    for r in rows:
        assert r["points"] == 8 and r["invalid"] == 0 and r["problems"] == []
        assert len(r["load_after"]) == 3
        assert len(r["latency_ms"]) == 8 and r["latency_p50_ms"] <= r["latency_p95_ms"]
    with open(out.with_suffix(".csv")) as handle:
        assert len(list(csv.DictReader(handle))) == len(rows)
    assert out.with_suffix(".png").stat().st_size > 0
