"""Benchmark rule topologies (I-DLV-sr programs) on the ICLP 2021 inputs: restart vs incremental, side by side.

For each instance and strategy a child process (so peak RSS is per run) compiles the program and runs it on
the local runner through the runner protocol, time point by time point, and records the latency of each time
point (window operators + clingo + reading the model; output serialisation excluded). Reports median / p95
latency, throughput (input atoms per second of step time), peak RSS, and the incremental/restart ratio of median
latencies measured in this run.

    .venv/bin/python -m experiments.bench_reasoning            # defaults: a few minutes
    .venv/bin/python -m experiments.bench_reasoning --pv 20x20,30x30 --hj 500:20 --cc 500 --points 60
"""
from __future__ import annotations

import statistics
import sys
import time

from experiments.common import (
    ICLP, ICLP_INPUTS, arguments, command, in_own_process, peak_rss_mb, percentile, splits, write_json)


def instances(args) -> list[dict]:
    """The ICLP2021 inputs the flags name, each with the label it is reported under."""
    chosen = [(f"PV {size}", f"pv-{size}") for size in splits(args.pv)]
    chosen += [(f"HeavyJoin n={n} w={w}", f"hj-{n}-w{w}") for n, w in (spec.split(":") for spec in splits(args.hj))]
    chosen += [(f"ContentCaching n={n} w=5", f"cc-{n}") for n in splits(args.cc)]
    return [{"bench": bench, "program": f"{ICLP}/{ICLP_INPUTS[name][0]}", "log": f"{ICLP}/{ICLP_INPUTS[name][1]}"}
            for bench, name in chosen]


def child(program: str, log: str, strategy: str, points: int) -> dict:
    """One run through the runner protocol: the program's rules topology on the local runner, the log's first
    ``points`` time points; a batch is a time point (its duration: the evaluation, output excluded)."""
    from experiments.common import first_log
    from srtopo.io.sources import Timeline
    from srtopo.rules.compile import compile_program
    from srtopo.rules.log import read_records
    from srtopo.rules.parse import parse_file
    from srtopo.rules.points import time_points
    from srtopo.runners import LocalOptions, RunConfig, get_runner

    with open(first_log(log), encoding="utf-8") as handle:
        timeline = Timeline(tuple(tuple(str(a) for a in atoms)
                                  for _t, _s, atoms in time_points(read_records(handle)))[:points])
    t0 = time.perf_counter()
    topology = compile_program(parse_file(program), strategy=strategy)
    result = get_runner("local").run(topology, [timeline], RunConfig(options=LocalOptions(strategy=strategy)))
    latencies = [b.seconds for b in result.batches]
    return {"strategy": strategy, "setup_s": time.perf_counter() - t0 - sum(latencies), "points": len(latencies),
            "latencies_s": latencies, "input_atoms": result.counters.records,
            "output_atoms": sum(len(m.atoms) for m in result.models), "peak_rss_mb": peak_rss_mb(),
            "solves": sum(s.solves for s in result.counters.stages),
            "groundings": sum(s.groundings for s in result.counters.stages)}


def summarise(run: dict) -> dict:
    lat, total = run["latencies_s"], sum(run["latencies_s"])
    return {"median_ms": 1000 * statistics.median(lat), "p95_ms": 1000 * percentile(lat, 0.95),
            "throughput_atoms_s": run["input_atoms"] / total if total else 0.0}


def main(argv=None) -> int:
    args = arguments(
        __doc__, pv=("30x30", "Photo-voltaic grids, e.g. 20x20,30x30"), hj=("500:20,500:2", "Heavy Join n:w pairs"),
        cc=("500", "Content Caching events per time point"), points=(60, "time points per run (logs have 30-60)"),
        strategies="restart,incremental", reps=(3, "alternating rounds per strategy (best median counts)"),
        out="bench_reasoning.json").parse_args(argv)
    results = []
    for inst in instances(args):
        row = dict(inst)
        strategies = splits(args.strategies)
        # the machine is shared: strategies alternate over --reps rounds and the round with the lowest
        # median counts (all rounds are kept in the JSON)
        for rep in range(args.reps):
            for strategy in (strategies if rep % 2 == 0 else strategies[::-1]):
                run = in_own_process(child, program=inst["program"], log=inst["log"], strategy=strategy,
                                     points=args.points)
                run.update(summarise(run))
                rounds = row.setdefault("rounds", {}).setdefault(strategy, [])
                rounds.append({k: run[k] for k in ("median_ms", "p95_ms", "throughput_atoms_s", "peak_rss_mb")})
                if strategy not in row or run["median_ms"] < row[strategy]["median_ms"]:
                    row[strategy] = run
        if "restart" in row and "incremental" in row:
            row["speedup_restart_over_incremental"] = row["restart"]["median_ms"] / row["incremental"]["median_ms"]
            row["ratio_incremental_over_restart"] = row["incremental"]["median_ms"] / row["restart"]["median_ms"]
        results.append(row)
        _print_row(row, strategies)
    write_json(args.out, {"meta": {"points": args.points, "python": sys.version.split()[0],
                                   "time": time.strftime("%Y-%m-%d %H:%M:%S")}, "results": results})
    print(f"\nwritten {args.out}")
    return 0


def _print_row(row: dict, strategies) -> None:
    for strategy in strategies:
        r = row[strategy]
        print(f"{row['bench']:<28} {strategy:<12} median {r['median_ms']:8.1f} ms  p95 {r['p95_ms']:8.1f} ms  "
              f"{r['throughput_atoms_s']:10.0f} atoms/s  rss {r['peak_rss_mb']:6.0f} MB  setup {r['setup_s']:.2f} s "
              f"({r['points']} points, {r['solves']} solves, {r['groundings']} groundings)")
    if "speedup_restart_over_incremental" in row:
        print(f"{'':<28} incremental/restart = {row['ratio_incremental_over_restart']:.3f} "
              f"(incremental {row['speedup_restart_over_incremental']:.1f}x faster)")
    sys.stdout.flush()


if __name__ == "__main__":
    command(main)
