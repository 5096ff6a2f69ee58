"""A running query hands each batch's records to the Python sink on a thread of its own: a sink that is slow
(here: blocked) does not hold the next micro-batch back, every written report still reaches it once and in batch
order, and what the sink raises stops the query and is raised to the caller."""
import os
import random
import threading
import time

import pytest

from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.io.sources import TntFiles
from srtopo.runners import RunConfig, SparkOptions, SparkRunner
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


def test_reports_read_with_arrow_equal_reports_read_line_by_line(tmp_path):
    """``reports_of_files`` (column by column) against ``report_of`` over ``json.loads`` (line by line), on lines
    as Spark's JSON writer writes them: absent null fields, non-ASCII and escaped characters, one or two evidence
    entries, an empty file, ties in time (kept in file and line order)."""
    import json

    from srtopo.runners.spark.consistency import report_of, reports_of_files
    rng = random.Random(7)
    names = ["http://ex.org/é#A", "http://ex.org/B\"q", "urn:x:C\\d", "http://ex.org/日本#D"]
    paths = []
    for f in range(3):
        lines = []
        for _ in range(0 if f == 1 else 400):
            t = rng.randrange(-5, 40) * (2 ** 33 if rng.random() < 0.05 else 1)
            evidence = [{"concept": rng.choice(names), "time": t - rng.randrange(3)} for _ in range(rng.choice((1, 2)))]
            row = {"subject": f"http://ex.org/s{rng.randrange(50)}ü", "time": t, "ni": rng.sample(names, 2),
                   "evidence": evidence}
            if rng.random() < 0.7:
                row["stage"] = rng.choice(["ntm-0", "ltm-1"])
            if rng.random() < 0.5:
                row["topology"] = "lubm"
            lines.append(json.dumps(row, ensure_ascii=rng.random() < 0.5))
        path = tmp_path / f"part-{f}.json"
        path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
        paths.append(str(path))
    expected = sorted((report_of(json.loads(x)) for p in paths for x in open(p, encoding="utf-8")),
                      key=lambda r: r.time)
    got = reports_of_files(paths)
    assert got == expected and len(got) == 800
    assert reports_of_files([paths[1]]) == []
