"""Rule topologies (I-DLV-sr programs) on the ICLP2021 inputs: ``python -m experiments.bench_rules
[strategies|spark|check|parts] [flags]`` (``WORKLOAD --help``: its flags). experiments/README.md, "What each
benchmark measures", says what each workload measures and how."""
from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from unittest.mock import patch

from experiments.common import (
    ICLP, ICLP_INPUTS, TimedSink, arguments, command, first_log, iclp_input, iclp_names, in_own_process, log,
    models_digest, peak_rss_mb, percentile, progress, ratio, splits, stats, steady_rate, text_table, timed, warm_jvm,
    workloads, write_json)
from experiments.replay import Sender
from srtopo.io.sources import AtomLog, Timeline
from srtopo.io.tnt import write_tnt
from srtopo.measure import busy_cpu_seconds, rss_mb
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_file
from srtopo.runners import LocalOptions, LocalRunner, RunConfig, SparkOptions, SparkRunner, get_runner


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
    from srtopo.rules.log import read_records
    from srtopo.rules.points import time_points

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


def strategies(argv=None) -> int:
    """The default workload: restart vs incremental on the local runner, each run in a process of its own."""
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
        log(json.dumps({k: row[k] for k in ("bench", "ratio_incremental_over_restart") if k in row}))
    write_json(args.out, {"meta": {"points": args.points, "python": sys.version.split()[0],
                                   "time": time.strftime("%Y-%m-%d %H:%M:%S")}, "results": results})
    columns = ["strategy", "median_ms", "p95_ms", "throughput_atoms_s", "peak_rss_mb", "setup_s", "points", "solves",
               "groundings"]
    print(text_table(["bench"] + columns + ["incremental / restart"],
                     [[row["bench"]] + [row[s][c] for c in columns] + [row.get("ratio_incremental_over_restart")]
                      for row in results for s in splits(args.strategies)]))
    return 0


# --- the local runner against Spark local[1] and local[2] ----------------------------------------------------------

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


def spark(argv=None) -> int:
    """The local runner against Spark local[1] and local[2], replayed at full speed."""
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
        r["tps_vs_local"] = ratio(r["tps"], base["tps"]) if base else None
        r["steady_vs_local"] = ratio(r["steady_tps"], base["tps"]) if base else None
        r["tps_per_core"] = ratio(r["tps"], r.get("cores_busy"))
        r["same_models_as_local"] = base is None or r["digest"] == base["digest"]
    write_json(args.out, {"args": vars(args), "rows": rows})
    print(text_table(COLUMNS, [[r[c] for c in COLUMNS] for r in rows]))
    return 0


# --- check: every ICLP2021 input, Spark against the local runner ---------------------------------------------------

def check(argv=None) -> int:
    """Every ICLP2021 input on Spark against the local runner: the models of every time point must be equal."""
    parser = arguments(__doc__, inputs=("all", "comma-separated: " + ", ".join(ICLP_INPUTS) + " or all"),
                       master="local[2]", partitions=2, out="check_rules_iclp.json")
    args = parser.parse_args(argv)
    from srtopo.runners.spark.session import get_session
    names = iclp_names(args.inputs, parser)
    runner = SparkRunner(get_session(master=args.master, shuffle_partitions=args.partitions))
    rows, failed = [], []
    for name in progress(names, desc="ICLP2021 inputs"):
        program, stream = (f"{ICLP}/{path}" for path in ICLP_INPUTS[name])
        topology = compile_program(parse_file(program))
        source = AtomLog(first_log(stream))
        local, local_s = timed(LocalRunner().run, topology, [source], RunConfig(lateness=0))
        spark, spark_s = timed(runner.run, topology, [source],
                               RunConfig(lateness=0, options=SparkOptions(partitions=args.partitions)))
        local, spark = [m.to_dict() for m in local.models], [m.to_dict() for m in spark.models]
        rows.append({"input": name, "time_points": len(local), "atoms_out": sum(len(m["atoms"]) for m in local),
                     "keyed_stages": sum(1 for s in topology.stages if s.key.keyed), "stages": len(topology.stages),
                     "local_s": round(local_s, 3), "spark_s": round(spark_s, 3), "equal": spark == local,
                     "digest": models_digest(local)})
        if spark != local:
            failed.append(name)
            log(f"{name}: Spark's models differ from the local runner's")
    write_json(args.out, {"master": args.master, "partitions": args.partitions, "rows": rows})
    columns = ["input", "time_points", "atoms_out", "local_s", "spark_s", "equal"]
    print(text_table(columns, [[r[c] for c in columns] for r in rows]))
    print(f"{len(rows) - len(failed)} of {len(rows)} inputs equal")
    return 1 if failed else 0


# --- parts: where a rule micro-batch's time goes -------------------------------------------------------------------

def _median(values):
    return round(1000 * percentile(sorted(values), 0.5), 1) if values else None


def _ts(text: str) -> float:
    return datetime.strptime(text.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def floor(spark, lines: int, period: float) -> dict:
    """Latency of a line through a socket stream and foreachBatch: alone, with one shuffle, with a Python pass."""
    import pyarrow as pa

    def python_pass(batches):
        for batch in batches:
            yield pa.RecordBatch.from_arrays([pa.array([len(v) for v in batch.column(0).to_pylist()])],
                                             names=["n"])
    shapes = {"foreachBatch": lambda df: df.collect(),
              "one shuffle": lambda df: df.repartition(2).collect(),
              "mapInArrow + shuffle": lambda df: df.mapInArrow(python_pass, "n BIGINT").repartition(2).collect()}
    out = {}
    for name, action in shapes.items():
        sender = Sender()
        done: list[float] = []

        def on_batch(df, _batch_id, action=action):
            action(df)
            done.append(time.perf_counter())
        query = spark.readStream.format("socket").option("host", "127.0.0.1").option("port", sender.port).load() \
            .writeStream.foreachBatch(on_batch).start()
        sender.connected.wait(60)
        sent: dict = {}
        latencies = []
        for i in range(lines):
            before = len(done)
            sender.send([f"line {i}"], 0, sent, first_index=i)
            deadline = time.monotonic() + 30
            while len(done) == before and time.monotonic() < deadline:
                time.sleep(0.002)
            if len(done) > before:
                latencies.append(done[-1] - sent[i])
            time.sleep(max(0.0, period - (time.perf_counter() - sent[i])))
        query.stop()
        sender.close()
        measured = latencies[len(latencies) // 3:]        # the first third warms the JVM
        out[name] = stats(measured, "{}_ms", scale=1000, digits=1)
    return out


def rule_parts(spark, name: str, lines: int, period: float, warmup: int, partitions: int,
               driver_lines: int = 0) -> dict:
    """One input at one period through the rules job, timed part by part (see the module doc); ``driver_lines``
    as ``SparkOptions.driver_lines`` (0: the executors' plan)."""
    from pyspark.sql.readwriter import DataFrameWriter

    import srtopo.runners.spark.rules as rules_job
    import srtopo.rules.batch as rules_driver
    import srtopo.runners.spark.streaming as streaming
    program, log = iclp_input(name)
    topology = compile_program(parse_file(program))
    spans: dict[str, list] = {}         # label -> (start, end) of each call

    def timed(owner, attr: str, label: str, clock=time.perf_counter):
        original = getattr(owner, attr)

        def wrapper(*args, **kwargs):
            start = clock()
            try:
                return original(*args, **kwargs)
            finally:
                spans.setdefault(label, []).append((start, clock()))
        return patch.object(owner, attr, wrapper)
    runner = SparkRunner(spark)
    with ExitStack() as patched:
        for owner, attr, label in ((streaming.MicroBatchJob, "_run_batch", "batch function"),
                                   (rules_job.RulesJob, "_write", "build and write"),
                                   (rules_job, "collect_small", "collect"),
                                   (rules_driver.DriverPasses, "run", "driver passes and write"),
                                   (rules_driver.DriverPasses, "_write", "driver write"),
                                   (streaming.BatchStore, "complete", "store meta"),
                                   (streaming.BatchSinks, "write", "sink")):
            patched.enter_context(timed(owner, attr, label))
        # Spark's jobs are matched to the writes by their times on the clock of its UI
        patched.enter_context(timed(DataFrameWriter, "json", "json write", time.time))

        def run(lines_, period_):
            sink = TimedSink(expected=len(lines_))
            sent: dict = {}
            sender = Sender()
            handle = runner.start(topology, [AtomLog(f"tcp://127.0.0.1:{sender.port}", "log")],
                                  RunConfig(lateness=0, options=SparkOptions(partitions=partitions, once=False,
                                                                           driver_lines=driver_lines)), sink)
            sender.connected.wait(120)
            sender.send(lines_, period_, sent)
            sink.done.wait(timeout=60 + 20 * len(lines_) * max(period_, 0.2))
            progress = list(handle.job.query.recentProgress)
            handle.stop()
            sender.close()
            return [sink.seen[t] - sent[t] for t in sorted(sent) if t in sink.seen], progress
        run(log[:warmup], 0.5)
        spans.clear()
        job_from = time.time()
        latencies, progress = run(log[:lines], period)      # a new query: its time points start at 0 again
    timings = {label: [end - start for start, end in calls] for label, calls in spans.items()}
    writes = spans.get("json write", [])
    triggers = [p["durationMs"] for p in progress if p.get("numInputRows") and "addBatch" in p["durationMs"]]
    app, url = spark.sparkContext.applicationId, spark.sparkContext.uiWebUrl
    jobs = json.load(urllib.request.urlopen(f"{url}/api/v1/applications/{app}/jobs"))
    stages = {s["stageId"]: s for s in json.load(urllib.request.urlopen(f"{url}/api/v1/applications/{app}/stages"))}
    jobs = [j for j in jobs if j.get("completionTime") and _ts(j["submissionTime"]) >= job_from]
    before, after, job_wall, per_stage = [], [], [], {}
    for start, end in writes:
        inside = [j for j in jobs if _ts(j["submissionTime"]) >= start and _ts(j["completionTime"]) <= end + 0.002]
        if len(inside) != 1:
            continue
        j = inside[0]
        before.append(_ts(j["submissionTime"]) - start)
        after.append(end - _ts(j["completionTime"]))
        job_wall.append(_ts(j["completionTime"]) - _ts(j["submissionTime"]))
        for k, sid in enumerate(sorted(j["stageIds"])):
            s = stages.get(sid)
            if s and s.get("completionTime"):
                per_stage.setdefault(k, []).append((_ts(s["completionTime"]) - _ts(s["submissionTime"]),
                                                    s["numTasks"]))
    batch_fn = timings.get("batch function", [])
    build_write = timings.get("build and write", [])
    write_total = timings.get("json write", [])
    driver = {}
    if driver_lines:
        passes = timings.get("driver passes and write", [])
        driver = {"collect_ms": _median(timings.get("collect", [])),
                  "driver_passes_ms": (round(_median(passes) - _median(timings.get("driver write", [])), 1)
                                       if passes else None),
                  "entry_write_ms": _median(timings.get("driver write", [])),
                  "store_meta_ms": _median(timings.get("store meta", [])),
                  "sink_ms": _median(timings.get("sink", []))}
    return {
        "input": name, "period_s": period, "time_points": len(latencies), "driver_lines": driver_lines, **driver,
        **stats(latencies, "latency_{}_ms", scale=1000, digits=1),
        "trigger_ms": {key: _median([t.get(key, 0) / 1000 for t in triggers])
                       for key in ("triggerExecution", "walCommit", "addBatch", "commitOffsets", "latestOffset",
                                   "queryPlanning")},
        "batch_function_ms": _median(batch_fn),
        "driver_build_ms": (round(_median(build_write) - _median(write_total), 1)
                            if build_write and write_total else None),
        "write_planning_ms": _median(before), "job_ms": _median(job_wall), "after_job_ms": _median(after),
        "stages": {str(k): {"wall_ms": _median([w for w, _ in v]), "tasks": v[0][1]} for k, v in per_stage.items()},
        "batch_rest_ms": round(_median(batch_fn) - _median(build_write), 1) if batch_fn and build_write else None,
    }


def parts(argv=None) -> int:
    """Where a rule micro-batch's time goes on Spark, next to Spark's own floor."""
    args = arguments(__doc__, inputs="cc-500", lines=(40, "measured time points per input"), period=1.0,
                     warmup=(60, "time points of the warm-up query (the log's first)"), partitions=2,
                     master="local[2]", no_floor=False, out=None,
                     driver_lines=("0,2000", "comma-separated --driver-lines values to measure (0: the executors' "
                                             "plan)")).parse_args(argv)
    from srtopo.runners.spark.session import get_session
    spark = get_session(master=args.master, shuffle_partitions=args.partitions, collector="latency", ui=True)
    result = {"master": args.master}
    if not args.no_floor:
        result["floor_ms"] = floor(spark, 30, args.period)
        log(json.dumps({"floor_ms": result["floor_ms"]}))
    result["inputs"] = []
    for name in splits(args.inputs):
        for driver_lines in splits(args.driver_lines, int):
            result["inputs"].append(rule_parts(spark, name, args.lines, args.period, args.warmup, args.partitions,
                                               driver_lines))
            log(json.dumps(result["inputs"][-1]))
    if args.out:
        write_json(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


def main(argv=None) -> int:
    return workloads({"strategies": strategies, "spark": spark, "check": check, "parts": parts}, argv)


if __name__ == "__main__":
    command(main)
