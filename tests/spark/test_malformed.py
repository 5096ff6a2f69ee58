"""A watched directory with 1% malformed lines: every valid tuple processed, every malformed line in the
rejected sink with file, line and reason, and the query still running."""
import os
import random
import time

from srtopo.ontology.model import TBox
from srtopo.ontology.nis import analyse
from srtopo.topology.compile import compile_ntm
from srtopo.topology.runners.local import LocalRunner
from srtopo.topology.spark import SparkConsistencyRunner, TntSource
from srtopo.topology.tnt import RDF_TYPE, format_tnt, parse_tnt_lines

EX = "http://ex.org/m#"
BAD = ["not a line at all", "12\t<http://ex.org/a> <http://ex.org/p>", "x7\t<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .",
       "5\t<http://ex.org/a> <http://ex.org/p> <http://ex.org/b>", '9\t<http://ex.org/a> <' + RDF_TYPE + '> "lit" .',
       "3\t<bad iri> <http://ex.org/p> <http://ex.org/b> ."]


def _files(tmp, rng):
    classes = [f"{EX}C{i}" for i in range(6)]
    files = []
    for f in range(2):
        lines = ["# a comment", ""]
        for i in range(1500):
            t = f * 100 + i // 15
            if rng.random() < 0.01:
                lines.append(rng.choice(BAD))
            elif rng.random() < 0.2:
                lines.append(format_tnt(t, f"{EX}s{rng.randrange(40)}", f"{EX}knows", f"{EX}s{rng.randrange(40)}"))
            else:
                lines.append(format_tnt(t, f"{EX}s{rng.randrange(40)}", RDF_TYPE, rng.choice(classes)))
        files.append((f"part-{f}.tnt", "\n".join(lines) + "\n"))
    return classes, files


def test_malformed_lines_are_rejected_and_query_keeps_running(spark, tmp_path):
    rng = random.Random(3)
    classes, files = _files(tmp_path, rng)
    tbox = TBox.build([(classes[1], classes[0]), (classes[2], classes[0]), ("exists:" + EX + "knows", classes[3])],
                      [(classes[0], classes[4]), (classes[1], classes[2]), (classes[3], classes[5])])
    topo = compile_ntm(analyse(tbox))
    watched = tmp_path / "in"
    watched.mkdir()
    runner = SparkConsistencyRunner(topo, 5, lateness=1000, spark=spark)
    runner.start([TntSource(str(watched))], out=str(tmp_path / "out"), checkpoint=str(tmp_path / "ck"),
                 rejected_out=str(tmp_path / "rejected"), trigger=0.5)
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
        assert sum(m["tuples"] for m in runner.batch_metrics) == len(expected_tuples)
        assert sum(m["malformed"] for m in runner.batch_metrics) == len(expected_rejected) > 0
        got = {(os.path.basename(r["source"]), r["line"], r["reason"]) for r in runner.rejected().collect()}
        want = {(os.path.basename(r.source), r.line, r.reason) for r in expected_rejected}
        assert got == want
    finally:
        runner.stop()
    runner.finish()
    local = {r.key for r in LocalRunner(topo, 5).run(expected_tuples)}
    spark_keys = {(r["subject"], r["time"]) for r in runner.reports().collect()}
    assert spark_keys == local and local
