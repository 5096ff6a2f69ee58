"""Benchmark rule topologies (I-DLV-sr programs) on the ICLP 2021 inputs: restart vs incremental, side by side.

For each instance and strategy a child process (so peak RSS is per run) compiles the program and runs it on
the local runner through the runner protocol, time point by time point, and records the latency of each time
point (window operators + clingo + reading the model; output serialisation excluded). Reports median / p95 latency, throughput (input atoms per
second of step time), peak RSS, and the incremental/restart ratio of median latencies measured in this run.

    .venv/bin/python -m experiments.bench_reasoning            # defaults: a few minutes
    .venv/bin/python -m experiments.bench_reasoning --pv 20x20,30x30 --hj 500:20 --cc 500 --points 60
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from srtopo.measure import percentile

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "idlvsr" / "ICLP2021-Experiments"

PV = {"20x20": "G20x20S15n11970", "22x22": "G22x22S15n17532", "24x24": "G24x24S15n24840",
      "26x26": "G26x26S15n34222", "28x28": "G28x28S15n46040", "30x30": "G30x30S15n60682"}


def instances(args) -> list[dict]:
    out = []
    for size in filter(None, args.pv.split(",")):
        name = PV[size]
        base = DATA / "Photo-voltaicSystem" / "I-DLV-sr" / name
        log = next((base / "Log").glob("*.log"))
        out.append({"bench": f"PV {size}", "program": str(base / "Program" / f"{name}.idlvsr"), "log": str(log)})
    for spec in filter(None, args.hj.split(",")):
        n, w = spec.split(":")
        base = DATA / "HeavyJoin" / "I-DLV-sr" / n
        out.append({"bench": f"HeavyJoin n={n} w={w}", "program": str(base / "Program" / f"encoding_w{w}.idlvsr"),
                    "log": str(next((base / "Log").glob("*.log")))})
    for n in filter(None, args.cc.split(",")):
        base = DATA / "ContentCaching" / "events_variation_test" / "I-DLV-sr" / n
        out.append({"bench": f"ContentCaching n={n} w=5", "program": str(base / "Program" / "cat_w05.idlvsr"),
                    "log": str(next((base / "Log").glob("*.log")))})
    return out


def child(program: str, log: str, strategy: str, points: int) -> dict:
    """One run through the runner protocol: the program's rules topology on the local runner, the log's first
    ``points`` time points; a batch is a time point (its duration: the evaluation, output excluded)."""
    from srtopo.io.sources import Timeline
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    from srtopo.rules.log import read_records
    from srtopo.rules.points import time_points
    from srtopo.runners import LocalOptions, RunConfig, get_runner

    with open(log, encoding="utf-8") as handle:
        timeline = Timeline(tuple(tuple(str(a) for a in atoms)
                                  for _t, _s, atoms in time_points(read_records(handle)))[:points])
    t0 = time.perf_counter()
    topology = compile_program(parse_file(program), strategy=strategy)
    result = get_runner("local").run(topology, [timeline], RunConfig(options=LocalOptions(strategy=strategy)))
    latencies = [b.seconds for b in result.batches]
    return {"strategy": strategy, "setup_s": time.perf_counter() - t0 - sum(latencies), "points": len(latencies),
            "latencies_s": latencies, "input_atoms": result.counters.records,
            "output_atoms": sum(len(m.atoms) for m in result.models),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "solves": sum(s.solves for s in result.counters.stages),
            "groundings": sum(s.groundings for s in result.counters.stages)}


def summarise(run: dict) -> dict:
    lat = sorted(run["latencies_s"])
    p95 = percentile(lat, 0.95)
    total = sum(lat)
    return {"median_ms": 1000 * statistics.median(lat), "p95_ms": 1000 * p95,
            "throughput_atoms_s": run["input_atoms"] / total if total else 0.0}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pv", default="30x30", help="Photo-voltaic grids, e.g. 20x20,30x30")
    parser.add_argument("--hj", default="500:20,500:2", help="Heavy Join n:w pairs")
    parser.add_argument("--cc", default="500", help="Content Caching events per time point")
    parser.add_argument("--points", type=int, default=60, help="time points per run (logs have 30-60)")
    parser.add_argument("--strategies", default="restart,incremental")
    parser.add_argument("--reps", type=int, default=3, help="alternating rounds per strategy (best median counts)")
    parser.add_argument("--out", default=str(ROOT / "experiments" / "results" / "bench_reasoning.json"))
    parser.add_argument("--child", nargs=4, metavar=("PROGRAM", "LOG", "STRATEGY", "POINTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.child[2], int(args.child[3]))))
        return 0
    if not DATA.is_dir():
        print(f"benchmark data not found: {DATA}", file=sys.stderr)
        return 1
    results = []
    for inst in instances(args):
        row = dict(inst)
        strategies = args.strategies.split(",")
        # the machine is shared: strategies alternate over --reps rounds and the round with the lowest
        # median counts (all rounds are kept in the JSON)
        for rep in range(args.reps):
            for strategy in (strategies if rep % 2 == 0 else strategies[::-1]):
                proc = subprocess.run([sys.executable, "-m", "experiments.bench_reasoning", "--child",
                                       inst["program"], inst["log"],
                                       strategy, str(args.points)], capture_output=True, text=True, check=False,
                                      cwd=ROOT)
                if proc.returncode != 0:
                    print(proc.stderr, file=sys.stderr)
                    raise SystemExit(f"{inst['bench']} / {strategy} failed")
                run = json.loads(proc.stdout)
                run.update(summarise(run))
                rounds = row.setdefault("rounds", {}).setdefault(strategy, [])
                rounds.append({k: run[k] for k in ("median_ms", "p95_ms", "throughput_atoms_s", "peak_rss_mb")})
                if strategy not in row or run["median_ms"] < row[strategy]["median_ms"]:
                    row[strategy] = run
        if "restart" in row and "incremental" in row:
            row["speedup_restart_over_incremental"] = row["restart"]["median_ms"] / row["incremental"]["median_ms"]
            row["ratio_incremental_over_restart"] = row["incremental"]["median_ms"] / row["restart"]["median_ms"]
        results.append(row)
        _print_row(row, args.strategies.split(","))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"points": args.points, "python": sys.version.split()[0], "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    out.write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    print(f"\nwritten {out}")
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
    sys.exit(main())
