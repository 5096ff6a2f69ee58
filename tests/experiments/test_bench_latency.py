"""A fast slice of the latency experiment (``bench_consistency latency``): a tiny paced feed through a running
Spark query. A report can never be written before the batch holding its tuples arrived, and every time the
stream's watermark passed is reported exactly as the local runner reports it."""
import time

from experiments import bench_consistency as bench
from experiments.bench_consistency import DEFAULT_TBOX, load, make_stream
from srtopo.consistency.compile import compile_ntm
from srtopo.io.sources import TntFiles
from srtopo.runners import LocalRunner
from srtopo.testing import run_topology


def test_paced_feed_latencies_and_reports(spark, tmp_path):
    _, analysis = load(DEFAULT_TBOX)
    topology = compile_ntm(analysis)
    rate, batch, window = 200, 2000, 5
    tuples = make_stream(analysis, batch * 4, rate, 0.1, 300, 1)
    files = bench._files(tmp_path / "files", tuples, batch, 4, 1000)
    assert [len(group) for group in files] == [2, 2, 2, 2]
    sus = bench.sustainable(topology, files, tmp_path / "sus", None, window, batch)
    assert sus["steady_tuples_per_s"] > 0
    got = bench.paced(topology, files, tmp_path / "paced", None, window, 1.0, rate, batch)
    assert 0 <= got["latency_min_s"] <= got["latency_p50_s"] <= got["latency_p95_s"] <= got["latency_max_s"]
    assert got["backlog_max_batches"] >= 0 and got["fed_batches"] == 4 and got["batches"] >= 4
    # the running query closed every time before the last batch's largest time (lateness 0), as the local runner
    local = run_topology(LocalRunner(), topology, [TntFiles(str(tmp_path / "files"))], window=window)
    last = max(t for _s, _c, t in tuples)
    assert got["reports"] == sum(1 for r in local.outputs if r.time < last) > 0


def test_a_batch_is_timed_from_before_its_files_are_shown(spark, tmp_path, monkeypatch):
    """A batch's arrival is timed before its files are shown to the query: the query may read them and write its
    reports before the feeding thread runs again (a machine with other work on it). Here showing the files
    returns only once the query committed their batch, and every latency is still at least 0."""
    _, analysis = load(DEFAULT_TBOX)
    rate, batch, window = 200, 2000, 5
    files = bench._files(tmp_path / "files", make_stream(analysis, batch * 2, rate, 0.1, 300, 1), batch, 2, 1000)
    publish, shown = bench._publish, []

    def publish_then_wait_for_the_batch(work, inbox, paths):
        publish(work, inbox, paths)
        if paths:
            shown.append(paths)
            commits = work / "ck" / "query" / "commits"
            deadline = time.monotonic() + 120
            while not (commits / str(len(shown) - 1)).exists():
                assert time.monotonic() < deadline, "the query did not commit the batch"
                time.sleep(0.05)
    monkeypatch.setattr(bench, "_publish", publish_then_wait_for_the_batch)
    got = bench.paced(compile_ntm(analysis), files, tmp_path / "paced", None, window, 0.1, rate, batch)
    assert len(shown) == 2 and got["reports"] > 0
    assert got["latency_min_s"] >= 0, got


def test_every_run_is_fed_the_tuples_it_waits_for(tmp_path, monkeypatch):
    """With batches smaller than the JVM warm-up's, the stream is shorter than the warm-up's ~1M tuples: the warm-up
    run (like every other) must be given whole batches of the stream, or it waits for tuples that never come."""
    fed = []

    def sustainable(topology, files, work, master, window, batch):
        lines = sum(1 for group in files for path in group for _ in open(path, encoding="utf-8"))
        fed.append((lines, batch * len(files)))
        return {"steady_tuples_per_s": 1000, "sustained_batch_p50_s": 0.1}

    def paced(topology, files, work, master, window, period, rate, batch):
        lines = sum(1 for group in files for path in group for _ in open(path, encoding="utf-8"))
        fed.append((lines, batch * len(files)))
        return {"period_s": period, "latency_p50_s": 1.0, "latency_p95_s": 1.0, "latency_max_s": 1.0,
                "batch_p50_s": 0.5, "backlog_max_batches": 0}
    monkeypatch.setattr(bench, "sustainable", sustainable)
    monkeypatch.setattr(bench, "paced", paced)
    assert bench.latency(["--batch-tuples", "2000", "--fractions", "0.5", "--rate", "200", "--file-tuples", "1000",
                       "--out", str(tmp_path / "latency.json")]) == 0
    assert len(fed) == 3 and all(lines == wanted for lines, wanted in fed), fed
