"""Rule topologies: the local runner against Spark local[1] and local[2], same inputs, one run.

    python -m experiments.bench_rules_spark                       # ICLP2021 subset + a large Heavy Join
    python -m experiments.bench_rules_spark --inputs all --engines local,spark1,spark2

Each input (an ICLP2021 program and log, or a synthetic Heavy Join with thousands of events per time point)
is written as one file per ``--points-per-file`` time points and read by the runner in micro-batches of
``--files-per-batch`` files (Spark: ``maxFilesPerTrigger``), as a replay at full speed. ``hj-selective`` is
the join over a 10-time-point window with a selective comparison: the grounder's join is the work and few atoms
come out, where ``hj-synthetic`` (the paper's program) moves every joined atom to the output. Reported per engine:
total seconds, time points per second, per-batch latency (p50 / p95 of the batches' wall time: a time point's
output appears at most one batch after its input), process memory, and the ratio to the local runner of the same
run. Each Spark configuration runs in its own process (its own session and master). Results:
``results/bench_rules_spark.json`` and a table on stdout.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from experiments.common import (
    arguments, iclp_input, iclp_names, in_own_process, log, models_digest, splits, stats, steady_rate, text_table,
    warm_jvm, write_json)
from srtopo.io.tnt import write_tnt
from srtopo.measure import busy_cpu_seconds, rss_mb

DEFAULT_INPUTS = "cc-500,hj-500-w2,hj-synthetic"
ENGINES = {"local": None, "spark1": "local[1]", "spark2": "local[2]"}
HJ_PROGRAM = "a(X,Y) :- b(X,Z) in [2 sec], c(Z,Y) in [2 sec].\n"
#: the same join over a longer window with a selective comparison: grounding (the join) dominates and few atoms
#: come out, the workload where reasoning rather than moving atoms is the cost
HJ_SELECTIVE = "a(X,Y) :- b(X,Z) in [10 sec], c(Z,Y) in [10 sec], X < Y / 100.\n"
SYNTHETIC = {"hj-synthetic": HJ_PROGRAM, "hj-selective": HJ_SELECTIVE}
#: what ``--inputs all`` measures
INPUTS = ("cc-100", "cc-500", "hj-500-w2", "hj-500-w20", "pv-20x20", *SYNTHETIC)


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
    target = workdir / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if name in SYNTHETIC:
        (target / "p.idlvsr").write_text(SYNTHETIC[name], encoding="utf-8")
        lines = synthetic_heavy_join(args.hj_points, args.hj_events, args.hj_keys)
        program_path = str(target / "p.idlvsr")
    else:
        program_path, lines = iclp_input(name)
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
        runner, sources, config = LocalRunner(), [AtomLog(os.path.join(folder, "all.log"))], RunConfig(lateness=0)
    else:
        from srtopo.runners.spark.session import get_session
        runner = SparkRunner(get_session(master=ENGINES[engine], shuffle_partitions=partitions, collector="latency"))
        sources = [AtomLog(os.path.join(folder, "in"), files_per_batch=files_per_batch)]
        config = RunConfig(lateness=0, options=SparkOptions(partitions=partitions))
        warm_jvm(runner, topology, sources, config)         # the JVM and the Python workers warmed on the input
    started, busy = time.perf_counter(), busy_cpu_seconds()
    result = runner.run(topology, sources, config)
    seconds = time.perf_counter() - started
    memory = rss_mb() if engine == "local" else sum(v for v in result.memory_mb.values() if v)
    cores = (busy_cpu_seconds() - busy) / seconds if busy is not None and seconds else None
    models = [m.to_dict() for m in result.models]
    # the rate a running query sustains: time points per second of its micro-batches after the first (which also
    # finds each source's time point 0); the local runner's whole run is its steady state
    steady_tps = steady_rate(result.batches[1:], lambda b: b.outputs, skip=0) if engine != "local" else None
    steady_tps = steady_tps or (len(models) / seconds if seconds else None)
    return {"engine": engine, "seconds": round(seconds, 3), "time_points": len(models),
            "tps": round(len(models) / seconds, 3) if seconds else None,
            "steady_tps": round(steady_tps, 3) if steady_tps else None,
            "atoms_in": result.counters.records, "atoms_out": sum(len(m["atoms"]) for m in models),
            **stats([b.seconds for b in result.batches], "latency_{}_s", digits=4),
            "batches": len(result.batches), "memory_mb": round(memory, 1),
            # cores kept busy on average (machine-wide, so on a quiet machine): local[1]'s JVM threads and its
            # Python worker overlap, so one task slot uses more than one core
            "cores_busy": round(cores, 2) if cores is not None else None,
            "digest": models_digest(models)}


COLUMNS = ["input", "engine", "tps", "tps_vs_local", "steady_tps", "steady_vs_local", "latency_p50_s",
           "latency_p95_s", "memory_mb", "cores_busy", "same_models_as_local"]


def main(argv=None) -> int:
    parser = arguments(
        __doc__, inputs=(DEFAULT_INPUTS, "comma-separated ICLP2021 inputs and " + ", ".join(SYNTHETIC) + ", or all: "
                                + ", ".join(INPUTS)),
        engines=("local,spark1,spark2", ", ".join(ENGINES)),
        points_per_file=(5, "time points per stream file"),
        files_per_batch=(1, "stream files per micro-batch (Spark parses the files of a batch in parallel)"),
        partitions=2, hj_points=20, hj_events=4000, hj_keys=4000, out="bench_rules_spark.json")
    args = parser.parse_args(argv)
    names = iclp_names(",".join(INPUTS) if args.inputs == "all" else args.inputs, parser, extra=SYNTHETIC)
    workdir = Path(tempfile.mkdtemp(prefix="srtopo-bench-rules-"))
    rows = []
    try:
        for name in names:
            program, folder = prepare(name, workdir, args.points_per_file, args)
            for engine in splits(args.engines):
                rows.append(dict(in_own_process(run_one, engine=engine, program=program, folder=folder,
                                                partitions=args.partitions, files_per_batch=args.files_per_batch),
                                 input=name))
                log(json.dumps(rows[-1]))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for r in rows:
        base = next((b for b in rows if b["input"] == r["input"] and b["engine"] == "local"), None)
        r["tps_vs_local"] = round(r["tps"] / base["tps"], 3) if base and base["tps"] else None
        r["steady_vs_local"] = round(r["steady_tps"] / base["tps"], 3) if base and base["tps"] else None
        r["tps_per_core"] = round(r["tps"] / r["cores_busy"], 3) if r.get("cores_busy") else None
        r["same_models_as_local"] = base is None or r["digest"] == base["digest"]
    write_json(args.out, {"args": vars(args), "rows": rows})
    print(text_table(COLUMNS, [[r[c] for c in COLUMNS] for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
