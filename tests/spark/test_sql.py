"""The Spark SQL's packed choice key (one BIGINT min() per (subject, time)) chooses exactly the reports of the
struct min() it replaces, and so does the closing of a small batch on the driver (the general Spark == local ==
oracle cases are in tests/runners)."""
import random

from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.runners import SparkOptions, SparkRunner
from srtopo.testing import run_topology, tuples
from tests.oracle import oracle_reports
from tests.randomgen import bounded_disorder, merge, prefixed, random_stream, random_tbox

LATENESS = 4


def test_packed_choice_key_equals_the_struct_fallback(spark, monkeypatch):
    """The report's NI and evidence come from min() over a packed BIGINT (bounded window); the struct min()
    fallback must choose exactly the same ones (same (subject, time, ni, evidence, stage) rows)."""
    from srtopo.runners.spark import sql as sql_module
    rng = random.Random(20240)
    cases, stream = [], []
    for i in range(6):
        tbox = random_tbox(rng)
        part = random_stream(rng, tbox, n=rng.randint(40, 120), n_subjects=rng.randint(1, 5), horizon=60)
        cases.append((f"c{i}|", tbox, part))
        stream += [(f"c{i}|" + s, f"c{i}|" + c, t) for s, c, t in part]
    stream = bounded_disorder(stream, LATENESS, random.Random(7))
    topology = merge([prefixed(compile_ntm(analyse(tbox)), p) for p, tbox, _ in cases])
    got = {}
    views = _temp_views(spark)
    # the packed key on the driver (consistency.sweep) against the struct fallback (a batch whose key does not pack
    # closes in the Spark write); tests/spark/test_driver_close.py compares the driver's close with the packed
    # key's Spark write
    for name, driver_tuples in (("driver", 10 ** 6), ("fallback", 10 ** 6)):
        if name == "fallback":
            monkeypatch.setattr(sql_module.SqlBuilder, "_packing", lambda self: None)
        result = run_topology(SparkRunner(), topology, [tuples(stream, batches=3)], window=3, lateness=LATENESS,
                              options=SparkOptions(physical_plan="fused", driver_tuples=driver_tuples))
        got[name] = sorted((r.subject, r.time, r.ni, r.evidence, r.stage) for r in result.reports)
        closed_on = {b.detail.get("closed_on") for b in result.batches if b.detail.get("tuples")}
        assert closed_on == ({"driver"} if name == "driver" else {"spark"})
        assert _temp_views(spark) == views, "a run leaves none of its temporary views in the session"
    expected = set()
    for p, tbox, part in cases:
        expected |= {(p + s, t) for s, t in oracle_reports(tbox.pis, [n.pair for n in tbox.nis], part, 3)}
    assert got["driver"] and got["driver"] == got["fallback"]
    assert {(s, t) for s, t, *_ in got["driver"]} == expected


def _temp_views(spark) -> set:
    return {row["viewName"] for row in spark.sql("SHOW VIEWS").collect() if row["isTemporary"]}


def test_what_is_closed_stays_closed():
    """A batch whose watermark is below the closed bound (a run going on with a larger lateness than the one
    before it) closes nothing, and keeps the bound where it was."""
    from srtopo.ir.lateness import SourceClock
    from srtopo.runners.spark.sql import bounds_for
    clocks = {0: SourceClock(40)}
    assert bounds_for(clocks, 35, 1, None, 5, cur_clocks={0: SourceClock(50)}).hi == 35
    assert bounds_for(clocks, 35, 1, 0, 5, cur_clocks={0: SourceClock(50)}).hi == 50
    b = bounds_for(clocks, 35, 1, 20, 5, cur_clocks={0: SourceClock(50)})
    assert (b.lo, b.hi, b.keep) == (35, 35, 30)
