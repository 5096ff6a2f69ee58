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

import os
import random
import statistics
import sys
import time

from experiments.common import (
    ExperimentError, arguments, chart, command, in_own_process, log, peak_rss_mb, progress, splits, stats, text_table,
    write_json)
from srtopo.measure import rss_mb

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
            "peak_rss_mb": peak_rss_mb(), "rss_end_mb": rss_mb()}


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

def evaluate(evaluator: str, params: dict, bar: bool = True) -> dict:
    """One evaluator (``incremental`` or ``baseline``) on the stream of one size, in this process."""
    stream = make_stream(params["nodes"], params["timestamps"], params["arcs_per_ts"], params["max_weight"],
                         params["seed"])
    desc = f"n={params['nodes']} {evaluator}"
    if evaluator == "incremental":
        return run_incremental(program_text(params["program"], params["bound"]), stream, desc, bar)
    return run_baseline(baseline_text(params), stream, params["baseline_budget"], desc, bar)


def _latency_summary(latencies: list[float]) -> dict:
    return {**stats(latencies, "{}_ms", ("p50", "p95", "max", "mean"), scale=1000), "total_s": sum(latencies)}


def run_size(params: dict, isolate: bool = True, bar: bool = True) -> dict:
    """Both evaluators on the stream of one size (``isolate``: each in a process of its own, so that its peak RSS
    is its own); the row of the results (the check failing raises)."""
    def run(evaluator: str) -> dict:
        if not isolate:
            return evaluate(evaluator, params, bar)
        result = in_own_process(evaluate, quiet=False, evaluator=evaluator, params=params)
        return dict(result, atoms={int(t): a for t, a in result["atoms"].items()})     # JSON keys are strings
    stream = make_stream(params["nodes"], params["timestamps"], params["arcs_per_ts"], params["max_weight"],
                         params["seed"])
    inc = run("incremental")
    base = run("baseline") if params["baseline_budget"] > 0 else None
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


# --- command line ------------------------------------------------------------------------------------------

def parse_args(argv=None):
    parser = arguments(
        __doc__, sizes=("100,300,1000", "numbers of nodes, one graph each"),
        timestamps=(200, "timestamps in the stream"), arcs_per_ts=(3, "new arcs per timestamp"),
        max_weight=(9, "arc weights are 1..W"), bound=(20, "bound(B): paths longer than B are not derived"),
        baseline_budget=(90.0, "seconds of re-solving per size before the baseline stops (0: no baseline)"),
        seed=1, quick=(False, "a check in under a minute: the default sizes, 100 timestamps, baseline budget 5 s "
                              "(written as bench_streamlog_quick.json / .png)"),
        in_process=(False, "run the evaluators in this process (no child per evaluator; RSS is then the process's)"),
        out=(".", "directory of bench_streamlog.json and .png"))
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="pruned",
                        help="pruned (minimal paths only) or the slides' program")
    parser.add_argument("--baseline-program", choices=["same"] + sorted(PROGRAMS), default="same",
                        help="the program the baseline re-solves: the same as the incremental evaluator's or another "
                             "formulation (the minpath atoms must agree all the same)")
    args = parser.parse_args(argv)
    if args.quick:
        args.timestamps, args.baseline_budget = 100, 5.0
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    sizes = splits(args.sizes, int)
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


if __name__ == "__main__":
    command(main)
