"""A keyed Streamlog program on the local runner, Spark local[1] and Spark local[2], in one run: per-sensor
moving sums over a stream of readings from thousands of sensors, evaluated on Spark in key partitions (one task
per partition and micro-batch, ``runners/spark/streamlog.py``).

Every sensor reads a value at every timestamp; the program keeps, per sensor, the sum of its last ``--window``
readings and flags the sensors whose sum is high or whose reading is a new maximum of the window, so each
timestamp costs grounding ``sensors x window`` readings. The stream is a directory of files of ``--ts-per-file``
timestamps; Spark reads ``--files-per-batch`` files per micro-batch. Each configuration runs in its own child
process (a SparkSession's master is fixed for its process). All three must write the same models, or the run
fails.

Reported per configuration: throughput (timestamps/s and facts/s, over the whole run and over the batches after
the first), batch latency p50/p95, resident memory; and the ratios local[2]/local[1] and Spark/local, with the
machine's load average when the run started and ended. Results: experiments/results/bench_streamlog_keyed.json.

    python -m experiments.bench_streamlog_keyed --sensors 3000 --timestamps 300
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from experiments.common import RESULTS, ROOT, ExperimentError, log

CONFIGS = ("local", "local[1]", "local[2]")


def program_text(window: int, threshold: int) -> str:
    return (f"total(T,S,A) :- reading(T,S,_), A = #sum{{ V,T0 : reading(T0,S,V), T - {window} < T0, T0 <= T }}.\n"
            f"high(T,S,A) :- total(T,S,A), A > {threshold}.\n"
            f"peak(T,S,V) :- reading(T,S,V), V > 90, "
            f"#count{{ T0 : reading(T0,S,V0), T - {window} < T0, T0 < T, V0 >= V }} = 0.\n"
            "#show high/3.\n#show peak/3.\n")


def write_stream(folder: Path, sensors: int, timestamps: int, per_file: int, seed: int) -> int:
    """A reading per sensor and timestamp, ``per_file`` timestamps a file (listed in order); returns the files."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    files = 0
    for start in range(1, timestamps + 1, per_file):
        path = folder / f"part-{files:05d}.txt"
        path.write_text("".join(f"reading({t},s{s},{rng.randint(0, 99)}).\n"
                                for t in range(start, min(start + per_file, timestamps + 1))
                                for s in range(sensors)), encoding="utf-8")
        os.utime(path, (1_600_000_000 + files, 1_600_000_000 + files))
        files += 1
    return files


def child(args) -> int:
    """One configuration: the run's figures and a digest of its models, as JSON on stdout."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from srtopo.io.sources import FactLines
    from srtopo.measure import percentile
    from srtopo.runners import RunConfig, SparkOptions, get_runner
    from srtopo.streamlog import parse_program
    from srtopo.streamlog.compile import compile_program

    work = Path(args.work)
    topology = compile_program(parse_program(program_text(args.window, args.threshold), "sensors.sl"),
                               retain=args.window)
    facts = args.sensors * args.timestamps
    if args.child == "local":
        result = get_runner("local").run(topology, [FactLines(str(work / "in"))], RunConfig())
        row = {}
    else:
        result = get_runner("spark").run(
            topology, [FactLines(str(work / "in"), files_per_batch=args.files_per_batch)],
            RunConfig(checkpoint=str(work / f"ck-{args.child}"),
                      options=SparkOptions(master=args.child, once=True)))
        batches = [b for b in result.batches if b.batch != "final"]
        steady = batches[1:] or batches
        steady_s = sum(b.seconds for b in steady)
        steady_ts = sum(b.detail.get("extra", {}).get("timestamps", 0) for b in steady)
        row = {"batches": len(batches), "tasks": result.counters.stages[0].tasks,
               "steady_timestamps_per_s": round(steady_ts / steady_s, 1) if steady_s else None,
               "steady_facts_per_s": round(steady_ts * args.sensors / steady_s) if steady_s else None,
               "batch_p50_s": round(percentile([b.seconds for b in batches], 0.5), 3),
               "batch_p95_s": round(percentile([b.seconds for b in batches], 0.95), 3)}
    models = [(m.time, list(m.atoms)) for m in result.models]
    row.update({"seconds": round(result.seconds, 3), "timestamps_per_s": round(args.timestamps / result.seconds, 1),
                "facts_per_s": round(facts / result.seconds), "memory_mb": result.memory_mb,
                "models": len(models), "atoms": sum(len(a) for _t, a in models),
                "digest": hashlib.sha256(json.dumps(models).encode()).hexdigest()})
    print(json.dumps(row))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sensors", type=int, default=3000)
    parser.add_argument("--timestamps", type=int, default=300)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--threshold", type=int, default=700)
    parser.add_argument("--ts-per-file", type=int, default=5)
    parser.add_argument("--files-per-batch", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(RESULTS, "bench_streamlog_keyed.json"))
    parser.add_argument("--child", choices=CONFIGS, help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    work = Path(tempfile.mkdtemp(prefix="srtopo-bench-streamlog-keyed-"))
    files = write_stream(work / "in", args.sensors, args.timestamps, args.ts_per_file, args.seed)
    load_before = os.getloadavg()
    started = time.perf_counter()
    rows = {}
    for config in CONFIGS:
        command = [sys.executable, "-m", "experiments.bench_streamlog_keyed", "--child", config, "--work", str(work)]
        command += [f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items()
                    if k not in ("out", "child", "work")]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            raise ExperimentError(f"{config} failed:\n{done.stderr[-3000:]}")
        rows[config] = json.loads(done.stdout.strip().splitlines()[-1])
        rows[config]["load_after"] = round(os.getloadavg()[0], 2)
        log(f"{config}: {rows[config]['seconds']} s")
    if len({r["digest"] for r in rows.values()}) != 1:
        raise ExperimentError("the configurations wrote different models: " +
                              ", ".join(f"{k} {r['models']} models {r['digest'][:12]}" for k, r in rows.items()))

    def ratio(a, b, field):
        return round(rows[a][field] / rows[b][field], 3) if rows[a].get(field) and rows[b].get(field) else None
    ratios = {"local2_over_local1": ratio("local[2]", "local[1]", "timestamps_per_s"),
              "local2_over_local1_steady": ratio("local[2]", "local[1]", "steady_timestamps_per_s"),
              "local1_over_local": ratio("local[1]", "local", "timestamps_per_s"),
              "local2_over_local": ratio("local[2]", "local", "timestamps_per_s")}
    report = {"date": time.strftime("%Y-%m-%d %H:%M"), "params": {k: v for k, v in vars(args).items()
                                                                  if k not in ("child", "work")},
              "files": files, "facts": args.sensors * args.timestamps, "cpus": os.cpu_count(),
              "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
              "rows": rows, "ratios": ratios, "same_models": True, "wall_s": round(time.perf_counter() - started, 1)}
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"{'config':9} {'ts/s':>7} {'facts/s':>9} {'steady ts/s':>12} {'p50 s':>7} {'p95 s':>7} {'tasks':>5} "
          f"{'load':>5}  memory MB")
    for name, r in rows.items():
        print(f"{name:9} {r['timestamps_per_s']:7} {r['facts_per_s']:9} {str(r.get('steady_timestamps_per_s', '-')):>12} "
              f"{str(r.get('batch_p50_s', '-')):>7} {str(r.get('batch_p95_s', '-')):>7} {str(r.get('tasks', '-')):>5} "
              f"{r['load_after']:5}  {json.dumps(r['memory_mb'])}")
    log(f"ratios {ratios}; load {report['load_before'][0]} before, {report['load_after'][0]} after; same models; "
        f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
