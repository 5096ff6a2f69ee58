"""A fast slice of the latency experiment (``bench_consistency_latency``): a tiny paced feed through a running
Spark query. A report can never be written before the batch holding its tuples arrived, and every time the
stream's watermark passed is reported exactly as the local runner reports it."""
import argparse

from experiments import bench_consistency_latency as bench
from experiments.bench_consistency import DEFAULT_TBOX, load, make_stream
from srtopo.consistency.compile import compile_ntm
from srtopo.io.sources import TntFiles
from srtopo.runners import LocalRunner
from srtopo.testing import run_topology


def test_paced_feed_latencies_and_reports(spark, tmp_path):
    _, analysis = load(argparse.Namespace(random_tbox=False, tbox=DEFAULT_TBOX, seed=1))
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
