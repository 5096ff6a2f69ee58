"""Micro-batches that close their windows on the driver (runners.spark.sweep) and in the Spark write, one after
the other in one run: the state the driver holds, the state it writes and the state the Spark write writes hand
over to each other, and the reports are the local runner's and those of a run that closes every batch in a
Spark write."""
import random

from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.runners import LocalRunner, SparkOptions, SparkRunner
from srtopo.testing import lines, run_topology
from tests.randomgen import MALFORMED_TBOX, malformed_stream

BATCHES = 5


def _stream():
    """Five micro-batches of role and type assertions; the third and the fifth hold a malformed line (a batch
    with rejected records closes in the Spark write)."""
    text = [x for x in malformed_stream(random.Random(8), 1000, bad=0.0, subjects=8) if x and not x.startswith("#")]
    per = len(text) // BATCHES
    for b in (2, 4):
        text.insert(b * per + per // 2, "this is not a statement")
    return text


def _reports(result):
    return sorted((r.subject, r.time, r.ni, r.evidence, r.stage) for r in result.reports)


def test_driver_and_spark_closes_hand_the_state_over(spark):
    topology = compile_ntm(analyse(MALFORMED_TBOX))
    text = _stream()
    runs = {}
    for name, driver_tuples in (("mixed", 10 ** 6), ("spark", 0)):
        runs[name] = run_topology(SparkRunner(), topology, [lines(text, batches=BATCHES)], window=4, lateness=2,
                                  options=SparkOptions(driver_tuples=driver_tuples))
    local = run_topology(LocalRunner(), topology, [lines(text, batches=BATCHES)], window=4, lateness=2)
    closed_on = [b.detail.get("closed_on") for b in runs["mixed"].batches if b.detail.get("tuples")]
    assert closed_on == ["driver", "driver", "spark", "driver", "spark"]
    assert {b.detail.get("closed_on") for b in runs["spark"].batches if b.detail.get("tuples")} == {"spark"}
    assert _reports(runs["mixed"]) == _reports(runs["spark"])
    assert _reports(runs["mixed"]) == _reports(local)       # the same lines, NI, evidence and stage included
    assert len(runs["mixed"].reports) > 50
    assert runs["mixed"].counters.malformed == runs["spark"].counters.malformed == 2
    mixed, write = runs["mixed"].counters.stages, runs["spark"].counters.stages
    assert [(s.outputs, s.window_rows) for s in mixed] == [(s.outputs, s.window_rows) for s in write]
