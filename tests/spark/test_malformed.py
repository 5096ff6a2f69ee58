"""A watched directory with 1% malformed lines: every valid tuple processed, every malformed line in the
rejected sink with file, line and reason, and the query still running (a query that keeps watching,
started through the Spark runner's ``start``)."""
import os
import random
import time

from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.io.sinks import MemorySink
from srtopo.io.sources import TntFiles
from srtopo.io.tnt import parse_tnt_lines
from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner
from srtopo.testing import run_topology, tuples
from tests.randomgen import MALFORMED_TBOX, malformed_stream


def _files(rng):
    return [(f"part-{f}.tnt", "\n".join(malformed_stream(rng, 1500, bad=0.01, first_time=f * 100, subjects=40)) + "\n")
            for f in range(2)]


def test_malformed_lines_are_rejected_and_query_keeps_running(spark, tmp_path, capsys):
    files = _files(random.Random(3))
    topo = compile_ntm(analyse(MALFORMED_TBOX))
    watched = tmp_path / "in"
    watched.mkdir()
    sink = MemorySink()
    runner = SparkRunner().start(topo, [TntFiles(str(watched))], RunConfig(
        window=5, lateness=1000, checkpoint=str(tmp_path / "ck"), out=str(tmp_path / "out"),
        rejected_out=str(tmp_path / "rejected"), options=SparkOptions(once=False, trigger=0.5)), sink)
    expected_tuples, expected_rejected = [], []
    try:
        for i, (name, text) in enumerate(files):
            rejected = []
            path = watched / name
            expected_tuples += list(parse_tnt_lines(text.splitlines(), str(path), rejected))
            expected_rejected += rejected
            tmp = watched / ("." + name)
            tmp.write_text(text)
            os.utime(tmp, (1_600_000_000 + i, 1_600_000_000 + i))
            os.replace(tmp, path)
            deadline = time.time() + 120
            while sum(m["tuples"] + m["malformed"] for m in runner.batch_metrics) < \
                    len(expected_tuples) + len(expected_rejected):
                assert time.time() < deadline, "the stream was not processed"
                assert runner.query.isActive, runner.query.exception()
                time.sleep(0.3)
        assert runner.query.isActive, "bad input must never stop the query"
        assert "keeps watching its input" in capsys.readouterr().err     # said once, when the query started
        assert sum(m["tuples"] for m in runner.batch_metrics) == len(expected_tuples)
        assert sum(m["malformed"] for m in runner.batch_metrics) == len(expected_rejected) > 0
        # the rejected directory names each file as the local runner does: as the user spelled it
        got = {(r["source"], r["line"], r["reason"]) for r in runner.rejected().collect()}
        want = {(r.source, r.line, r.reason) for r in expected_rejected}
        assert got == want
        # a running query hands every batch's rejected records to the sink as well (on a thread of its own)
        runner.flush()
        assert {(r.source, r.line, r.reason) for r in sink.rejected} == want
    finally:
        runner.stop()
    runner.finish()
    local = run_topology(LocalRunner(), topo, [tuples(expected_tuples)], window=5).keys
    spark_keys = {(r["subject"], r["time"]) for r in runner.reports().collect()}
    assert spark_keys == local and local
