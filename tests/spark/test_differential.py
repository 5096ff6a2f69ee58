"""Spark == local runner == brute-force oracle on random TBoxes and out-of-order streams.

Several random cases are merged into one topology (concepts and subjects prefixed apart), so one Spark
query checks them all; each query runs several micro-batches (one file each) with out-of-order input
inside the allowed lateness.
"""
import os
import random

import pytest

from srtopo.ontology.nis import analyse
from tests.oracle import oracle_reports
from tests.randomgen import random_stream, random_tbox
from tests.spark.helpers import bounded_disorder, merge, prefixed
from srtopo.topology.compile import compile_ltm, compile_ntm
from srtopo.topology.runners.local import LocalRunner
from srtopo.topology.spark import SparkConsistencyRunner, TupleSource, write_tuples

CASES = 6
LATENESS = 4


def _cases(window):
    rng = random.Random(20240)
    cases = []
    for i in range(CASES):
        tbox = random_tbox(rng)
        tuples = random_stream(rng, tbox, n=rng.randint(40, 120), n_subjects=rng.randint(1, 5), horizon=60)
        cases.append((f"c{i}|", tbox, tuples))
    return cases


@pytest.fixture(scope="module", params=[3, None], ids=["w3", "unbounded"])
def setup(tmp_path_factory, request):
    """bounded window: one exchange + RANGE frame; unbounded: the self-join."""
    return _setup(tmp_path_factory, request.param)


@pytest.fixture(scope="module")
def setup_w3(tmp_path_factory):
    return _setup(tmp_path_factory, 3)


def _setup(tmp_path_factory, window):
    cases = _cases(window)
    rng = random.Random(7)
    merged_tuples = []
    expected = {}
    for p, tbox, tuples in cases:
        expected[p] = oracle_reports(tbox.pis, [n.pair for n in tbox.nis], tuples, window)
        merged_tuples += [(p + s, p + c, t) for s, c, t in tuples]
    stream = bounded_disorder(merged_tuples, LATENESS, rng)
    d = tmp_path_factory.mktemp("diff")
    os.makedirs(d / "in")
    chunk = (len(stream) + 2) // 3
    for i in range(3):
        write_tuples(str(d / "in" / f"part-{i}.tsv"), stream[i * chunk:(i + 1) * chunk], mtime=1_600_000_000 + i)
    return cases, expected, stream, d, window


@pytest.mark.parametrize("plan", ["fused", "staged"])
@pytest.mark.parametrize("method", ["ntm", "ltm"])
def test_spark_equals_local_equals_oracle(spark, setup, plan, method):
    cases, expected, stream, d, window = setup
    topos = []
    for p, tbox, tuples in cases:
        a = analyse(tbox)
        topo = compile_ntm(a) if method == "ntm" else compile_ltm(a, [1] * len(a.groups) or [0])
        local = LocalRunner(topo, window, allowed_lateness=LATENESS)
        ordered = [(s[len(p):], c[len(p):], t) for s, c, t in stream if s.startswith(p)]
        got_local = {r.key for r in local.run(ordered)}
        assert local.counters.late == 0
        assert got_local == expected[p], f"local runner vs oracle, case {p}"
        topos.append(prefixed(topo, p))
    runner = SparkConsistencyRunner(merge(topos), window, lateness=LATENESS, plan=plan, spark=spark)
    reports = runner.run_once([TupleSource(str(d / "in"), max_files_per_trigger=1)],
                              out=str(d / f"out-{plan}-{method}"), checkpoint=str(d / f"ck-{plan}-{method}"))
    rows = reports.select("subject", "time").collect()
    keys = [(r["subject"], r["time"]) for r in rows]
    assert len(keys) == len(set(keys)), "one report per (subject, time)"
    assert len(runner.batch_metrics) == 3
    assert sum(m["late"] for m in runner.batch_metrics) == 0
    assert sum(m["tuples"] for m in runner.batch_metrics) == len(stream)
    for p, _, _ in cases:
        got = {(s[len(p):], t) for s, t in keys if s.startswith(p)}
        assert got == expected[p], f"spark {plan} {method} vs oracle, case {p}"


def test_packed_choice_key_equals_the_struct_fallback(spark, setup_w3, monkeypatch):
    """The report's NI and evidence come from min() over a packed BIGINT (bounded window); the struct min()
    fallback must choose exactly the same ones (same (subject, time, ni, evidence, stage) rows)."""
    from srtopo.topology.spark import plan as plan_module
    cases, expected, stream, d, window = setup_w3     # an unbounded window always takes the fallback
    topo = merge([prefixed(compile_ntm(analyse(tbox)), p) for p, tbox, _ in cases])
    got = {}
    for name in ("packed", "fallback"):
        if name == "fallback":
            monkeypatch.setattr(plan_module.SqlBuilder, "_packing", lambda self: None)
        runner = SparkConsistencyRunner(topo, window, lateness=LATENESS, plan="fused", spark=spark)
        reports = runner.run_once([TupleSource(str(d / "in"), max_files_per_trigger=1)],
                                  out=str(d / f"out-{name}"), checkpoint=str(d / f"ck-{name}"))
        got[name] = sorted((r["subject"], r["time"], tuple(r["ni"]), tuple((e["concept"], e["time"]) for e in r["evidence"]),
                            r["stage"]) for r in reports.collect())
    assert got["packed"] and got["packed"] == got["fallback"]
