"""The long-history benchmark's stream on a small scale: a moving window of live nodes, and over it the
incremental evaluator, its Control rebuilt every few steps, gives the minpath atoms a Dijkstra oracle computes at
every timestamp, and the report's summaries read the right timestamps."""
from __future__ import annotations

from experiments import bench_streamlog_history as history
from experiments.bench_streamlog import program_text, run_incremental
from srtopo.streamlog.evaluate import Evaluator
from tests.experiments.test_bench_streamlog import oracle


def test_the_window_moves_and_no_pair_repeats():
    stream = history.window_stream(window=10, slide=2, timestamps=40, arcs_per_ts=3, max_weight=5, seed=1)
    pairs = [(x, y) for arcs in stream for x, y, _d in arcs]
    assert len(pairs) == len(set(pairs)) == 120
    for t, arcs in enumerate(stream):
        assert all(2 * t <= x < 2 * t + 10 and 2 * t <= y < 2 * t + 10 and x != y for x, y, _d in arcs)


def test_over_a_long_stream_with_rebuilds_the_evaluator_gives_the_oracle(monkeypatch):
    monkeypatch.setattr(Evaluator, "STEPS", 7)
    stream = history.window_stream(window=12, slide=1, timestamps=160, arcs_per_ts=2, max_weight=4, seed=2)
    result = run_incremental(program_text("pruned", 10), stream, bar=False)
    expected = oracle(stream, 10)
    assert result["atoms"] == expected
    assert sum(len(a) for a in expected.values()) > 300


def test_summaries_take_the_step_times_near_each_timestamp():
    points = [(t, 2.0 if t < 50 else 3.0) for t in range(1, 101)]
    summary = history.summarise(points, (20, 80), 5)
    assert summary["20"]["p50_ms"] == 2.0 and summary["80"]["p50_ms"] == 3.0 and summary["20"]["n"] == 11
    assert summary["ratio_p50"] == 1.5
    assert history.spark_points([{"seconds": 0.5}, {"seconds": 1.0}], 10) == [(5.5, 50.0), (15.5, 100.0)]


def test_a_baseline_that_ended_before_a_timestamp_gives_no_ratio_there():
    """A short run (the README's check) whose baseline completed fewer timestamps than the summary's 200: no ratio
    near 200, the one near its last timestamps all the same, and the report prints both."""
    local_ms, base_ms = [1.0] * 50, [3.0] * 40
    assert history.resolve_ratio(local_ms, base_ms, 200, 10)["ratio"] is None
    assert history.resolve_ratio(local_ms, base_ms, 30, 10) == {"timestamps": [20, 40], "incremental_ms": 1.0,
                                                               "baseline_ms": 3.0, "ratio": 3.0}
    report = {"near": (5, 20), "baseline": {"at_200": history.resolve_ratio(local_ms, base_ms, 200, 10),
                                            "at_last": history.resolve_ratio(local_ms, base_ms, 30, 10),
                                            "timestamps_completed": 40, "budget_s": 1.0}}
    text = history.format_report(report)
    assert "near timestamps 20-40: 3.0 / 1.00 ms = 3.0x" in text and "none completed near 200" in text
