"""A running query hands each batch's records to the Python sink on a thread of its own: a sink that is slow
(here: blocked) does not hold the next micro-batch back, every written report still reaches it once and in batch
order, and what the sink raises stops the query and is raised to the caller."""
import os
import random
import threading
import time

import pytest

from srtopo.ontology.nis import analyse
from srtopo.topology.compile import compile_ntm
from srtopo.topology.runners import RunConfig, SparkOptions, SparkRunner
from srtopo.topology.sources import TntFiles
from tests.randomgen import MALFORMED_TBOX, malformed_stream


class BlockedSink:
    """Blocks in its first ``emit`` until released."""

    def __init__(self):
        self.outputs, self.rejected = [], []
        self.entered, self.release = threading.Event(), threading.Event()

    def emit(self, report) -> None:
        self.entered.set()
        self.release.wait(180)
        self.outputs.append(report)

    def reject(self, record) -> None:
        self.rejected.append(record)


class RefusingSink:
    def emit(self, report) -> None:
        raise ValueError("the sink refused a report")

    def reject(self, record) -> None:
        pass


def _put(folder, i: int) -> None:
    lines = [x for x in malformed_stream(random.Random(i), 1500, bad=0.0, first_time=i * 100, subjects=40)
             if x.strip() and not x.startswith("#")]
    tmp = folder / f".part-{i}.tnt"
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, folder / f"part-{i}.tnt")


def _wait(predicate, what: str, runner, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while not predicate():
        assert time.time() < deadline, f"{what}: {[(m['batch'], m['tuples']) for m in runner.batch_metrics]}"
        assert runner.query.isActive, runner.query.exception()
        time.sleep(0.2)


def _start(tmp_path, sink):
    watched = tmp_path / "in"
    watched.mkdir()
    topo = compile_ntm(analyse(MALFORMED_TBOX))
    runner = SparkRunner().start(topo, [TntFiles(str(watched), files_per_batch=1)], RunConfig(
        window=5, lateness=0, checkpoint=str(tmp_path / "ck"), out=str(tmp_path / "out"),
        options=SparkOptions(once=False, trigger=0.5)), sink)
    return watched, runner


def test_a_blocked_sink_does_not_hold_back_the_next_batch(spark, tmp_path):
    sink = BlockedSink()
    watched, runner = _start(tmp_path, sink)
    try:
        _put(watched, 0)
        _wait(sink.entered.is_set, "the first batch's reports never reached the sink", runner)
        _put(watched, 1)
        # with the hand-over inside the batch, this batch could not start while the sink is blocked
        _wait(lambda: sum(1 for m in runner.batch_metrics if m["tuples"]) == 2,
              "the second file was not processed while the sink was blocked", runner)
        assert len(sink.outputs) == 0
        sink.release.set()
    finally:
        sink.release.set()
        runner.stop()
    runner.finish()
    runner.flush()
    written = {(r["subject"], r["time"]): r["batch"] for r in runner.reports().collect()}
    got = [(r.subject, r.time) for r in sink.outputs]
    assert len(got) == len(set(got)) == len(written) > 0
    assert set(got) == set(written)
    order = {label: i for i, label in enumerate(sorted({b for b in written.values()},
                                                       key=lambda b: (b == "final", b)))}
    batches = [order[written[key]] for key in got]
    assert batches == sorted(batches), "reports reached the sink out of batch order"
    assert len(set(batches)) >= 2


def test_an_error_of_the_sink_stops_the_query_and_is_raised(spark, tmp_path):
    watched, runner = _start(tmp_path, RefusingSink())
    try:
        _put(watched, 0)
        with pytest.raises(ValueError, match="the sink refused a report"):
            runner.await_termination(120)
        assert not runner.query.isActive
    finally:
        runner.stop()
    with pytest.raises(ValueError, match="the sink refused a report"):
        runner.flush()
