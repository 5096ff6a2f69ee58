"""Streamlog over a long history: continuous shortest paths over 10,000+ timestamps, the step time near timestamp
1,000 and near 10,000, on the local runner's evaluator and on Spark, with the re-solving baseline as far as its
budget gets.

The program is ``bench_streamlog``'s pruned shortest paths (``minpath`` facts are read back at every later
timestamp, so the history only grows). The stream keeps what one timestamp needs steady, so that a growing step
time can only come from the history: ``--arcs-per-ts`` new arcs per timestamp between random distinct nodes of a
window of ``--window`` live nodes that moves on by ``--slide`` node ids per timestamp (a graph that keeps
growing at its front; each node gets about arcs-per-ts x 2 x window / slide / window arcs while it is live). On a
fixed set of 1,000 nodes the same arc rate makes the graph denser every timestamp and a timestamp's own work
(new paths through the new arcs) grows with it: at 3 arcs per timestamp the p50 step time is 2 ms at timestamp
250, 20 ms at 500, 140 ms at 750 and 620 ms at 1,000, whatever the engine does with the history.

* local: ``srtopo.streamlog.Streamlog`` (the local runner's evaluator), in a child process; step time of
  timestamp t = the duration of ``punctuate(0, t+1)`` after t's lines were pushed;
* spark: the Spark runner on ``--master`` (child process) reading files of ``--ts-per-file`` timestamps each
  ending with punctuation, ``--files-per-batch`` files per micro-batch, so every micro-batch carries the same
  number of timestamps: step time = micro-batch trigger time / timestamps per batch (Spark's planning and
  listing included), summarised over the micro-batches within max(--half, 5 x timestamps per batch) of each
  timestamp;
* baseline: a fresh clingo program over every arc up to t at every t (``bench_streamlog.run_baseline``), until
  ``--baseline-budget`` seconds are spent.

The local and Spark models must be the same, and the baseline's minpath atoms the same as the local ones on the
timestamps it completed, or the run fails. Results: ``experiments/results/bench_streamlog_history.json`` and
``.png`` (step time vs timestamp, both runners and the baseline) and a table on stdout.

    .venv/bin/python -m experiments.bench_streamlog_history                  # ~15 minutes
    .venv/bin/python -m experiments.bench_streamlog_history --timestamps 2100 --baseline-budget 20   # a check
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from experiments.bench_streamlog import (
    arc_lines, compare, make_stream, program_text, run_baseline, run_incremental)
from experiments.bench_streamlog_spark import run_streamlog, write_stream
from experiments.common import (
    ExperimentError, arguments, chart, command, in_own_process, log, peak_rss_mb, timed, splits, stats, write_json)

NAME = "bench_streamlog_history"


def window_stream(window: int, slide: int, timestamps: int, arcs_per_ts: int, max_weight: int,
                  seed: int) -> list[list[tuple]]:
    """Per timestamp t (from 0), ``arcs_per_ts`` arcs between distinct random nodes of [slide*t, slide*t + window),
    no pair twice (``bench_streamlog.make_stream``)."""
    return make_stream(window, timestamps, arcs_per_ts, max_weight, seed, slide=slide)


def _stream(params: dict) -> list[list[tuple]]:
    return window_stream(params["window"], params["slide"], params["timestamps"], params["arcs_per_ts"],
                         params["max_weight"], params["seed"])


# --- the children (each in a process of its own) ------------------------------------------------------------------

def child(which: str, params: dict) -> dict:
    """The local evaluator, the Spark runner or the re-solving baseline over the stream."""
    text = program_text("pruned", params["bound"])
    if which == "local":
        return run_incremental(text, _stream(params), "local", bar=False)
    if which == "baseline":
        return run_baseline(text, _stream(params), params["baseline_budget"], bar=False)
    from srtopo.streamlog import parse_program
    from srtopo.streamlog.compile import compile_program
    work = Path(params["work"])
    topology = compile_program(parse_program(text, "shortest-paths.sl"))
    (run, batches), wall = timed(run_streamlog, topology, work / "in", params["master"], params["files_per_batch"],
                                 work / "ck")
    batches = [{"batch": b.batch, "seconds": b.seconds, "timestamps": b.detail.get("extra", {}).get("timestamps"),
                "python_s": b.detail.get("duration_s"), "snapshot": b.detail.get("extra", {}).get("state_snapshots")}
               for b in batches]
    return {"models": {m.time: sorted(m.atoms) for m in run.models}, "batches": batches, "wall_s": wall,
            "seconds": run.seconds, "memory_mb": run.memory_mb, "peak_rss_mb": peak_rss_mb()}


def _in_child(which: str, params: dict) -> dict:
    result, seconds = timed(in_own_process, child, which=which, params=params)
    log(f"{which}: {seconds:.0f} s")
    for key in ("atoms", "models"):     # JSON keys are strings
        if key in result:
            result[key] = {int(t): a for t, a in result[key].items()}
    return result


# --- summaries -------------------------------------------------------------------------------------------------

def _window(points: list[tuple[float, float]], centre: int, half: int) -> list[float]:
    return [ms for t, ms in points if centre - half <= t <= centre + half]


def summarise(points: list[tuple[float, float]], near: tuple, half: int) -> dict:
    """p50/p95 of the step times near each timestamp of ``near`` (within ``half``), and last / first p50."""
    out = {str(c): {**stats(_window(points, c, half), "{}_ms"), "n": len(_window(points, c, half))} for c in near}
    first, last = out[str(near[0])]["p50_ms"], out[str(near[-1])]["p50_ms"]
    out["ratio_p50"] = last / first if first else None
    return out


def spark_points(batches: list[dict], per_batch: int) -> list[tuple[float, float]]:
    """(middle timestamp, ms per timestamp) per micro-batch; batch k carries timestamps k*per_batch+1.. ."""
    return [(k * per_batch + (per_batch + 1) / 2, 1000 * b["seconds"] / per_batch) for k, b in enumerate(batches)]


def resolve_ratio(local_ms: list[float], base_ms: list[float], at: int, half: int) -> dict:
    """Mean baseline step time over mean incremental step time on the timestamps near ``at`` (None where the
    baseline completed none of them)."""
    lo, hi = max(1, at - half), min(at + half, len(base_ms))
    if lo > hi:
        return {"timestamps": [lo, hi], "incremental_ms": None, "baseline_ms": None, "ratio": None}
    inc = statistics.fmean(local_ms[lo - 1:hi])
    base = statistics.fmean(base_ms[lo - 1:hi])
    return {"timestamps": [lo, hi], "incremental_ms": inc, "baseline_ms": base, "ratio": base / inc if inc else None}


def plot(local_ms: list[float], spark: list[tuple[float, float]], base_ms: list[float], path: str,
         title: str) -> None:
    def rolling(values, k=101):
        half = k // 2
        return [(i + 1, statistics.median(values[max(0, i - half):i + half + 1])) for i in range(0, len(values), 10)]
    with chart(path, size=(8, 4)) as (_fig, axes):
        ax = axes[0][0]
        ax.plot(range(1, len(local_ms) + 1), local_ms, linewidth=0.3, alpha=0.35, color="C0")
        ax.plot(*zip(*rolling(local_ms)), color="C0", label="local: step time (rolling median of 101)")
        if spark:
            ax.plot(*zip(*spark), color="C1", linewidth=0.8,
                    label="Spark local[2]: micro-batch time / timestamps in it")
        if base_ms:
            ax.plot(range(1, len(base_ms) + 1), base_ms, color="C2", linewidth=0.8,
                    label="re-solve the history (clingo)")
        ax.set(yscale="log", xlabel="timestamp", ylabel="time per timestamp (ms)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=7)


# --- command line ----------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    args = arguments(
        __doc__, timestamps=10_100, window=(1000, "live nodes: arcs join nodes of a moving window"),
        slide=(3, "node ids the window moves on per timestamp"), arcs_per_ts=3, max_weight=9, bound=20,
        near=("1000,10000", "timestamps to summarise the step time near"),
        half=(100, "... within this many timestamps"), ts_per_file=25, files_per_batch=2, master="local[2]",
        baseline_budget=(120.0, "seconds of re-solving (0: none)"), no_spark=False, seed=1,
        out=".").parse_args(argv)
    near = tuple(splits(args.near, int))
    per_batch = args.ts_per_file * args.files_per_batch
    params = {"timestamps": args.timestamps, "window": args.window, "slide": args.slide,
              "arcs_per_ts": args.arcs_per_ts, "max_weight": args.max_weight, "bound": args.bound,
              "seed": args.seed, "master": args.master, "files_per_batch": args.files_per_batch,
              "ts_per_file": args.ts_per_file, "baseline_budget": args.baseline_budget}
    load_before = os.getloadavg()
    started = time.perf_counter()
    report = {"experiment": NAME, "params": params, "near": near, "half": args.half,
              "load_average_before": load_before}
    with tempfile.TemporaryDirectory(prefix="bench_streamlog_history-") as workdir:
        lines = arc_lines(_stream(params))
        files = write_stream(Path(workdir) / "in", lines, args.ts_per_file)
        params["work"] = workdir
        local = _in_child("local", params)
        local_ms = [1000 * s for s in local["latencies_s"]]
        atoms = sum(len(a) for a in local["atoms"].values())
        report["local"] = {"steps": summarise(list(enumerate(local_ms, start=1)), near, args.half),
                           "timestamps_per_s": len(local_ms) / local["wall_s"], "wall_s": local["wall_s"],
                           "mean_ms": statistics.fmean(local_ms), "peak_rss_mb": local["peak_rss_mb"],
                           "rss_end_mb": local["rss_end_mb"], "minpath_atoms": atoms, "latencies_ms": local_ms}
        spark_pts = []
        if not args.no_spark:
            spark = _in_child("spark", params)
            wanted = {t: a for t, a in local["atoms"].items() if a}
            if spark["models"] != wanted:
                differ = sorted(set(spark["models"]) ^ set(wanted))[:5] or \
                    [t for t in wanted if spark["models"].get(t) != wanted[t]][:5]
                raise ExperimentError(f"Spark's models differ from the local evaluator's (e.g. at timestamps {differ})")
            batches = spark["batches"]
            if any(b["timestamps"] != per_batch for b in batches[:-1]):
                raise ExperimentError("a micro-batch did not carry --ts-per-file x --files-per-batch timestamps")
            spark_pts = spark_points(batches, per_batch)
            total = sum(b["seconds"] for b in batches)
            half = max(args.half, 5 * per_batch)       # at least 10 micro-batches per window
            report["spark"] = {"steps": summarise(spark_pts, near, half), "half": half, "files": files,
                               "timestamps_per_batch": per_batch, "batches": len(batches),
                               "timestamps_per_s": args.timestamps / spark["seconds"],
                               "batch_timestamps_per_s": args.timestamps / total if total else None,
                               "seconds": spark["seconds"], "memory_mb": spark["memory_mb"],
                               "snapshots": sum(b["snapshot"] or 0 for b in batches),
                               "batch_seconds": [b["seconds"] for b in batches],
                               "same_models_as_local": True}
        base_ms = []
        if args.baseline_budget > 0:
            base = _in_child("baseline", params)
            common = compare({"latencies_s": local["latencies_s"], "atoms": local["atoms"]},
                             {"latencies_s": base["latencies_s"], "atoms": base["atoms"]})
            base_ms = [1000 * s for s in base["latencies_s"]]
            report["baseline"] = {"timestamps_completed": len(base_ms), "agree_on": common,
                                  "budget_s": args.baseline_budget, "peak_rss_mb": base["peak_rss_mb"],
                                  "at_200": resolve_ratio(local_ms, base_ms, 200, 10),
                                  "at_last": resolve_ratio(local_ms, base_ms, len(base_ms) - 10, 10),
                                  "latencies_ms": base_ms}
    report["load_average_after"] = os.getloadavg()
    report["seconds"] = time.perf_counter() - started
    json_path = write_json(os.path.join(args.out, NAME + ".json"), report)
    png_path = os.path.join(args.out, NAME + ".png")
    plot(local_ms, spark_pts, base_ms, png_path,
         f"shortest paths, {args.window} live nodes (window slides {args.slide}/ts), {args.arcs_per_ts} arcs/ts; "
         f"Spark: {per_batch} ts per micro-batch")
    print(format_report(report))
    print(f"total {report['seconds']:.0f} s; load average {load_before} -> {report['load_average_after']}; "
          f"written {json_path}, {png_path}")
    return 0


def format_report(report: dict) -> str:
    a, b = (str(x) for x in report["near"])
    lines = [f"{'runner':8} {'p50@' + a:>9} {'p95@' + a:>9} {'p50@' + b:>10} {'p95@' + b:>10} {'ratio':>6} "
             f"{'ts/s':>7}  memory MB"]
    for name in ("local", "spark"):
        r = report.get(name)
        if not r:
            continue
        s = r["steps"]
        memory = {"peak_rss": round(r["peak_rss_mb"])} if name == "local" else \
            {k: round(v) for k, v in r["memory_mb"].items() if v}
        lines.append(f"{name:8} {s[a]['p50_ms']:9.2f} {s[a]['p95_ms']:9.2f} {s[b]['p50_ms']:10.2f} "
                     f"{s[b]['p95_ms']:10.2f} {s['ratio_p50']:6.2f} {r['timestamps_per_s']:7.1f}  {memory}")
    lines.append("ms per timestamp; spark: micro-batch trigger time / timestamps per micro-batch")
    base = report.get("baseline")
    if base:
        for key in ("at_200", "at_last"):
            r = base[key]
            lines.append(f"re-solve / incremental: none completed near {key[3:]}" if r["ratio"] is None else
                         f"re-solve / incremental near timestamps {r['timestamps'][0]}-{r['timestamps'][1]}: "
                         f"{r['baseline_ms']:.1f} / {r['incremental_ms']:.2f} ms = {r['ratio']:.1f}x")
        lines.append(f"baseline: {base['timestamps_completed']} timestamps in {base['budget_s']:g} s, same minpath "
                     f"atoms on all of them")
    return "\n".join(lines)


if __name__ == "__main__":
    command(main)
