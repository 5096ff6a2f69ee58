"""Streamlog benchmarks: ``python -m experiments.bench_streamlog [paths|history|spark|keyed] [flags]`` (``WORKLOAD
--help``: its flags): incremental evaluation against re-solving the history, locally and on Spark.
experiments/README.md, "Streamlog benchmarks", says what each workload measures and how."""
from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from experiments.common import (
    ExperimentError, arguments, chart, command, in_own_process, load_average, log, models_digest, peak_rss_mb, program,
    progress, ratio, splits, stats, steady_rate, text_table, timed, workloads, write_json, write_parts)
from srtopo.io.sources import FactLines
from srtopo.measure import rss_mb
from srtopo.runners import RunConfig, SparkOptions, get_runner
from srtopo.streamlog import Streamlog, parse_program
from srtopo.streamlog.compile import compile_program

NAME = "bench_streamlog"
STREAM = "arcs"
SHOWN = ("minpath", 4)

#: minimal paths only, pruned as soon as generated (README, "Streamlog benchmarks"); the slides' program
PROGRAMS = {"pruned": program("shortest-paths-pruned.sl"), "slides": program("shortest-paths-slides.sl")}


def program_text(name: str, bound: int) -> str:
    return f"bound({bound}).\n" + PROGRAMS[name]


def baseline_text(params: dict) -> str:
    """The Streamlog program the baseline re-solves: the incremental evaluator's, or another formulation."""
    name = params.get("baseline_program", "same")
    return program_text(params.get("program", "pruned") if name == "same" else name, params["bound"])


def make_stream(nodes: int, timestamps: int, arcs_per_ts: int, max_weight: int, seed: int,
                slide: int = 0) -> list[list[tuple]]:
    """Per timestamp 1..``timestamps``, ``arcs_per_ts`` arcs (x, y, weight) between distinct random nodes of
    [slide*t, slide*t + nodes) (t from 0; ``slide`` 0: one graph of ``nodes`` nodes); no pair (x, y) twice in the
    whole stream (while the graph has pairs left)."""
    rng = random.Random(seed)
    used: set = set()
    stream = []
    for t in range(timestamps):
        arcs = []
        for _ in range(arcs_per_ts):
            if not slide and len(used) >= nodes * (nodes - 1):
                break
            while True:
                x, y = rng.sample(range(slide * t, slide * t + nodes), 2)
                if (x, y) not in used:
                    break
            used.add((x, y))
            arcs.append((x, y, rng.randint(1, max_weight)))
        stream.append(arcs)
    return stream


def arc_lines(stream: list[list[tuple]]) -> list[list[str]]:
    return [[f"arc({t},{x},{y},{d})." for x, y, d in arcs] for t, arcs in enumerate(stream, start=1)]


# --- the two evaluators ------------------------------------------------------------------------------------

def run_incremental(text: str, stream: list[list[tuple]], desc: str = "incremental", bar: bool = True) -> dict:
    """The Streamlog evaluator: push timestamp t's lines, then punctuation t+1 completes t (its latency)."""
    streamlog = Streamlog(parse_program(text, "bench_streamlog.sl").check(), (STREAM,))
    latencies, atoms = [], {}
    lines = arc_lines(stream)
    steps = progress(range(len(lines)), desc=desc, leave=False) if bar else range(len(lines))
    start = time.perf_counter()
    for i in steps:
        t = i + 1
        for line in lines[i]:
            early = streamlog.push(0, line)
            if early:
                raise ExperimentError(f"timestamp {t}: pushing a line of it completed {[m.time for m in early]}")
        t0 = time.perf_counter()
        models = streamlog.punctuate(0, t + 1)
        latencies.append(time.perf_counter() - t0)
        for m in models:
            if m.time != t:
                raise ExperimentError(f"punctuation {t + 1} completed timestamp {m.time}, expected {t}")
            atoms[t] = sorted(m.atoms)
    wall = time.perf_counter() - start
    if streamlog.rejected:
        raise ExperimentError(f"the evaluator rejected {len(streamlog.rejected)} lines, e.g. {streamlog.rejected[0]}")
    return {"latencies_s": latencies, "atoms": {t: atoms.get(t, []) for t in range(1, len(lines) + 1)},
            "wall_s": wall, "counters": streamlog.counters.to_dict(),
            "peak_rss_mb": peak_rss_mb(), "rss_end_mb": rss_mb()}


def baseline_rules(text: str) -> str:
    """The program as flat ASP for one clingo call: background and rules as the parser rewrote them (``lgr``
    expanded into its two rules ``T = T1, T2 <= T1`` and ``T = T2, T1 <= T2``)."""
    program = parse_program(text, "bench_streamlog.sl").check()
    return "".join(f"{b}\n" for b in program.background) + "".join(f"{r.node}\n" for r in program.rules)


def run_baseline(text: str, stream: list[list[tuple]], budget_s: float, desc: str = "baseline",
                 bar: bool = True) -> dict:
    """At every timestamp t a fresh clingo program over every arc up to t, solved once; the minpath atoms at t.
    Stops before a timestamp once ``budget_s`` seconds have been spent."""
    from clingo import Function, Number

    from srtopo.solving import SubprogramSpec
    from srtopo.solving.restart import RestartSolver

    solver = RestartSolver(SubprogramSpec(baseline_rules(text), (("arc", 4),), (SHOWN,)))
    latencies, atoms = [], {}
    history: set = set()
    steps = progress(range(len(stream)), desc=desc, leave=False) if bar else range(len(stream))
    spent = 0.0
    for i in steps:
        t = i + 1
        if spent >= budget_s:
            break
        history.update(Function("arc", [Number(t), Number(x), Number(y), Number(d)]) for x, y, d in stream[i])
        t0 = time.perf_counter()
        found = solver.solve({("arc", 4): history})
        now = [str(s) for s in found if s.name == SHOWN[0] and s.arguments[0].number == t]
        latencies.append(time.perf_counter() - t0)
        spent += latencies[-1]
        atoms[t] = sorted(now)
    return {"latencies_s": latencies, "atoms": atoms, "budget_s": budget_s,
            "stopped_early": len(latencies) < len(stream), "peak_rss_mb": peak_rss_mb(), "rss_end_mb": rss_mb()}


def compare(incremental: dict, baseline: dict, where: str = "") -> int:
    """The timestamps both evaluators completed must have the same minpath atoms; the length of that prefix."""
    common = min(len(incremental["latencies_s"]), len(baseline["latencies_s"]))
    for t in range(1, common + 1):
        a, b = set(incremental["atoms"][t]), set(baseline["atoms"][t])
        if a != b:
            raise ExperimentError(f"{where}timestamp {t}: incremental gives {len(a)} minpath atoms, baseline "
                                  f"{len(b)} (only incremental e.g. {sorted(a - b)[:3]}, only baseline e.g. "
                                  f"{sorted(b - a)[:3]})")
    return common


# --- one size ----------------------------------------------------------------------------------------------

def child(which: str, params: dict, bar: bool = True) -> dict:
    """One evaluator in this process: ``incremental`` (or ``local``) or the re-solving ``baseline`` over the stream
    ``params`` describe (``nodes``, or a ``window`` of live nodes that moves by ``slide``), or the Spark runner
    over the stream files of ``params["work"]`` (``spark``)."""
    if which == "spark":
        return _spark_history(params)
    stream = make_stream(params.get("nodes") or params["window"], params["timestamps"], params["arcs_per_ts"],
                         params["max_weight"], params["seed"], slide=params.get("slide", 0))
    desc = f"n={params.get('nodes')} {which}"
    if which == "baseline":
        return run_baseline(baseline_text(params), stream, params["baseline_budget"], desc, bar)
    return run_incremental(program_text(params.get("program", "pruned"), params["bound"]), stream, desc, bar)


def _own(which: str, params: dict, **kwargs) -> dict:
    """``child`` in a process of its own (so that its peak RSS is its own), the timestamps of its JSON numbers."""
    result = in_own_process(child, which=which, params=params, **kwargs)
    for key in ("atoms", "models"):     # JSON keys are strings
        if key in result:
            result[key] = {int(t): a for t, a in result[key].items()}
    return result


def _summary(run: dict, **more) -> dict:
    """An evaluator's figures in the results: its latencies' summary, ``more``, its memory and every latency."""
    seconds = run["latencies_s"]
    return {**stats(seconds, "{}_ms", ("p50", "p95", "max", "mean"), scale=1000), "total_s": sum(seconds), **more,
            "peak_rss_mb": run["peak_rss_mb"], "rss_end_mb": run["rss_end_mb"],
            "latencies_ms": [1000 * s for s in seconds]}


def run_size(params: dict, isolate: bool = True, bar: bool = True) -> dict:
    """Both evaluators on the stream of one size (``isolate``: each in a process of its own, so that its peak RSS
    is its own); the row of the results (the check failing raises)."""
    def run(evaluator: str) -> dict:
        return _own(evaluator, params, quiet=False) if isolate else child(evaluator, params, bar)
    stream = make_stream(params["nodes"], params["timestamps"], params["arcs_per_ts"], params["max_weight"],
                         params["seed"])
    inc = run("incremental")
    base = run("baseline") if params["baseline_budget"] > 0 else None
    n, arcs, wall, total = len(stream), sum(len(a) for a in stream), inc["wall_s"], sum(inc["latencies_s"])
    row = {"nodes": params["nodes"], "timestamps": n, "arcs": arcs,
           "minpath_atoms": sum(len(a) for a in inc["atoms"].values()),
           "minpath_atoms_per_ts": [len(inc["atoms"][t]) for t in range(1, n + 1)],
           "incremental": _summary(inc, timestamps_per_s=n / wall if wall else 0.0,
                                   arcs_per_s=arcs / wall if wall else 0.0,
                                   evaluation_timestamps_per_s=n / total if total else 0.0, wall_s=wall,
                                   counters=inc["counters"])}
    if base is not None:
        common = compare(inc, base, f"n={params['nodes']}: ")
        prefix_inc, prefix_base = (statistics.fmean(r["latencies_s"][:common]) if common else 0.0 for r in (inc, base))
        row.update(baseline=_summary(base, timestamps_completed=len(base["latencies_s"]),
                                     stopped_early=base["stopped_early"], budget_s=base["budget_s"]),
                   common_prefix=common, agree_on_common_prefix=True,
                   common_prefix_minpath_atoms=sum(len(inc["atoms"][t]) for t in range(1, common + 1)),
                   mean_ms_common_prefix={"incremental": 1000 * prefix_inc, "baseline": 1000 * prefix_base},
                   ratio_baseline_over_incremental=prefix_base / prefix_inc if prefix_inc else None)
    return row


# --- output ------------------------------------------------------------------------------------------------

HEADERS = ["nodes", "ts", "arcs", "minpaths", "inc p50 ms", "inc p95 ms", "inc max ms", "ts/s", "arcs/s",
           "inc RSS MB", "base ts", "base p50 ms", "base p95 ms", "base RSS MB", "prefix inc ms", "prefix base ms",
           "base/inc"]


def table_rows(rows: list[dict]) -> list[list]:
    out = []
    for r in rows:
        i, b = r["incremental"], r.get("baseline")
        out.append([r["nodes"], r["timestamps"], r["arcs"], r["minpath_atoms"], i["p50_ms"], i["p95_ms"], i["max_ms"],
                    i["timestamps_per_s"], i["arcs_per_s"], i["peak_rss_mb"],
                    b and f"{b['timestamps_completed']}{'*' if b['stopped_early'] else ''}", b and b["p50_ms"],
                    b and b["p95_ms"], b and b["peak_rss_mb"], b and r["mean_ms_common_prefix"]["incremental"],
                    b and r["mean_ms_common_prefix"]["baseline"], r.get("ratio_baseline_over_incremental")])
    return out


def plot(rows: list[dict], path: str) -> None:
    """Latency per timestamp of both evaluators, one panel per size, log y-axis."""
    with chart(path, 1, len(rows), size=(4.2 * len(rows), 3.4), sharey=True) as (_fig, axes):
        for ax, r in zip(axes[0], rows):
            inc = r["incremental"]["latencies_ms"]
            ax.plot(range(1, len(inc) + 1), inc, label="Streamlog incremental", linewidth=0.9)
            if "baseline" in r:
                base = r["baseline"]["latencies_ms"]
                ax.plot(range(1, len(base) + 1), base, label="re-solve history (clingo)", linewidth=0.9)
            ax.set(yscale="log", title=f"{r['nodes']} nodes, {r['arcs']} arcs", xlabel="timestamp")
            ax.grid(True, which="both", linewidth=0.3)
        axes[0][0].set_ylabel("latency per timestamp (ms)")
        axes[0][0].legend(fontsize=7)


# --- paths: the command -------------------------------------------------------------------------------------------

def paths(argv=None) -> int:
    """The default workload: shortest paths, the incremental evaluator against re-solving the history."""
    args = arguments(
        __doc__, sizes=("100,300,1000", "numbers of nodes, one graph each"),
        timestamps=(200, "timestamps in the stream"), arcs_per_ts=(3, "new arcs per timestamp"),
        max_weight=(9, "arc weights are 1..W"), bound=(20, "bound(B): paths longer than B are not derived"),
        baseline_budget=(90.0, "seconds of re-solving per size before the baseline stops (0: no baseline)"),
        seed=1, quick=(False, "a check in under a minute: the default sizes, 100 timestamps, baseline budget 5 s "
                              "(written as bench_streamlog_quick.json / .png)"),
        in_process=(False, "run the evaluators in this process (no child per evaluator; RSS is then the process's)"),
        out=(".", "directory of bench_streamlog.json and .png"),
        program=("pruned", "pruned (minimal paths only) or the slides' program", sorted(PROGRAMS)),
        baseline_program=("same", "the program the baseline re-solves: the same as the incremental evaluator's or "
                                  "another formulation (the minpath atoms must agree all the same)",
                          ["same"] + sorted(PROGRAMS))).parse_args(argv)
    if args.quick:
        args.timestamps, args.baseline_budget = 100, 5.0
    sizes = splits(args.sizes, int)
    text = program_text(args.program, args.bound)
    params = {k: getattr(args, k) for k in ("timestamps", "arcs_per_ts", "max_weight", "bound", "program",
                                            "baseline_program", "baseline_budget", "seed")}
    base_text = baseline_text(params)
    baseline_flat = baseline_rules(base_text)
    print(f"Streamlog program ({args.program}), stream '{STREAM}' of arc(T,X,Y,D), the same for both evaluators:")
    print("".join(f"    {line}\n" for line in text.splitlines()), end="")
    print(f"random graphs: nodes {sizes}, {args.timestamps} timestamps x {args.arcs_per_ts} new arcs, weights "
          f"1..{args.max_weight}, seed {args.seed}")
    print("incremental: Streamlog(program, ('arcs',)); per timestamp t: push t's lines, time punctuate(0, t+1)")
    print(f"baseline: per timestamp a fresh clingo program (RestartSolver) over all arcs <= t, minpath at t "
          f"extracted; stops after {args.baseline_budget:g} s per size; its rules (lgr expanded):")
    print("".join(f"    {line}\n" for line in baseline_flat.splitlines()), end="")
    sys.stdout.flush()
    rows = []
    started = time.perf_counter()
    for n in sizes:
        rows.append(run_size(dict(params, nodes=n), isolate=not args.in_process))
        i, b = rows[-1]["incremental"], rows[-1].get("baseline")
        log(f"n={n}: incremental p50 {i['p50_ms']:.1f} ms p95 {i['p95_ms']:.1f} ms"
            + (f"; baseline {b['timestamps_completed']} timestamps, agree on {rows[-1]['common_prefix']}, "
               f"ratio {rows[-1]['ratio_baseline_over_incremental']:.1f}" if b else ""))
    meta = {"params": dict(params, sizes=sizes, quick=args.quick, isolated=not args.in_process),
            "program_text": text, "baseline_program_text": base_text, "baseline_rules": baseline_flat,
            "incremental": "srtopo.streamlog.Streamlog, one stream 'arcs'; latency of timestamp t = duration of "
                           "punctuate(0, t+1) after t's lines were pushed; throughput over the whole run (pushes "
                           "included)",
            "baseline": "srtopo.solving.restart.RestartSolver over every arc <= t, per timestamp; minpath atoms at t",
            "ratio": "mean per-timestamp time of the baseline / of the incremental evaluator, on the timestamps both "
                     "completed (the common prefix)",
            "seconds": time.perf_counter() - started}
    base = os.path.join(args.out, NAME + ("_quick" if args.quick else ""))
    files = [write_json(base + ".json", {"experiment": NAME, **meta, "rows": rows}), base + ".png"]
    plot(rows, files[1])
    print()
    print(text_table(HEADERS, table_rows(rows)))
    print("latencies per timestamp; ts/s and arcs/s: the incremental run's throughput (pushes included); RSS: peak "
          "of the evaluator's process; base ts: timestamps the baseline completed (* stopped by its budget); prefix "
          "inc/base ms: mean latency on the timestamps both completed, base/inc their ratio; both evaluators gave the "
          "same minpath atoms at every one of those timestamps")
    print(f"total {meta['seconds']:.0f} s; written {', '.join(files)}")
    return 0


# --- history: the long history ------------------------------------------------------------------------------------

def _spark_history(params: dict) -> dict:
    """The Spark runner over the long history's stream files."""
    work = Path(params["work"])
    topology = compile_program(parse_program(program_text("pruned", params["bound"]), "shortest-paths.sl"))
    (run, batches), wall = timed(run_streamlog, topology, work / "in", params["master"], params["files_per_batch"],
                                 work / "ck")
    batches = [{"batch": b.batch, "seconds": b.seconds, "timestamps": b.detail.get("extra", {}).get("timestamps"),
                "python_s": b.detail.get("duration_s"), "snapshot": b.detail.get("extra", {}).get("state_snapshots")}
               for b in batches]
    return {"models": {m.time: sorted(m.atoms) for m in run.models}, "batches": batches, "wall_s": wall,
            "seconds": run.seconds, "memory_mb": run.memory_mb, "peak_rss_mb": peak_rss_mb()}


def _in_child(which: str, params: dict) -> dict:
    result, seconds = timed(_own, which, params, bar=False)
    log(f"{which}: {seconds:.0f} s")
    return result


# --- the long history: summaries ----------------------------------------------------------------------------------

def summarise(points: list[tuple[float, float]], near: tuple, half: int) -> dict:
    """p50/p95 of the step times near each timestamp of ``near`` (within ``half``), and last / first p50."""
    out = {}
    for c in near:
        window = [ms for t, ms in points if c - half <= t <= c + half]
        out[str(c)] = {**stats(window, "{}_ms"), "n": len(window)}
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


def plot_history(local_ms: list[float], spark: list[tuple[float, float]], base_ms: list[float], path: str,
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


# --- the long history: the command --------------------------------------------------------------------------------

def history(argv=None) -> int:
    """Shortest paths over a long history: the step time near timestamps 1,000 and 10,000, local and Spark."""
    args = arguments(
        __doc__, timestamps=10_100, window=(1000, "live nodes: arcs join nodes of a moving window"),
        slide=(3, "node ids the window moves on per timestamp"), arcs_per_ts=3, max_weight=9, bound=20,
        near=("1000,10000", "timestamps to summarise the step time near"),
        half=(100, "... within this many timestamps"), ts_per_file=25, files_per_batch=2, master="local[2]",
        baseline_budget=(120.0, "seconds of re-solving (0: none)"), no_spark=False, seed=1,
        out=".").parse_args(argv)
    near = tuple(splits(args.near, int))
    per_batch = args.ts_per_file * args.files_per_batch
    params = {k: v for k, v in vars(args).items() if k not in ("near", "half", "no_spark", "out")}
    load_before = os.getloadavg()
    started = time.perf_counter()
    report = {"experiment": "bench_streamlog_history", "params": params, "near": near, "half": args.half,
              "load_average_before": load_before}
    with tempfile.TemporaryDirectory(prefix="bench_streamlog_history-") as workdir:
        stream = make_stream(args.window, args.timestamps, args.arcs_per_ts, args.max_weight, args.seed, args.slide)
        files = write_punctuated(Path(workdir) / "in", arc_lines(stream), args.ts_per_file)
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
            common = compare(local, base)
            base_ms = [1000 * s for s in base["latencies_s"]]
            report["baseline"] = {"timestamps_completed": len(base_ms), "agree_on": common,
                                  "budget_s": args.baseline_budget, "peak_rss_mb": base["peak_rss_mb"],
                                  "at_200": resolve_ratio(local_ms, base_ms, 200, 10),
                                  "at_last": resolve_ratio(local_ms, base_ms, len(base_ms) - 10, 10),
                                  "latencies_ms": base_ms}
    report["load_average_after"] = os.getloadavg()
    report["seconds"] = time.perf_counter() - started
    json_path = write_json(os.path.join(args.out, "bench_streamlog_history.json"), report)
    png_path = os.path.join(args.out, "bench_streamlog_history.png")
    plot_history(local_ms, spark_pts, base_ms, png_path,
                 f"shortest paths, {args.window} live nodes (window slides {args.slide}/ts), {args.arcs_per_ts} "
                 f"arcs/ts; Spark: {per_batch} ts per micro-batch")
    print(format_report(report))
    print(f"total {report['seconds']:.0f} s; load average {load_before} -> {report['load_average_after']}; "
          f"written {json_path}, {png_path}")
    return 0


def format_report(report: dict) -> str:
    a, b = (str(x) for x in report["near"])
    rows = []
    for name, r in ((n, report[n]) for n in ("local", "spark") if report.get(n)):
        s = r["steps"]
        memory = {"peak_rss": round(r["peak_rss_mb"])} if name == "local" else \
            {k: round(v) for k, v in r["memory_mb"].items() if v}
        rows.append([name, s[a]["p50_ms"], s[a]["p95_ms"], s[b]["p50_ms"], s[b]["p95_ms"], s["ratio_p50"],
                     r["timestamps_per_s"], memory])
    lines = [text_table(["runner", f"p50@{a}", f"p95@{a}", f"p50@{b}", f"p95@{b}", "ratio", "ts/s", "memory MB"], rows)]
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


# --- shortest paths on Spark --------------------------------------------------------------------------------

def write_punctuated(folder: Path, lines: list[list[str]], per_file: int) -> int:
    """The arcs' lines, ``per_file`` timestamps a file, each file ending with punctuation past its last one."""
    parts = [[line for ts in lines[start:start + per_file] for line in ts]
             + [f"#punctuation {min(start + per_file, len(lines)) + 1}."] for start in range(0, len(lines), per_file)]
    return len(write_parts(folder, parts))


def run_streamlog(topology, folder, master: str | None = None, files_per_batch: int = 1, checkpoint=None):
    """The topology over the stream files of ``folder``: on the local runner (no ``master``), which reads the lines
    as they come, or on Spark (``--once``, ``files_per_batch`` files a micro-batch); the run's result and its
    micro-batches (the final one left out)."""
    if master is None:
        result = get_runner("local").run(topology, [FactLines(str(folder))], RunConfig())
    else:
        result = get_runner("spark").run(topology, [FactLines(str(folder), files_per_batch=files_per_batch)],
                                         RunConfig(checkpoint=str(checkpoint),
                                                   options=SparkOptions(master=master, once=True)))
    return result, [b for b in result.batches if b.batch != "final"]


def figures(result, batches, timestamps: int, steady_count=None) -> dict:
    """What a run's table shows: its seconds and timestamps/s, and on Spark (``steady_count``: the timestamps of a
    micro-batch) the rate over the batches after the first and the batches' p50 / p95."""
    row = {"seconds": round(result.seconds, 3), "timestamps_per_s": round(timestamps / result.seconds, 1),
           "memory_mb": result.memory_mb, "models": len(result.models),
           "digest": models_digest([(m.time, list(m.atoms)) for m in result.models])}
    if steady_count is not None:
        steady = steady_rate(batches, steady_count)
        row.update(steady_timestamps_per_s=round(steady, 1) if steady else None, batches=len(batches),
                   **stats([b.seconds for b in batches], "batch_{}_s", digits=3))
    return row


SPARK_COLUMNS = ["runner", "timestamps_per_s", "steady_timestamps_per_s", "batch_p50_s", "batch_p95_s",
                 "memory_mb", "models"]


def spark(argv=None) -> int:
    """Shortest paths on Spark against the local runner."""
    args = arguments(__doc__, nodes=300, timestamps=400, arcs_per_ts=3, max_weight=5, bound=20, ts_per_file=10,
                     files_per_batch=2, master="local[2]", seed=1, out="bench_streamlog_spark.json").parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="srtopo-bench-streamlog-spark-"))
    files = write_punctuated(work / "in", arc_lines(make_stream(args.nodes, args.timestamps, args.arcs_per_ts,
                                                             args.max_weight, args.seed)), args.ts_per_file)
    topology = compile_program(parse_program(program_text("pruned", args.bound), "shortest-paths.sl"))
    started = time.perf_counter()
    rows = {"local": figures(*run_streamlog(topology, work / "in"), args.timestamps),
            "spark": figures(*run_streamlog(topology, work / "in", args.master, args.files_per_batch, work / "ck"),
                             args.timestamps, lambda _b: args.ts_per_file * args.files_per_batch)}
    over_local = rows["spark"]["timestamps_per_s"] / rows["local"]["timestamps_per_s"]
    same_models(args, rows, SPARK_COLUMNS, started, files=files, spark_over_local=round(over_local, 3))
    log(f"spark / local: {over_local:.2f}x; same models; written to {args.out}")
    return 0


def same_models(args, rows: dict, columns: list[str], started: float, **report) -> None:
    """Every runner of ``rows`` (by name) wrote the same models, or the run fails; the results (``report`` and the
    rows) and their table."""
    if len({r["digest"] for r in rows.values()}) != 1:
        raise ExperimentError("the runners wrote different models: " +
                              ", ".join(f"{k} {r['models']} models {r['digest'][:12]}" for k, r in rows.items()))
    write_json(args.out, {"params": vars(args), **report, "rows": rows, "same_models": True,
                          "wall_s": round(time.perf_counter() - started, 1)})
    print(text_table(columns, [[name] + [r.get(c) for c in columns[1:]] for name, r in rows.items()]))


# --- keyed: per-sensor moving sums --------------------------------------------------------------------------------

CONFIGS = ("local", "local[1]", "local[2]")


def keyed_program(window: int, threshold: int) -> str:
    return (f"total(T,S,A) :- reading(T,S,_), A = #sum{{ V,T0 : reading(T0,S,V), T - {window} < T0, T0 <= T }}.\n"
            f"high(T,S,A) :- total(T,S,A), A > {threshold}.\n"
            f"peak(T,S,V) :- reading(T,S,V), V > 90, "
            f"#count{{ T0 : reading(T0,S,V0), T - {window} < T0, T0 < T, V0 >= V }} = 0.\n"
            "#show high/3.\n#show peak/3.\n")


def write_readings(folder: Path, sensors: int, timestamps: int, per_file: int, seed: int) -> int:
    """A reading per sensor and timestamp, ``per_file`` timestamps a file (listed in order); returns the files."""
    rng = random.Random(seed)
    return len(write_parts(folder, ([f"reading({t},s{s},{rng.randint(0, 99)})."
                                     for t in range(start, min(start + per_file, timestamps + 1))
                                     for s in range(sensors)] for start in range(1, timestamps + 1, per_file))))


def keyed_child(config: str, work: str, params: dict) -> dict:
    """One configuration, in a process of its own (a SparkSession's master is fixed for its process)."""
    topology = compile_program(parse_program(keyed_program(params["window"], params["threshold"]), "sensors.sl"),
                               retain=params["window"])
    master = None if config == "local" else config
    result, batches = run_streamlog(topology, Path(work, "in"), master, params["files_per_batch"],
                                    Path(work, f"ck-{config}"))
    def timestamps(batch) -> int:
        return batch.detail.get("extra", {}).get("timestamps", 0)
    row = figures(result, batches, params["timestamps"], None if master is None else timestamps)
    row.update(facts_per_s=round(params["sensors"] * params["timestamps"] / result.seconds),
               atoms=sum(len(m.atoms) for m in result.models))
    if master is not None:
        facts = steady_rate(batches, lambda b: timestamps(b) * params["sensors"])
        row.update(tasks=result.counters.stages[0].tasks, steady_facts_per_s=round(facts) if facts else None)
    return row


KEYED_COLUMNS = ["config", "timestamps_per_s", "facts_per_s", "steady_timestamps_per_s", "batch_p50_s",
                 "batch_p95_s", "tasks", "load_after", "memory_mb"]


def keyed(argv=None) -> int:
    """Per-sensor moving sums on the local runner, Spark local[1] and local[2]."""
    args = arguments(__doc__, sensors=3000, timestamps=300, window=8, threshold=700, ts_per_file=5, files_per_batch=4,
                     seed=1, out="bench_streamlog_keyed.json").parse_args(argv)
    params = {k: v for k, v in vars(args).items() if k != "out"}
    work = tempfile.mkdtemp(prefix="srtopo-bench-streamlog-keyed-")
    files = write_readings(Path(work, "in"), args.sensors, args.timestamps, args.ts_per_file, args.seed)
    load_before = load_average()
    started = time.perf_counter()
    rows = {}
    for config in CONFIGS:
        rows[config] = dict(in_own_process(keyed_child, config=config, work=work, params=params),
                            load_after=load_average()[0])
        log(f"{config}: {rows[config]['seconds']} s")
    ratios = {name: ratio(rows[a].get(field), rows[b].get(field)) for name, a, b, field in (
        ("local2_over_local1", "local[2]", "local[1]", "timestamps_per_s"),
        ("local2_over_local1_steady", "local[2]", "local[1]", "steady_timestamps_per_s"),
        ("local1_over_local", "local[1]", "local", "timestamps_per_s"),
        ("local2_over_local", "local[2]", "local", "timestamps_per_s"))}
    load_after = load_average()
    same_models(args, rows, KEYED_COLUMNS, started, files=files, facts=args.sensors * args.timestamps,
                cpus=os.cpu_count(), load_before=load_before, load_after=load_after, ratios=ratios)
    log(f"ratios {ratios}; load {load_before[0]} before, {load_after[0]} after; same models; written to {args.out}")
    return 0


def main(argv=None) -> int:
    return workloads({"paths": paths, "history": history, "spark": spark, "keyed": keyed}, argv)


if __name__ == "__main__":
    command(main)
