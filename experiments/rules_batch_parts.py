"""Where a rule micro-batch's time goes on Spark, next to Spark's own floor on this machine.

    python -m experiments.rules_batch_parts                      # floor, then cc-500 at 1 time point/s
    python -m experiments.rules_batch_parts --inputs cc-500,pv-20x20 --lines 40

**The floor**: a socket stream whose ``foreachBatch`` only collects its lines, then the same with one shuffle
(``repartition(2)``), then with one Python pass over Arrow batches (``mapInArrow``) before the shuffle: the time
from a line leaving the sender to the batch that read it returning (one line per second, warm JVM).

**The parts of a rule micro-batch** (the Spark runner ``srtopo reason --engine spark`` uses, in this process, fed
over a socket, one time point per period, after a warm-up query over the log's first time points; the measured
query is a new one from the log's start): Spark's trigger (``durationMs`` of the query's progress: the offsets
log entry ``walCommit``, the commit log entry ``commitOffsets``, the rest), the driver building the batch's DataFrames,
the write's planning (from the write call to its job's submission), the job's stages (Spark's REST interface:
each stage's wall time and task count), what follows the job, the store's meta and the sink. Medians over the
measured batches. Results: one JSON object on stdout (``--out`` writes it too).
"""
from __future__ import annotations

import json
import sys
import time
import urllib.request
from datetime import datetime

from experiments.common import TimedSink, arguments, iclp_input, log, splits, write_json
from experiments.replay import Sender
from srtopo.measure import percentile


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
        out[name] = {"p50_ms": _median(measured), "p95_ms": round(1000 * percentile(sorted(measured), 0.95), 1)}
    return out


def rule_parts(spark, name: str, lines: int, period: float, warmup: int, partitions: int,
               driver_lines: int = 0) -> dict:
    """One input at one period through the rules job, timed part by part (see the module doc); ``driver_lines``
    as ``SparkOptions.driver_lines`` (0: the executors' plan)."""
    from pyspark.sql.readwriter import DataFrameWriter

    import srtopo.runners.spark.rules as rules_job
    import srtopo.rules.batch as rules_driver
    import srtopo.runners.spark.streaming as streaming
    from srtopo.io.sources import AtomLog
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    from srtopo.runners import RunConfig, SparkOptions, SparkRunner
    program, log = iclp_input(name)
    topology = compile_program(parse_file(program))
    timings: dict[str, list] = {}
    writes: list[tuple[float, float]] = []
    patched = []

    def timed(owner, attr, label):
        original = getattr(owner, attr)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timings.setdefault(label, []).append(time.perf_counter() - start)
        setattr(owner, attr, wrapper)
        patched.append((owner, attr, original))
    timed(streaming.MicroBatchJob, "_run_batch", "batch function")
    timed(rules_job.RulesJob, "_write", "build and write")
    timed(rules_job, "collect_small", "collect")
    timed(rules_driver.DriverPasses, "run", "driver passes and write")
    timed(rules_driver.DriverPasses, "_write", "driver write")
    timed(streaming.BatchStore, "complete", "store meta")
    timed(streaming.BatchSinks, "write", "sink")
    original_json = DataFrameWriter.json

    def json_write(self, *args, **kwargs):
        start = time.time()
        try:
            return original_json(self, *args, **kwargs)
        finally:
            writes.append((start, time.time()))
    DataFrameWriter.json = json_write
    runner = SparkRunner(spark)
    try:
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
        for values in timings.values():
            values.clear()
        writes.clear()
        job_from = time.time()
        latencies, progress = run(log[:lines], period)      # a new query: its time points start at 0 again
    finally:
        DataFrameWriter.json = original_json
        for owner, attr, original in patched:
            setattr(owner, attr, original)
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
    write_total = [e - s for s, e in writes]
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
        "latency_p50_ms": _median(latencies),
        "latency_p95_ms": round(1000 * percentile(sorted(latencies), 0.95), 1) if latencies else None,
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


def main(argv=None) -> int:
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


if __name__ == "__main__":
    sys.exit(main())
