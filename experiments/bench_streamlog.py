"""Streamlog benchmark: continuous shortest paths over a stream of arcs, incremental vs re-solving the history.

Zaniolo's "A Logic-Based Language for Data Streams" computes shortest paths in a graph that arrives as a stream
of arcs ``arc(T,X,Y,D)``: ``minpath(T,X,Z,D)`` says that at timestamp T a path X->Z of length D appeared (its
latest arc has timestamp T) and no path X->Z known by then (timestamp <= T) is shorter. The slides' program
joins every path with every path (``lgr(T1,T2,T)``: T = max(T1,T2)); over a stream it keeps every path of every
length, so path lengths need a bound ``bound(B)``, and even then its number of paths explodes on a graph of a
few hundred nodes. The formulation measured here (``--program pruned``, the default) eliminates non-minimal
paths as soon as they are generated, as the slides suggest, and stays XY-stratified:

* a path at T is only kept when no path known before T (a ``minpath`` at T0 < T) is strictly shorter: the
  conditional literal ``#false : minpath(T0,X,Z,D0), T0 < T, D0 < D`` looks at earlier timestamps only, so it
  does not block and is no recursion through negation at the same timestamp (a ``#count{..} = 0`` aggregate
  says the same and is accepted too, but grounds 2.5x slower);
* ``lgr`` is written out as its cases, and the earlier side of a join is a ``minpath``, not any path: a new
  path is new ⋈ new, new ⋈ earlier minpath, or earlier minpath ⋈ new;
* ``shorter`` compares paths of the same timestamp only (earlier ones are pruned already).

It gives the same ``minpath`` atoms as the slides' program with the same bound (``tests/experiments`` checks
it on small graphs). ``--program slides`` measures the slides' program itself.

Two evaluators run the same program on the same stream (random graph: ``--arcs-per-ts`` new arcs per timestamp
between random distinct nodes, weights 1..``--max-weight``):

1. **incremental**: ``srtopo.streamlog.Streamlog`` with one stream ``arcs``; the lines of timestamp t are
   pushed, then ``punctuate(0, t+1)`` completes t: its duration is the timestamp's latency (the Model out);
2. **baseline**: at every timestamp t a fresh clingo program (``solving.restart.RestartSolver``: the program's
   rules, ``lgr`` expanded by the parser, over every arc with timestamp <= t), solved once, and the minpath
   atoms with timestamp t extracted. It grows quadratically and stops once it has used ``--baseline-budget``
   seconds of one size. ``--baseline-program slides`` re-solves the slides' program instead (clingo's grounder
   evaluates it completely, while the pruned program's recursion through its condition leaves work to the
   solver: in one shot the slides' rules are ~2x faster).

On the timestamps both completed the two must give the same minpath atoms, timestamp by timestamp, or the run
fails (``experiment check failed``). Each size and evaluator runs in a child process of its own, so that its peak
RSS is its own (``--in-process`` runs everything here: faster to start, RSS is then the whole process's).

    .venv/bin/python -m experiments.bench_streamlog                 # sizes 100,300,1000: about 3 minutes
    .venv/bin/python -m experiments.bench_streamlog --quick         # ~15 s: bench_streamlog_quick.*
    .venv/bin/python -m experiments.bench_streamlog --sizes 300,1000 --timestamps 400 --baseline-budget 120
    .venv/bin/python -m experiments.bench_streamlog --baseline-program slides   # re-solve the slides' rules

Cost grows with the graph's density, not its size: with the defaults (200 timestamps x 3 arcs) the 100-node
graph ends with out-degree 6 and nearly every pair within the bound, so it is by far the slowest size.

Results: ``experiments/results/bench_streamlog.json`` (parameters, the program run, per size and evaluator the
latency of every timestamp and the summary), ``bench_streamlog.png`` (latency per timestamp, one panel per
size, log scale) and the table on stdout.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from experiments.common import RESULTS, ROOT, ExperimentError, log, machine, progress
from srtopo.measure import percentile, rss_mb

NAME = "bench_streamlog"
STREAM = "arcs"
SHOWN = ("minpath", 4)

#: "no minpath X->Z known before T is strictly shorter": a condition over earlier timestamps only
_NOT_BEATEN = "#false : minpath(T0,X,Z,D0), T0 < T, D0 < D"

#: minimal paths only: pruned against every earlier minpath as soon as generated (see the module's docstring)
PRUNED = f"""\
path(T,X,Z,D) :- arc(T,X,Z,D), {_NOT_BEATEN}.
path(T,X,Z,D) :- path(T,X,Y,D1), path(T,Y,Z,D2), D = D1+D2, D <= B, bound(B), {_NOT_BEATEN}.
path(T,X,Z,D) :- path(T,X,Y,D1), minpath(T2,Y,Z,D2), T2 < T, D = D1+D2, D <= B, bound(B), {_NOT_BEATEN}.
path(T,X,Z,D) :- minpath(T1,X,Y,D1), T1 < T, path(T,Y,Z,D2), D = D1+D2, D <= B, bound(B), {_NOT_BEATEN}.
shorter(T,X,Z,D) :- path(T,X,Z,D), path(T,X,Z,D1), D1 < D.
minpath(T,X,Z,D) :- path(T,X,Z,D), not shorter(T,X,Z,D).
#show minpath/4.
"""

#: the slides' program, path lengths bounded
SLIDES = """\
path(T,X,Y,D) :- arc(T,X,Y,D).
path(T,X,Z,D) :- path(T1,X,Y,D1), path(T2,Y,Z,D2), lgr(T1,T2,T), D = D1+D2, D <= B, bound(B).
shorter(T,X,Z,D) :- path(T,X,Z,D), path(T1,X,Z,D1), T1 <= T, D1 < D.
minpath(T,X,Z,D) :- path(T,X,Z,D), not shorter(T,X,Z,D).
#show minpath/4.
"""

PROGRAMS = {"pruned": PRUNED, "slides": SLIDES}


def program_text(name: str, bound: int) -> str:
    return f"bound({bound}).\n" + PROGRAMS[name]


def baseline_text(params: dict) -> str:
    """The Streamlog program the baseline re-solves: the incremental evaluator's, or another formulation."""
    name = params.get("baseline_program", "same")
    return program_text(params["program"] if name == "same" else name, params["bound"])


def make_stream(nodes: int, timestamps: int, arcs_per_ts: int, max_weight: int, seed: int) -> list[list[tuple]]:
    """Per timestamp 1..``timestamps``, ``arcs_per_ts`` arcs (x, y, weight) between distinct random nodes; no
    pair (x, y) twice in the whole stream (while the graph has pairs left)."""
    rng = random.Random(seed)
    used: set = set()
    stream = []
    for _t in range(timestamps):
        arcs = []
        for _ in range(arcs_per_ts):
            if len(used) >= nodes * (nodes - 1):
                break
            while True:
                x, y = rng.sample(range(nodes), 2)
                if (x, y) not in used:
                    break
            used.add((x, y))
            arcs.append((x, y, rng.randint(1, max_weight)))
        stream.append(arcs)
    return stream


def arc_lines(stream: list[list[tuple]]) -> list[list[str]]:
    return [[f"arc({t},{x},{y},{d})." for x, y, d in arcs] for t, arcs in enumerate(stream, start=1)]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- the two evaluators ------------------------------------------------------------------------------------

def run_incremental(text: str, stream: list[list[tuple]], desc: str = "incremental", bar: bool = True) -> dict:
    """The Streamlog evaluator: push timestamp t's lines, then punctuation t+1 completes t (its latency)."""
    from srtopo.streamlog import Streamlog, parse_program

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
            "peak_rss_mb": _peak_rss_mb(), "rss_end_mb": rss_mb()}


def baseline_rules(text: str) -> str:
    """The program as flat ASP for one clingo call: background and rules as the parser rewrote them (``lgr``
    expanded into its two rules ``T = T1, T2 <= T1`` and ``T = T2, T1 <= T2``)."""
    from srtopo.streamlog import parse_program

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
            "stopped_early": len(latencies) < len(stream), "peak_rss_mb": _peak_rss_mb(), "rss_end_mb": rss_mb()}


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

def _child(evaluator: str, params: dict, out: str) -> None:
    stream = make_stream(params["nodes"], params["timestamps"], params["arcs_per_ts"], params["max_weight"],
                         params["seed"])
    text = program_text(params["program"], params["bound"])
    desc = f"n={params['nodes']} {evaluator}"
    if evaluator == "incremental":
        result = run_incremental(text, stream, desc)
    else:
        result = run_baseline(baseline_text(params), stream, params["baseline_budget"], desc)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


def _in_child(evaluator: str, params: dict, workdir: str) -> dict:
    out = os.path.join(workdir, f"{evaluator}-{params['nodes']}.json")
    proc = subprocess.run([sys.executable, "-m", "experiments.bench_streamlog", "--child", evaluator,
                           json.dumps(params), out], check=False, cwd=ROOT)
    if proc.returncode != 0:
        raise ExperimentError(f"n={params['nodes']}: the {evaluator} run failed (exit status {proc.returncode})")
    with open(out, encoding="utf-8") as handle:
        result = json.load(handle)
    result["atoms"] = {int(t): a for t, a in result["atoms"].items()}
    return result


def _latency_summary(latencies: list[float]) -> dict:
    ms = [1000 * s for s in latencies]
    return {"p50_ms": percentile(ms, 0.5), "p95_ms": percentile(ms, 0.95), "max_ms": max(ms, default=0.0),
            "mean_ms": statistics.fmean(ms) if ms else 0.0, "total_s": sum(latencies)}


def run_size(params: dict, isolate: bool = True, workdir: str | None = None, bar: bool = True) -> dict:
    """Both evaluators on the stream of one size; the row of the results (the check failing raises)."""
    stream = make_stream(params["nodes"], params["timestamps"], params["arcs_per_ts"], params["max_weight"],
                         params["seed"])
    if isolate:
        inc = _in_child("incremental", params, workdir)
        base = _in_child("baseline", params, workdir) if params["baseline_budget"] > 0 else None
    else:
        text = program_text(params["program"], params["bound"])
        inc = run_incremental(text, stream, f"n={params['nodes']} incremental", bar)
        base = run_baseline(baseline_text(params), stream, params["baseline_budget"], f"n={params['nodes']} baseline",
                            bar) if params["baseline_budget"] > 0 else None
    arcs = sum(len(a) for a in stream)
    inc_total = sum(inc["latencies_s"])
    row = {"nodes": params["nodes"], "timestamps": len(stream), "arcs": arcs,
           "minpath_atoms": sum(len(a) for a in inc["atoms"].values()),
           "minpath_atoms_per_ts": [len(inc["atoms"][t]) for t in range(1, len(stream) + 1)],
           "incremental": {**_latency_summary(inc["latencies_s"]),
                           "timestamps_per_s": len(stream) / inc["wall_s"] if inc["wall_s"] else 0.0,
                           "arcs_per_s": arcs / inc["wall_s"] if inc["wall_s"] else 0.0,
                           "evaluation_timestamps_per_s": len(stream) / inc_total if inc_total else 0.0,
                           "wall_s": inc["wall_s"], "peak_rss_mb": inc["peak_rss_mb"], "rss_end_mb": inc["rss_end_mb"],
                           "counters": inc["counters"], "latencies_ms": [1000 * s for s in inc["latencies_s"]]}}
    if base is not None:
        common = compare(inc, base, f"n={params['nodes']}: ")
        prefix_inc = statistics.fmean(inc["latencies_s"][:common]) if common else 0.0
        prefix_base = statistics.fmean(base["latencies_s"][:common]) if common else 0.0
        row["baseline"] = {**_latency_summary(base["latencies_s"]), "timestamps_completed": len(base["latencies_s"]),
                           "stopped_early": base["stopped_early"], "budget_s": base["budget_s"],
                           "peak_rss_mb": base["peak_rss_mb"], "rss_end_mb": base["rss_end_mb"],
                           "latencies_ms": [1000 * s for s in base["latencies_s"]]}
        row["common_prefix"] = common
        row["agree_on_common_prefix"] = True
        row["common_prefix_minpath_atoms"] = sum(len(inc["atoms"][t]) for t in range(1, common + 1))
        row["mean_ms_common_prefix"] = {"incremental": 1000 * prefix_inc, "baseline": 1000 * prefix_base}
        row["ratio_baseline_over_incremental"] = prefix_base / prefix_inc if prefix_inc else None
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


def format_table(rows: list[dict]) -> str:
    def fmt(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
        return f"{v:,}" if isinstance(v, int) else str(v)
    cells = [HEADERS] + [[fmt(v) for v in row] for row in table_rows(rows)]
    widths = [max(len(c[k]) for c in cells) for k in range(len(HEADERS))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> None:
    """Latency per timestamp of both evaluators, one panel per size, log y-axis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(rows), figsize=(4.2 * len(rows), 3.4), squeeze=False, sharey=True)
    for ax, r in zip(axes[0], rows):
        inc = r["incremental"]["latencies_ms"]
        ax.plot(range(1, len(inc) + 1), inc, label="Streamlog incremental", linewidth=0.9)
        if "baseline" in r:
            base = r["baseline"]["latencies_ms"]
            ax.plot(range(1, len(base) + 1), base, label="re-solve history (clingo)", linewidth=0.9)
        ax.set_yscale("log")
        ax.set_title(f"{r['nodes']} nodes, {r['arcs']} arcs")
        ax.set_xlabel("timestamp")
        ax.grid(True, which="both", linewidth=0.3)
    axes[0][0].set_ylabel("latency per timestamp (ms)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(rows: list[dict], meta: dict, out_dir: str, name: str = NAME) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    json_path = os.path.join(out_dir, name + ".json")
    with open(json_path, "w", encoding="utf-8") as handle:
        json.dump({"experiment": NAME, "machine": machine(), **meta, "rows": rows}, handle, indent=1)
    png_path = os.path.join(out_dir, name + ".png")
    plot(rows, png_path)
    return [json_path, png_path]


# --- command line ------------------------------------------------------------------------------------------

def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,300,1000", help="numbers of nodes, one graph each")
    parser.add_argument("--timestamps", type=int, default=200, help="timestamps in the stream")
    parser.add_argument("--arcs-per-ts", type=int, default=3, help="new arcs per timestamp")
    parser.add_argument("--max-weight", type=int, default=9, help="arc weights are 1..W")
    parser.add_argument("--bound", type=int, default=20, help="bound(B): paths longer than B are not derived")
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="pruned",
                        help="pruned (minimal paths only, default) or the slides' program")
    parser.add_argument("--baseline-program", choices=["same"] + sorted(PROGRAMS), default="same",
                        help="the program the baseline re-solves: the same as the incremental evaluator's (default) "
                             "or another formulation (the minpath atoms must agree all the same)")
    parser.add_argument("--baseline-budget", type=float, default=90.0,
                        help="seconds of re-solving per size before the baseline stops (0: no baseline)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true",
                        help="a check in under a minute: the default sizes, 100 timestamps, baseline budget 5 s "
                             "(written as bench_streamlog_quick.json / .png)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the evaluators in this process (no child per evaluator; RSS is then the process's)")
    parser.add_argument("--out", default=RESULTS, help="directory of bench_streamlog.json and .png")
    parser.add_argument("--child", nargs=3, metavar=("EVALUATOR", "PARAMS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.timestamps, args.baseline_budget = 100, 5.0
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.child:
        _child(args.child[0], json.loads(args.child[1]), args.child[2])
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s]
    text = program_text(args.program, args.bound)
    params = {"timestamps": args.timestamps, "arcs_per_ts": args.arcs_per_ts, "max_weight": args.max_weight,
              "bound": args.bound, "program": args.program, "baseline_program": args.baseline_program,
              "baseline_budget": args.baseline_budget,
              "seed": args.seed}
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
    with tempfile.TemporaryDirectory(prefix="bench_streamlog-") as workdir:
        for n in sizes:
            row = run_size(dict(params, nodes=n), isolate=not args.in_process, workdir=workdir)
            rows.append(row)
            i = row["incremental"]
            b = row.get("baseline")
            log(f"n={n}: incremental p50 {i['p50_ms']:.1f} ms p95 {i['p95_ms']:.1f} ms"
                + (f"; baseline {b['timestamps_completed']} timestamps, agree on {row['common_prefix']}, "
                   f"ratio {row['ratio_baseline_over_incremental']:.1f}" if b else ""))
    meta = {"params": dict(params, sizes=sizes, quick=args.quick, isolated=not args.in_process),
            "program_text": text, "baseline_program_text": base_text, "baseline_rules": baseline_flat,
            "incremental": "srtopo.streamlog.Streamlog, one stream 'arcs'; latency of timestamp t = duration of "
                           "punctuate(0, t+1) after t's lines were pushed; throughput over the whole run (pushes "
                           "included)",
            "baseline": "srtopo.solving.restart.RestartSolver over every arc <= t, per timestamp; minpath atoms at t",
            "ratio": "mean per-timestamp time of the baseline / of the incremental evaluator, on the timestamps both "
                     "completed (the common prefix)",
            "seconds": time.perf_counter() - started}
    files = write(rows, meta, args.out, NAME + ("_quick" if args.quick else ""))
    print()
    print(format_table(rows))
    print("latencies per timestamp; ts/s and arcs/s: the incremental run's throughput (pushes included); RSS: peak "
          "of the evaluator's process; base ts: timestamps the baseline completed (* stopped by its budget); prefix "
          "inc/base ms: mean latency on the timestamps both completed, base/inc their ratio; both evaluators gave the "
          "same minpath atoms at every one of those timestamps")
    print(f"total {meta['seconds']:.0f} s; written {', '.join(files)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ExperimentError as error:
        print(error, file=sys.stderr)
        sys.exit(1)
