"""Rule topologies: the local runner against Spark local[1] and local[2], same inputs, one run.

    python -m experiments.bench_rules_spark                       # ICLP2021 subset + a large Heavy Join
    python -m experiments.bench_rules_spark --inputs all --engines local,spark1,spark2

Each input (an ICLP2021 program and log, or a synthetic Heavy Join with thousands of events per time point)
is written as one file per ``--points-per-file`` time points and read by the runner in micro-batches of
``--files-per-batch`` files (Spark: ``maxFilesPerTrigger``), as a replay at full speed. ``hj-selective`` is
the join over a 10-time-point window with a selective comparison: the grounder's join is the work and few atoms
come out, where ``hj-synthetic`` (the paper's program) moves every joined atom to the output. Reported per engine: total seconds, time
points per second, per-batch latency (p50 / p95 of the batches' wall time: a time point's output appears at
most one batch after its input), process memory, and the ratio to the local runner of the same run. Each Spark
configuration runs in its own process (its own session and master). Results: ``results/bench_rules_spark.json``
and a table on stdout; the plot compares time points per second.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from experiments.common import first_log, models_digest, run_worker
from srtopo.measure import busy_cpu_seconds, percentile, rss_mb

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "idlvsr" / "ICLP2021-Experiments"
INPUTS = {
    "cc-100": ("ContentCaching/events_variation_test/I-DLV-sr/100/Program/cat_w05.idlvsr",
               "ContentCaching/events_variation_test/I-DLV-sr/100/Log/tp60etp100ce1.log"),
    "cc-500": ("ContentCaching/events_variation_test/I-DLV-sr/500/Program/cat_w05.idlvsr",
               "ContentCaching/events_variation_test/I-DLV-sr/500/Log/tp60etp500ce1.log"),
    "hj-500-w2": ("HeavyJoin/I-DLV-sr/500/Program/encoding_w2.idlvsr", "HeavyJoin/I-DLV-sr/500/Log/tp30etp250ce1.log"),
    "hj-500-w20": ("HeavyJoin/I-DLV-sr/500/Program/encoding_w20.idlvsr",
                   "HeavyJoin/I-DLV-sr/500/Log/tp30etp250ce1.log"),
    "pv-20x20": ("Photo-voltaicSystem/I-DLV-sr/G20x20S15n11970/Program/G20x20S15n11970.idlvsr",
                 "Photo-voltaicSystem/I-DLV-sr/G20x20S15n11970/Log"),
    "hj-synthetic": (None, None),
    "hj-selective": (None, None),
}
DEFAULT_INPUTS = "cc-500,hj-500-w2,hj-synthetic"
ENGINES = {"local": None, "spark1": "local[1]", "spark2": "local[2]"}
HJ_PROGRAM = "a(X,Y) :- b(X,Z) in [2 sec], c(Z,Y) in [2 sec].\n"
#: the same join over a longer window with a selective comparison: grounding (the join) dominates and few atoms
#: come out, the workload where reasoning rather than moving atoms is the cost
HJ_SELECTIVE = "a(X,Y) :- b(X,Z) in [10 sec], c(Z,Y) in [10 sec], X < Y / 100.\n"
SYNTHETIC = {"hj-synthetic": HJ_PROGRAM, "hj-selective": HJ_SELECTIVE}


def synthetic_heavy_join(points: int, events: int, keys: int, seed: int = 1) -> list[str]:
    """Heavy Join with ``events`` b and c atoms per time point over ``keys`` join values (keyed by Z)."""
    rng = random.Random(seed)
    lines = []
    for t in range(points):
        atoms = []
        for _ in range(events):
            atoms.append(f"b({rng.randrange(10 * keys)},{rng.randrange(keys)})")
            atoms.append(f"c({rng.randrange(keys)},{rng.randrange(10 * keys)})")
        lines.append(f"{t} " + "; ".join(atoms))
    return lines


def prepare(name: str, workdir: Path, points_per_file: int, args) -> tuple[str, str]:
    """(program file, stream directory) of an input, written under ``workdir``."""
    from srtopo.io.tnt import write_tnt
    program, log = INPUTS[name]
    target = workdir / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if program is None:
        (target / "p.idlvsr").write_text(SYNTHETIC[name], encoding="utf-8")
        lines = synthetic_heavy_join(args.hj_points, args.hj_events, args.hj_keys)
        program_path = str(target / "p.idlvsr")
    else:
        program_path = str(DATA / program)
        lines = Path(first_log(DATA / log)).read_text(encoding="utf-8").splitlines()
    write_tnt(str(target / "in"), lines, per_file=points_per_file)
    (target / "all.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return program_path, str(target)


def run_one(engine: str, program: str, folder: str, partitions: int, files_per_batch: int = 1) -> dict:
    """One engine on one prepared input, in this process."""
    from srtopo.io.sources import AtomLog
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner
    topology = compile_program(parse_file(program))
    if engine == "local":
        started, busy = time.perf_counter(), busy_cpu_seconds()
        result = LocalRunner().run(topology, [AtomLog(os.path.join(folder, "all.log"))], RunConfig(lateness=0))
        seconds = time.perf_counter() - started
        latencies = [b.seconds for b in result.batches]
        memory = rss_mb()
    else:
        from srtopo.runners.spark.session import get_session
        spark = get_session(master=ENGINES[engine], shuffle_partitions=partitions, collector="latency")
        runner = SparkRunner(spark)
        options = SparkOptions(partitions=partitions)
        warm = tempfile.mkdtemp(prefix="srtopo-bench-warm-")    # JVM and Python workers warmed on a small input
        try:
            runner.run(topology, [AtomLog(os.path.join(folder, "in"), files_per_batch=files_per_batch)],
                       RunConfig(lateness=0, checkpoint=warm, options=options))
        finally:
            shutil.rmtree(warm, ignore_errors=True)
        started, busy = time.perf_counter(), busy_cpu_seconds()
        result = runner.run(topology, [AtomLog(os.path.join(folder, "in"), files_per_batch=files_per_batch)],
                            RunConfig(lateness=0, options=options))
        seconds = time.perf_counter() - started
        latencies = [b.seconds for b in result.batches]
        memory = sum(v for v in result.memory_mb.values() if v)
    cores = (busy_cpu_seconds() - busy) / seconds if busy is not None and seconds else None
    models = [m.to_dict() for m in result.models]
    # the rate a running query sustains: time points per second of its micro-batches after the first (which also
    # finds each source's time point 0); the local runner's whole run is its steady state
    steady = result.batches[1:] if engine != "local" else []
    steady_s = sum(b.seconds for b in steady)
    steady_tps = sum(b.outputs for b in steady) / steady_s if steady_s else (len(models) / seconds if seconds else None)
    return {"engine": engine, "seconds": round(seconds, 3), "time_points": len(models),
            "tps": round(len(models) / seconds, 3) if seconds else None,
            "steady_tps": round(steady_tps, 3) if steady_tps else None,
            "atoms_in": result.counters.records, "atoms_out": sum(len(m["atoms"]) for m in models),
            "latency_p50_s": round(percentile(latencies, 0.5), 4) if latencies else None,
            "latency_p95_s": round(percentile(latencies, 0.95), 4) if latencies else None,
            "batches": len(result.batches), "memory_mb": round(memory, 1),
            # cores kept busy on average (machine-wide, so on a quiet machine): local[1]'s JVM threads and its
            # Python worker overlap, so one task slot uses more than one core
            "cores_busy": round(cores, 2) if cores is not None else None,
            "digest": models_digest(models)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", default=DEFAULT_INPUTS, help="comma-separated: " + ", ".join(INPUTS) + " or all")
    parser.add_argument("--engines", default="local,spark1,spark2")
    parser.add_argument("--points-per-file", type=int, default=5, help="time points per stream file")
    parser.add_argument("--files-per-batch", type=int, default=1,
                        help="stream files per micro-batch (Spark parses the files of a batch in parallel)")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--hj-points", type=int, default=20)
    parser.add_argument("--hj-events", type=int, default=4000)
    parser.add_argument("--hj-keys", type=int, default=4000)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_rules_spark.json"))
    parser.add_argument("--worker", nargs=5, metavar=("ENGINE", "PROGRAM", "FOLDER", "PARTITIONS", "FILES"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        engine, program, folder, partitions, files = args.worker
        print(json.dumps(run_one(engine, program, folder, int(partitions), int(files))))
        return 0
    names = list(INPUTS) if args.inputs == "all" else args.inputs.split(",")
    engines = args.engines.split(",")
    workdir = Path(tempfile.mkdtemp(prefix="srtopo-bench-rules-"))
    rows = []
    try:
        for name in names:
            program, folder = prepare(name, workdir, args.points_per_file, args)
            for engine in engines:
                row = run_worker("experiments.bench_rules_spark",
                                 [engine, program, folder, str(args.partitions), str(args.files_per_batch)])
                if row is None:
                    return 1
                row["input"] = name
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for name in names:
        mine = [r for r in rows if r["input"] == name]
        base = next((r for r in mine if r["engine"] == "local"), None)
        for r in mine:
            r["tps_vs_local"] = round(r["tps"] / base["tps"], 3) if base and base["tps"] else None
            r["steady_vs_local"] = round(r["steady_tps"] / base["tps"], 3) if base and base["tps"] else None
            r["tps_per_core"] = round(r["tps"] / r["cores_busy"], 3) if r.get("cores_busy") else None
            r["same_models_as_local"] = base is None or r["digest"] == base["digest"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump({"date": time.strftime("%Y-%m-%d"), "args": {k: v for k, v in vars(args).items() if k != "worker"},
                   "rows": rows}, handle, indent=1)
    print(f"{'input':14} {'engine':7} {'tps':>8} {'x local':>8} {'steady':>8} {'x local':>8} {'p50 s':>7} "
          f"{'p95 s':>7} {'MB':>7} {'cores':>5} same")
    for r in rows:
        print(f"{r['input']:14} {r['engine']:7} {r['tps']:8.2f} {r['tps_vs_local'] or 0:8.2f} "
              f"{r['steady_tps'] or 0:8.2f} {r['steady_vs_local'] or 0:8.2f} "
              f"{r['latency_p50_s'] or 0:7.3f} {r['latency_p95_s'] or 0:7.3f} {r['memory_mb']:7.0f} {r['cores_busy'] or 0:5.2f} "
              f"{r['same_models_as_local']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
