"""Golden fixtures of what the compilers produce: consistency topologies (T_ex plans, one NPD plan), the Spark SQL
of both physical plans, and rules topologies (the I-DLV-sr paper's examples, one ICLP 2021 program).

Regenerate after a deliberate change with ``pytest tests/golden --update-golden`` and review the diff."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from srtopo.consistency.choose import choose_topology
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.owl import load_tbox
from srtopo.ir.topology import Topology
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_file, parse_program
from srtopo.runners.spark.sql import NEG, SqlBuilder, bounds_for, build_tables, id_tables

ROOT = Path(__file__).resolve().parents[2]
TEX = str(ROOT / "examples" / "tex.ttl")
DATA = ROOT.parent / "shared" / "data"


def pretty(data) -> str:
    """JSON with one line per list of scalars (an op, a pair, a row): diffs show what changed, op by op."""
    def fmt(value, indent: int) -> str:
        pad = " " * indent
        if isinstance(value, dict):
            if not value:
                return "{}"
            items = [f'{pad}  {json.dumps(k)}: {fmt(v, indent + 2)}' for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(value, list):
            if all(not isinstance(v, (dict, list)) for v in value):
                return json.dumps(value, ensure_ascii=False)
            return "[\n" + ",\n".join(f"{pad}  {fmt(v, indent + 2)}" for v in value) + "\n" + pad + "]"
        return json.dumps(value, ensure_ascii=False)
    return fmt(data, 0) + "\n"


def check_round_trip(topology: Topology) -> dict:
    data = topology.to_dict()
    assert Topology.from_dict(json.loads(json.dumps(data))).to_dict() == data
    return data


@pytest.mark.parametrize("label,make", [
    ("ntm", lambda tex: compile_ntm(tex)), ("ltm-1,2", lambda tex: compile_ltm(tex, [1, 2])),
    ("ltm-2,1", lambda tex: compile_ltm(tex, [2, 1])), ("ltm-1,1,1", lambda tex: compile_ltm(tex, [1, 1, 1])),
    ("default", lambda tex: choose_topology(tex, tasks=2)),
    ("default-ltm", lambda tex: choose_topology(tex, method="ltm", tasks=2))])
def test_tex_topologies(golden, label, make):
    golden(f"tex-{label}.json", pretty(check_round_trip(make(load_tbox(TEX)))))


@pytest.mark.parametrize("fixture,method", [("npd-default.json", "auto"), ("npd-ltm-default.json", "ltm")])
def test_npd_default_topology(golden, fixture, method):
    """NPD's default topology (the cost balancer for the local runner) and its default LTM split; the 32,342
    conjunction ops are summarised per stage by count and digest, the rest is in full."""
    path = DATA / "npd" / "npd-v2-ql.owl"
    if not path.exists():
        pytest.skip("shared data not available")
    data = check_round_trip(choose_topology(load_tbox(str(path)), method=method))
    for stage in data["stages"]:
        ops = stage.pop("conjunction_ops")
        stage["conjunction_ops_count"] = len(ops)
        stage["conjunction_ops_sha1"] = hashlib.sha1(json.dumps(ops).encode()).hexdigest()
        stage["conjunction_ops_first"] = ops[:5]
    golden(fixture, pretty(data))


def format_sql(sql: str) -> str:
    return re.sub(r" (FROM|LEFT JOIN|JOIN|CROSS JOIN|WHERE|GROUP BY|UNION ALL|LATERAL VIEW) ", r"\n  \1 ", sql)


@pytest.mark.parametrize("physical_plan,window", [("fused", 10), ("staged", 10), ("fused", None)])
def test_spark_sql(golden, physical_plan, window):
    topology = compile_ltm(load_tbox(TEX), [1, 2], parallelism=[2, 3])
    tables = build_tables(topology)
    names = {k: f"v_{k}" for k in ("amap", "cmap", "srcmap", "emit", "cached", "pairs", "prev", "prevc", "new", "newc",
                                   "in", "bnd", "ent", "lif", "r", "kept", "rows", "routed", "routed_all", "win")}
    sql = SqlBuilder(names, tables, topology, window, physical_plan, partitions=4, lateness=0)
    bounds = bounds_for({}, NEG, 1, 0, window)
    unbounded = SqlBuilder(names, tables, topology, window, physical_plan, partitions=4, lateness=None)
    statements = {
        "batch cache, unbounded lateness": unbounded.batch_cache_sql("v_in"),
        "batch counters, unbounded lateness": unbounded.batch_stats_sql("v_newc"),
        "batch cache": sql.batch_cache_sql("v_in"), "batch counters": sql.batch_stats_sql("v_newc"),
        "batch, nothing late": sql.late_sql(None), "batch, late tuples in files in time order": sql.late_sql("v_ent"),
        "late tuples in files out of order": sql.late_in_files_sql("v_ent"),
        "batch, late tuples": sql.late_sql("v_ent", "v_lif"),
        "window": sql.window_sql(bounds), "reports": sql.reports_sql(bounds), "kept state": sql.kept_sql(bounds),
        "routed / staged rows": sql.routed_sql(bounds) if physical_plan == "fused" else sql.staged_rows_sql(bounds),
        "write": sql.write_sql("v_routed" if physical_plan == "fused" else None,
                               None if physical_plan == "fused" else "v_rows", "v_r", "v_kept", bounds)}
    text = [f"-- lookup tables (rows): {json.dumps({k: rows for k, (rows, _) in id_tables(tables).items()})}"]
    text += [f"-- {name}\n{format_sql(s)}" for name, s in statements.items()]
    golden(f"spark-{physical_plan}-w{window}.sql", "\n\n".join(text) + "\n")


PAPER = {
    "example1": "c(X) :- b(X) at least 2 in {0,1,3}.",
    "example3": "c(X) :- b(X).\nd(X) :- c(X) in [1].",
    "example4": "#temp c(X) :- b(X).\nd(X) :- c(X) in [1].",
    "example5": "a(X) :- b(X) always in [2].\nb(Y) :- a(X) in [1], Y=X+1, c(Y).\nd(X) :- b(X) at least 2 in [4].\n"
                "e(X,Y) :- a(X), b(Y).\n",
}


@pytest.mark.parametrize("name", sorted(PAPER))
@pytest.mark.parametrize("strategy", ["restart", "incremental"])
def test_rules_topologies_of_the_papers_examples(golden, name, strategy):
    topology = compile_program(parse_program(PAPER[name], name), strategy=strategy)
    golden(f"rules-{name}-{strategy}.json", pretty(check_round_trip(topology)))


def test_rules_topology_of_content_caching(golden):
    path = DATA / "idlvsr" / "ICLP2021-Experiments" / "ContentCaching" / "events_variation_test" / "I-DLV-sr" / \
        "500" / "Program" / "cat_w05.idlvsr"
    if not path.exists():
        pytest.skip("shared data not available")
    topology = compile_program(parse_file(path), strategy="restart", name="content-caching-w5")
    data = check_round_trip(topology)
    data["notes"]["program"] = "ContentCaching/.../cat_w05.idlvsr"    # no machine-specific path in the fixture
    golden("rules-content-caching-w5.json", pretty(data))


CHAIN_PROGRAM = "examples/tex-people.idlvsr"


def test_chain_of_tex_and_a_program(golden, monkeypatch, capsys):
    """The chain of T_ex's default topology and a program (``srtopo compile --tbox --program``), in JSON, text and
    dot: its consistency stages, saturation stage (T_ex's class entailments) and rule stages."""
    from srtopo.cli import main
    monkeypatch.chdir(ROOT)
    outputs = {}
    for fmt in ("json", "text", "dot"):
        assert main(["compile", "--tbox", "examples/tex.ttl", "--program", CHAIN_PROGRAM, "--format", fmt]) == 0
        outputs[fmt] = capsys.readouterr().out
    data = json.loads(outputs["json"])
    for key in ("loader_report", "unsatisfiable"):
        data.pop(key)
    assert Topology.from_dict(data).to_dict() == data
    golden("chain-tex-people.json", pretty(data))
    golden("chain-tex-people.txt", outputs["text"])
    golden("chain-tex-people.dot", outputs["dot"])


def test_chain_saturation_of_univ_bench(golden):
    """univ-bench (swat-lehigh) as loaded into DL-Lite: its saturation stage's tables of class and property
    entailments (inverses, sub-properties, domains and ranges)."""
    from srtopo.chain import saturation_stage
    path = DATA / "lubm" / "swat-lehigh" / "univ-bench.owl"
    if not path.exists():
        pytest.skip("shared data not available")
    stage = saturation_stage(load_tbox(str(path)))
    golden("chain-univ-bench-saturation.json",
           pretty(json.loads(json.dumps({"types": stage.types, "properties": stage.properties}))))
