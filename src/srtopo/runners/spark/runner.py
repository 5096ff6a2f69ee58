"""The Spark runner: a topology as a Structured Streaming query (``local[*]`` by default, or any master URL).

    from srtopo.io.sources import TntFiles
    from srtopo.runners import RunConfig, get_runner
    from srtopo.runners.spark.runner import SparkOptions
    result = get_runner("spark").run(topology, [TntFiles("stream/")],
                                     RunConfig(window=30, lateness=5, options=SparkOptions(physical_plan="fused")))

Consistency topologies run as one SQL statement per micro-batch (``spark.consistency``), exactly-once across
restarts given a checkpoint directory. ``start`` returns a handle on a query that keeps running (follow a
directory, read a socket); ``run`` processes what the sources hold now (``once``) or runs until stopped.
Records held in memory (``Tuples``, ``Lines``) are written under the checkpoint as files, one per batch.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from typing import ClassVar, Sequence
from urllib.parse import unquote, urlparse

from srtopo import interrupt
from srtopo.errors import TopologyError, UnsupportedByRunner
from srtopo.io.sinks import MemorySink
from srtopo.io.paths import config_outputs, refuse_clashes, source_paths
from srtopo.io.sources import Lines, TntFiles, TupleFiles, Tuples, require_path
from srtopo.io.tnt import write_tnt
from srtopo.io.tsv import write_tuples
from srtopo.ir.records import RejectedRecord, json_line
from srtopo.ir.topology import Topology
from srtopo.kinds import kind_of
from srtopo.measure import rss_mb
from srtopo.ir.run import BatchMetrics, RunConfig, RunCounters, RunResult
from srtopo.runners.protocol import natural, positive
from srtopo.runners.spark.lease import query_stopped, record_driver, release_driver, wait_for_earlier_driver
from srtopo.runners.spark.sinks import row_field
from srtopo.runners.spark.streaming import STOP_GRACE

#: a rules micro-batch of at most this many lines (and bytes of text) is evaluated on the driver by default
DRIVER_LINES = 2000
#: a consistency micro-batch of at most this many tuples closes its windows on the driver, by physical plan and
#: master. Fused: on a local master the driver's close measured faster than the Spark write at every batch size
#: up to 2M tuples (local[2]); on a cluster the executors' write scales with the workers and the driver does not.
#: Columnar: the executors' tasks read in parallel, and win over the driver once a batch pays for a Spark job
#: (docs/spark.md, "The columnar plan")
DRIVER_TUPLES = {"columnar": {"local": 1_000_000, "cluster": 250_000},
                 "fused": {"local": 2_000_000, "cluster": 250_000}}
DRIVER_BYTES = 1 << 20
#: the physical plans of consistency topologies (``runners.spark.consistency``)
PHYSICAL_PLANS = ("columnar", "fused", "staged")


@dataclass(frozen=True)
class SparkOptions:
    """master: a Spark master URL (None: the active session, else ``local[*]``); physical_plan: ``columnar``
    (files read and windows closed in Python over Arrow, in executor tasks), ``fused`` (every stage in one keyed
    pass, the stages sharing the shuffle partitions) or ``staged`` (one keyed exchange per
    stage, each with its parallelism); once: process what the sources hold now and stop (else run until
    stopped); trigger: micro-batch interval in seconds (None: as soon as possible); shuffle_partitions: of a
    new session; out_format: json or parquet (``RunConfig.out``); metrics_out: append per-batch metrics here;
    partitions: key partitions of keyed rule and Streamlog stages (None: the session's default parallelism);
    strategy: how rule stages use clingo (``srtopo.solving.STRATEGIES``, the program argument ``reason
    --strategy``); driver_lines: a rules micro-batch of at most this many lines (and 1 MB) is evaluated on the
    driver, a larger one in executor tasks (0: always in executor tasks; ``rules.batch``); driver_tuples: a
    consistency micro-batch of at most this many tuples closes its windows on the driver, a larger one in executor
    tasks (0: always in executor tasks; None: ``DRIVER_TUPLES`` of the plan and master; ``consistency.sweep``)."""
    master: str | None = None
    physical_plan: str = "columnar"
    once: bool = True
    trigger: float | None = None
    shuffle_partitions: int | None = None
    out_format: str = "json"
    metrics_out: str | None = None
    partitions: int | None = None
    strategy: str = "auto"
    driver_lines: int = DRIVER_LINES
    driver_tuples: int | None = None


class SparkRun:
    """A running (or finished) Spark topology: its query, per-batch metrics and what it wrote."""

    def __init__(self, runner: "SparkRunner", topology: Topology, config: RunConfig, job, sink, temp: str | None,
                 origins: dict, hand_over: "HandOver | None" = None):
        self.runner = runner
        self.topology = topology
        self.config = config
        self.job = job
        self.sink = sink
        self._temp = temp
        self.origins = origins      # staged files of records held in memory -> (their name, line offset)
        self.started = time.perf_counter()
        self.seconds = 0.0
        self.resumed = False        # batches were committed on the checkpoint before this run
        self.hand_over = hand_over  # a running query's hand-over of written records to the sink
        self.kind = kind_of(topology).spark_job()
        self._metrics_written = False    # metrics_out is appended to once per run
        self.checkpoint: str | None = None     # named as this process's in its driver file while the run lasts

    def flush(self) -> None:
        """Wait until every batch written so far has reached the sink (a running query hands them over on a
        thread of its own); raises what the sink raised."""
        if self.hand_over is not None:
            self.hand_over.flush()

    @property
    def query(self):
        return self.job.query

    @property
    def batch_metrics(self):
        return self.job.batch_metrics

    def await_termination(self, timeout: float | None = None) -> bool:
        """Wait until the query ends (at most ``timeout`` seconds); whether it has ended."""
        try:
            query = self.job.await_query(timeout)
        except Exception:
            if self.hand_over is not None and self.hand_over.error is not None:
                raise self.hand_over.error from None    # the sink's error stopped it, not the query's own
            raise
        if not query.isActive:
            self.flush()
            return True
        return False

    def interrupted_note(self) -> str:
        """What a stopped run committed, and how to go on from there."""
        batches = len(self.job.batch_metrics)
        done = f"{batches} micro-batch{'es' if batches != 1 else ''} committed by this run"
        if self._temp:
            return (f"{done}; no --checkpoint was given, so a new run starts over (give --checkpoint DIR to be "
                    f"able to go on)")
        out = f", their outputs in {self.config.out}" if self.config.out else ""
        return f"{done} to {self.config.checkpoint}{out}; run the same command again to go on from there"

    def stop(self, grace: float = 60.0) -> None:
        """Stop the query after the batch in progress (stopped where it is after ``grace`` seconds, uncommitted);
        what was written reaches the sink before this returns (an error of the sink is raised by ``flush``,
        ``finish`` or ``result``)."""
        self.job.stop(grace)
        if self.checkpoint is not None:
            query_stopped(self.checkpoint)
        if self.hand_over is not None:
            self.hand_over.wait()

    def finish(self) -> None:
        """End of input: close what is still open (``out/batch=final``); the query must have stopped."""
        self.flush()
        self.job.finish()
        self.seconds = time.perf_counter() - self.started
        self._release()

    def _release(self) -> None:
        """The run is over: a later run on its checkpoint has nothing of this one to wait for."""
        if self.checkpoint is not None:
            release_driver(self.job.fs, self.checkpoint)
            self.checkpoint = None

    def reports(self):
        """Every output written so far (a DataFrame of reports or models; column ``batch`` names the micro-batch)."""
        return self.job.sinks.outputs(self.job.spark, self.job.output_columns)

    def rejected(self):
        return self.job.sinks.rejected(self.job.spark)

    def write_metrics(self) -> list[dict]:
        """The batches' metrics, each with its trigger's duration where Spark still remembers it (offsets log,
        file listing, the batch, commit log); appended to ``metrics_out`` once per run, at its end or when it is
        stopped by a signal."""
        metrics = list(self.job.batch_metrics)
        triggers = {int(p["batchId"]): p["durationMs"].get("triggerExecution")
                    for p in (self.job.query.recentProgress if self.job.query is not None else [])
                    if "addBatch" in p["durationMs"]}
        for m in metrics:
            if triggers.get(m["batch"]) is not None:
                m["trigger_s"] = round(triggers[m["batch"]] / 1000, 4)
        path = self.config.options.metrics_out
        if path and not self._metrics_written:
            self._metrics_written = True
            with open(path, "a", encoding="utf-8") as handle:
                for record in metrics:
                    handle.write(json_line(record) + "\n")
        return metrics

    def result(self, collect: bool = True) -> RunResult:
        """The run's result; with ``collect`` the outputs and rejected records are read back (sorted by time
        and subject) into the sink given to ``start`` (by default a MemorySink that the result keeps)."""
        options = self.config.options
        emitted = None
        self.flush()
        if collect and options.once:
            outputs, records = self.kind.collect(self.job, options)
            rejected = sorted(self.job.sinks.written_rows(rejected=True),
                              key=lambda row: (row.get("source") or "", row.get("line") or 0))
            _hand_over(self.sink, None, rejected, self.origins, self.kind, self.job.fs)    # first: see _hand_over
            for record in records:
                self.sink.emit(record)
            emitted = len(records) + _hand_over(self.sink, outputs, None, self.origins, self.kind, self.job.fs)
        metrics = self.write_metrics()
        counters = spark_counters(self.topology, self.kind, metrics,
                                  self.runner.stage_tasks(self.topology, self.config))
        if emitted is not None:      # the reports closed at the end of input are in no batch's metrics
            counters.outputs = emitted
        finished = getattr(self.kind, "final_counters", None)
        if finished is not None:     # what the end of input added to a kind's own counters
            finished(self.job, counters, None if emitted is None else records)
        memory = self.sink if isinstance(self.sink, MemorySink) else None
        return RunResult(
            runner="spark", physical_plan=self.runner.describe(self.topology, self.config),
            outputs=memory.outputs if memory else [], rejected=memory.rejected if memory else [],
            counters=counters, seconds=self.seconds, memory_mb=self._memory(), resumed=self.resumed,
            partial=self.topology.partial,
            batches=[BatchMetrics(m["batch"], m["tuples"], m.get("trigger_s", m["duration_s"]), m["reports"], m)
                     for m in metrics])

    def _memory(self) -> dict:
        from srtopo.runners.spark.session import jvm_pid
        return {"driver_python": rss_mb(), "jvm": rss_mb(jvm_pid(self.job.spark))}

    def cleanup(self) -> None:
        try:
            if self.hand_over is not None:      # the files it reads may be under the temporary checkpoint
                self.hand_over.close()
            self.job.drop_views()
        finally:
            try:
                self._release()
            finally:
                if self._temp:
                    shutil.rmtree(self._temp, ignore_errors=True)


def spark_counters(topology: Topology, kind, metrics: list[dict], tasks: list[int]) -> RunCounters:
    counters = RunCounters(batches=len(metrics))
    for key, field_name in (("tuples", "records"), ("malformed", "malformed"), ("late", "late"),
                            ("irrelevant", "irrelevant"), ("reports", "outputs")):
        setattr(counters, field_name, sum(m.get(key, 0) for m in metrics))
    for stage, n_tasks in zip(topology.stages, tasks):
        counters.stages.append(kind.stage_counters(stage, [m["stages"].get(stage.id, {}) for m in metrics], n_tasks))
    for m in metrics:       # what one kind counts besides (Streamlog: timestamps evaluated, punctuations)
        for key, value in m.get("extra", {}).items():
            counters.extra[key] = counters.extra.get(key, 0) + value
    return counters


#: the master URLs Spark accepts (``SparkContext``'s own list): local[N], local[*], local[N,F], local-cluster[N,C,M],
#: spark://HOST:PORT[,HOST:PORT...], yarn, k8s://URL, mesos://URL
_MASTER = re.compile(r"local(\[(\*|[1-9][0-9]*)(,[0-9]+)?\])?|local-cluster\[[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*\]"
                     r"|spark://[^\s:/,]+:[0-9]+(,[^\s:/,]+:[0-9]+)*|yarn|(k8s|mesos)://\S+")


def check_master(master: str | None) -> None:
    """A master URL Spark cannot use is a one-line error before a JVM starts (Spark's own is 80 lines of Java)."""
    if master is not None and not _MASTER.fullmatch(master):
        raise UnsupportedByRunner(f"unknown Spark master {master!r}",
                                  hint="give local[N] (N cores), local[*], spark://HOST:PORT, yarn or k8s://URL")


class SparkRunner:
    name: ClassVar[str] = "spark"
    summary: ClassVar[str] = "Spark Structured Streaming (local[*] or a cluster master URL)"
    options_type: ClassVar[type] = SparkOptions
    #: this runner's flags (their destinations) and the topology kinds each acts on (None: every kind)
    flag_kinds: ClassVar[dict] = {"checkpoint": None, "master": None, "once": None,
                                  "physical_plan": ("consistency", "chain"), "out_format": None,
                                  "trigger": None, "metrics_out": None, "shuffle_partitions": None,
                                  "partitions": ("rules", "streamlog", "chain"), "driver_lines": ("rules", "chain"),
                                  "driver_tuples": ("consistency", "chain")}

    def __init__(self, spark=None):
        self._spark = spark

    def session(self, options: SparkOptions, collector: str = "throughput"):
        """The runner's session (a new one with the garbage collector the kind's job asks for: ``latency`` for
        a time point per micro-batch, ``throughput`` for large batches)."""
        if self._spark is None:
            from srtopo.environment import require_java
            from srtopo.runners.spark.session import get_session
            require_java(17)
            self._spark = get_session(master=options.master, shuffle_partitions=options.shuffle_partitions,
                                      collector=collector)
        return self._spark

    # --- the protocol ------------------------------------------------------------------------------------
    def check(self, topology: Topology, sources: Sequence = (), config: RunConfig | None = None) -> None:
        topology.validate()
        options = self._options(config)
        check_master(options.master)
        if options.out_format not in ("json", "parquet"):
            raise UnsupportedByRunner(f"unknown sink format {options.out_format!r}", hint="json or parquet")
        kind_of(topology).spark_job().check(topology, list(sources), options)

    def stage_tasks(self, topology: Topology, config: RunConfig | None) -> list[int]:
        return kind_of(topology).spark_job().stage_tasks(topology, self._options(config), self._spark)

    def describe(self, topology: Topology, config: RunConfig | None = None) -> str:
        options = self._options(config)
        return kind_of(topology).spark_job().describe(topology, options, self.master(options),
                                                      self.stage_tasks(topology, config))

    def master(self, options: SparkOptions) -> str:
        return self._spark.sparkContext.master if self._spark is not None else options.master or "local[*]"

    def run(self, topology: Topology, sources: Sequence, config: RunConfig | None = None, sink=None) -> RunResult:
        """Run to the end of input (``once``) or until stopped. A signal (``srtopo.interrupt``) stops the query
        after the micro-batch in progress and raises ``Interrupted`` saying what was committed."""
        with interrupt.deferred():      # py4j calls are never interrupted; the loop below looks at the flag
            handle = self.start(topology, sources, config, sink)
            try:
                try:
                    while not handle.await_termination(0.25):
                        interrupt.check()
                    if handle.config.options.once:
                        with _abort_on_signal(handle.job):      # the main thread waits inside py4j meanwhile
                            try:
                                handle.finish()
                            except Exception:
                                if not interrupt.requested():
                                    raise
                                interrupt.check()   # stopped where it was by the signal: what was committed stands
                except KeyboardInterrupt as stop:     # the flag, or Python's own handler in a library user's process
                    handle.stop(STOP_GRACE)
                    handle.flush()
                    handle.write_metrics()
                    raise interrupt.Interrupted(getattr(stop, "signum", signal.SIGINT),
                                                handle.interrupted_note()) from None
                handle.seconds = handle.seconds or time.perf_counter() - handle.started
                return handle.result()
            except Exception as error:      # a full disk or a refused write: an OSError naming the place
                from srtopo.runners.spark.fs import io_error
                found = io_error(error)
                if found is None:
                    raise
                raise found from None
            finally:
                handle.stop()
                handle.cleanup()

    def start(self, topology: Topology, sources: Sequence, config: RunConfig | None = None, sink=None) -> SparkRun:
        """Start the query and return a handle (the query keeps running unless ``once``)."""
        from srtopo.runners.spark.fs import qualify
        from srtopo.runners.spark.sinks import BatchSinks
        config = replace(config or RunConfig(), options=self._options(config))
        sources = list(sources)
        self.check(topology, sources, config)
        for source in sources:
            require_path(source)
        refuse_clashes(source_paths(sources), config_outputs(config))
        options = config.options
        lateness = config.lateness
        kind = kind_of(topology).spark_job()
        if lateness is None and not options.once and kind.event_time:
            lateness = 0
            print("srtopo: streaming without a lateness: using 0 (out-of-order tuples behind the watermark are "
                  "rejected as late)", file=sys.stderr)
        if not options.once:
            # a streaming query over files looks like a hang to whoever expected a batch run: say what it does
            print("srtopo: the query keeps watching its input for new records until it is stopped (Ctrl-C); the "
                  "last times wait for later records; --once reads what is there, closes every time and stops",
                  file=sys.stderr)
        spark = self.session(options, kind.collector)
        temp = None
        checkpoint = config.checkpoint
        if checkpoint is None:
            checkpoint = temp = tempfile.mkdtemp(prefix="srtopo-ckpt-")
        checkpoint = qualify(checkpoint)
        from srtopo.runners.spark.fs import HadoopFS
        from srtopo.runners.spark.session import jvm_lock, jvm_pid
        fs = HadoopFS(spark)
        wait_for_earlier_driver(fs, checkpoint, jvm_lock())
        if kind.event_time:
            lateness = settled_lateness(fs, checkpoint, lateness, given=config.lateness is not None)
        origins: dict = {}
        spelled_as_given(sources, origins)
        sources = kind.sources(topology, sources, lambda index, source: _staged(source, checkpoint, index, origins))
        options_for = getattr(kind, "options_for", None)
        if options_for is not None:     # a plan that cannot read these sources names the one that does
            options = options_for(options, sources)
            config = replace(config, options=options)
        job = kind.job(spark, topology, config, lateness, len(sources), options)
        out = qualify(config.out) if config.out else checkpoint.rstrip("/") + "/out"
        rejected_out = qualify(config.rejected_out) if config.rejected_out else checkpoint.rstrip("/") + "/rejected"
        reports_out = None
        if len(topology.output.records) > 1:     # reports and models apart: the models in out
            reports_out = qualify(config.reports_out) if config.reports_out else checkpoint.rstrip("/") + "/reports"
        sinks = BatchSinks(job.fs, out, options.out_format, rejected_out, spark, reports_out=reports_out,
                           spell=lambda record: rejected_of(record, origins))
        sink = sink if sink is not None else MemorySink()
        hand_over = None
        if not options.once:   # a query that keeps running hands each batch's records over as they are written
            hand_over = HandOver(sink, origins, kind, job.fs, stop=job.stop)
            sinks.listeners.append(hand_over)
        frames = kind.frames(spark, sources, lateness, options)
        if interrupt.requested():      # stopped while Spark started: no query, nothing committed
            if temp:
                shutil.rmtree(temp, ignore_errors=True)
            raise interrupt.Interrupted(interrupt.signum(), "stopped before the query started: nothing was "
                                                            "committed; run the same command again")
        handle = SparkRun(self, topology, replace(config, lateness=lateness), job, sink, temp, origins, hand_over)
        claim_checkpoint(job.fs, checkpoint, topology, config.window, options.physical_plan, len(sources),
                         lateness if kind.event_time else None)
        record_driver(job.fs, checkpoint, jvm_lock(), jvm_pid(spark))
        handle.checkpoint = checkpoint
        try:
            handle.resumed = bool(job.fs.list_names(checkpoint.rstrip("/") + "/query/commits"))
            job.start(frames, checkpoint, sinks, once=options.once, trigger=options.trigger)
        except BaseException:
            handle.cleanup()        # no run goes on: nothing of it to wait for, no record of it left
            raise
        return handle

    def _options(self, config: RunConfig | None) -> SparkOptions:
        options = None if config is None else config.options
        return options if isinstance(options, SparkOptions) else SparkOptions()

    # --- command line --------------------------------------------------------------------------------------
    @staticmethod
    def add_arguments(parser) -> None:
        g = parser.add_argument_group("spark runner (--engine spark)")
        g.add_argument("--master", default=None,
                       help="Spark master URL: local[N] (default local[*]), spark://HOST:PORT, yarn, k8s://...")
        g.add_argument("--once", action="store_true",
                       help="process the input that is there now, close all report times, and stop "
                            "(without it the query keeps watching the stream until interrupted)")
        g.add_argument("--physical-plan", choices=PHYSICAL_PLANS, default="columnar",
                       help="columnar (default): files read with pyarrow and windows closed with numpy in executor "
                            "tasks, one shuffle by subject; fused: parsed in the JVM, every stage in one keyed SQL "
                            "pass; staged: one keyed exchange per stage")
        g.add_argument("--out-format", choices=["json", "parquet"], default="json",
                       help="format of the --out directory (JSON lines by default)")
        g.add_argument("--trigger", type=float, default=None, help="micro-batch interval in seconds (default: asap)")
        g.add_argument("--metrics-out", default=None, help="append per-batch metrics here as JSON lines")
        g.add_argument("--shuffle-partitions", type=positive, default=None,
                       help="spark.sql.shuffle.partitions of a new session (default 4)")
        g.add_argument("--partitions", type=positive, default=None,
                       help="key partitions of keyed rule and Streamlog stages (default: the session's default parallelism)")
        g.add_argument("--driver-lines", type=natural, default=DRIVER_LINES,
                       help="rules: evaluate a micro-batch of at most this many lines (and 1 MB) on the driver, a "
                            f"larger one in executor tasks; 0: always in executor tasks (default {DRIVER_LINES})")
        g.add_argument("--driver-tuples", type=natural, default=None,
                       help="consistency: close the windows of a micro-batch of at most this many tuples on the "
                            "driver, a larger one in executor tasks; 0: always in executor tasks (default, columnar: "
                            f"{DRIVER_TUPLES['columnar']['local']:,} on a local master, "
                            f"{DRIVER_TUPLES['columnar']['cluster']:,} on a cluster; fused: "
                            f"{DRIVER_TUPLES['fused']['local']:,} and {DRIVER_TUPLES['fused']['cluster']:,})")

    @staticmethod
    def options_from_args(args) -> SparkOptions:
        return SparkOptions(master=args.master, physical_plan=args.physical_plan, once=args.once,
                            trigger=args.trigger, shuffle_partitions=args.shuffle_partitions,
                            out_format=args.out_format, metrics_out=args.metrics_out,
                            partitions=getattr(args, "partitions", None),
                            strategy=getattr(args, "strategy", None) or "auto",
                            driver_lines=getattr(args, "driver_lines", DRIVER_LINES),
                            driver_tuples=getattr(args, "driver_tuples", None))


class _abort_on_signal:
    """While the main thread waits inside a py4j call (the end of input's close), a signal only sets the flag of
    ``srtopo.interrupt``: a thread of its own watches it and stops the job where it is (``MicroBatchJob.abort``),
    so the call returns and the run stops."""

    def __init__(self, job):
        self.job = job
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="srtopo-abort-on-signal", daemon=True)

    def _watch(self) -> None:
        while not self.done.is_set():
            if interrupt.wait(0.25):
                if not self.done.is_set():
                    self.job.abort()
                return

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()


def _hand_over(sink, outputs, rejected, origins: dict, kind, fs=None, pause=None) -> int:
    """Outputs (reports or models) and rejected records (DataFrames, or files written by the batch) to a Python
    sink, row by row; the number of outputs. ``pause`` is called every few records (a thread sharing the
    interpreter with the micro-batch lets it run)."""
    from srtopo.runners.spark.fs import local_path
    from srtopo.runners.spark.sinks import WrittenFiles

    def rows(records):
        if isinstance(records, WrittenFiles):
            got = records.rows(fs)
        else:
            # not toLocalIterator(): every call left two StageInfos (with their task metrics) alive in the JVM,
            # whose live heap then grew by ~0.65 MB per micro-batch (experiments/long_run_memory.py)
            got = records if isinstance(records, list) else records.collect()
        return got if pause is None else _pausing(got, pause)
    emitted = 0
    convert = kind.output_of
    if rejected is not None:     # first: --fail-on-bad-input stops before any output of the batch is written
        for row in rows(rejected):
            sink.reject(rejected_of(row, origins))
    if isinstance(outputs, WrittenFiles) and fs is not None:
        local = [local_path(p) for p in fs.data_files(outputs.path)]
        read = kind.read_local(local) if all(p is not None for p in local) else None
        if read is not None:
            for record in _pausing(read, pause):
                sink.emit(record)
                emitted += 1
            outputs = None
    if outputs is not None:
        # a batch's outputs come partition by partition: in time order, as the local runner emits them
        for row in _pausing(sorted(rows(outputs), key=lambda r: int(row_field(r, "time"))), pause):
            sink.emit(convert(row))
            emitted += 1
    return emitted


def _pausing(items, pause, every: int = 64):
    """``items``, calling ``pause`` after every ``every`` of them (None: no pauses)."""
    if pause is None:
        yield from items
        return
    for i, item in enumerate(items, 1):
        yield item
        if i % every == 0:
            pause()


def _let_others_run() -> None:
    """Give up the interpreter for a moment. Each call of the micro-batch's driver into the JVM gives it up too
    and must get it back: against a thread that never waits, it waits up to the 5 ms switch interval each time,
    which made a batch's few hundred calls (the store's bookkeeping, planning) take up to 0.5 s longer."""
    time.sleep(0.0001)


class HandOver:
    """A running query's hand-over of each batch's written records to a Python sink, on a thread of its own.

    Inside the batch, handing a 1M-tuple micro-batch's ~150k reports over line by line (``json.loads`` and a
    ``Report`` each) took 4-5 s of it, and a query with such batches sustained 75k tuples/s against 177k
    processing the same files without it. Records a batch wrote as files are queued and handed over in batch
    order while the next batch runs; records still in a DataFrame (valid only inside their batch) are handed over
    at once, after the queue. What the sink raises stops the query and is raised again by ``flush`` (and by the
    next batch, if one starts first)."""

    def __init__(self, sink, origins: dict, kind, fs, stop=None):
        import queue
        self.sink, self.origins, self.kind, self.fs, self._stop = sink, origins, kind, fs, stop
        self._queue = queue.Queue()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def __call__(self, label, outputs, rejected) -> None:
        self._raise()
        from srtopo.runners.spark.sinks import WrittenFiles
        if all(x is None or isinstance(x, WrittenFiles) for x in (outputs, rejected)):
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="srtopo-hand-over", daemon=True)
                    self._thread.start()
            self._queue.put((outputs, rejected))
            return
        self.flush()
        _hand_over(self.sink, outputs, rejected, self.origins, self.kind, self.fs)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                if self._error is None:
                    _hand_over(self.sink, *item, self.origins, self.kind, self.fs, pause=_let_others_run)
            except BaseException as error:      # the sink's own error (a strict sink's first rejected record)
                self._error = error
                if self._stop is not None:      # not from this thread: stop waits for the batch in progress
                    threading.Thread(target=self._stop, daemon=True).start()
            finally:
                self._queue.task_done()

    @property
    def error(self) -> BaseException | None:
        return self._error

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def wait(self) -> None:
        """Wait until everything queued has reached the sink (or been dropped after an error of the sink)."""
        self._queue.join()

    def flush(self) -> None:
        """Wait until everything queued has reached the sink; raise what the sink raised."""
        self.wait()
        self._raise()

    def close(self) -> None:
        """Hand over what is queued and end the thread (errors were raised by ``flush`` already)."""
        self.wait()
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None


def rejected_of(row, origins: dict) -> RejectedRecord:
    """A rejected row as a record; a line of records held in memory gets back its name and number there, and a
    file the user named (or a file of a directory the user named) is spelled as the user spelled it, as the
    local runner does (Spark reports ``file:`` URIs: percent-encoded from its text reader, as Hadoop writes them
    from the columnar plan's listing)."""
    source, line = row_field(row, "source"), row_field(row, "line")
    path = source
    if source and source.startswith("file:"):
        from srtopo.io.paths import local_of
        path = local_of(source)
        decoded = unquote(urlparse(source).path)
        if decoded != path and not os.path.exists(path) and os.path.exists(decoded):
            path = decoded          # the text reader's URI: ``a%20b.tnt`` is the file ``a b.tnt``
        elif path not in origins and os.path.dirname(path) not in origins:
            path = decoded
    origin = origins.get(path)
    if origin is not None and line is not None:
        source, line = origin[0], line + origin[1]
    elif path is not None and os.path.dirname(path) in origins:
        source = os.path.join(origins[os.path.dirname(path)][0], os.path.basename(path))
    return RejectedRecord(source, line, row_field(row, "text"), row_field(row, "reason"))


def spelled_as_given(sources, origins: dict) -> None:
    """``origins`` learns the path of each file or directory source as given (``rejected_of``)."""
    for source in sources:
        given = getattr(source, "path", None) or getattr(source, "spec", None)
        if given and given != "-" and "://" not in given and os.path.exists(given):
            origins.setdefault(os.path.abspath(given), (given, 0))


#: the file in a checkpoint directory that says which query wrote it
QUERY_FILE = "srtopo-query.json"


def query_identity(topology: Topology, window: int | None, physical_plan: str, n_sources: int) -> dict:
    """What a checkpoint's state belongs to: the topology's stages, source and output (its name, label and
    notes aside: renaming a file changes no state), the window, the physical plan and the number of sources."""
    data = topology.to_dict()
    body = {k: v for k, v in data.items() if k not in ("name", "label", "notes")}
    text = json.dumps(body, sort_keys=True, ensure_ascii=True)
    return {"topology": topology.name, "kind": topology.kind, "stages": len(topology.stages), "window": window,
            "physical_plan": physical_plan, "sources": n_sources,
            "fingerprint": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _recorded_query(fs, checkpoint: str) -> dict | None:
    """What ``QUERY_FILE`` of ``checkpoint`` says (None: no such file; {}: not readable as JSON)."""
    text = fs.read_text(checkpoint.rstrip("/") + "/" + QUERY_FILE)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return {}


def _lateness_text(lateness: int | None) -> str:
    return "none" if lateness is None else str(lateness)


def settled_lateness(fs, checkpoint: str, lateness: int | None, given: bool) -> int | None:
    """The lateness a run on ``checkpoint`` goes on with. Its batches closed every event time below their
    watermark, so a larger lateness than the one they ran with (None: unbounded) would accept tuples of times
    already closed and close some times again: given, it is refused; left to the default (a ``--once`` run
    after a streaming one), the checkpoint's is taken. A smaller one only closes sooner."""
    theirs = _recorded_query(fs, checkpoint) or {}
    if "lateness" not in theirs:
        return lateness
    recorded = theirs["lateness"]
    if recorded is None or (lateness is not None and lateness <= recorded):
        return lateness
    if given:
        raise TopologyError(f"checkpoint {checkpoint} was written by a run with lateness {_lateness_text(recorded)}: "
                            f"going on with {_lateness_text(lateness)} would reopen event times its micro-batches "
                            f"have closed", hint=f"give --lateness {recorded} (or less) to go on, or a new "
                                                 f"--checkpoint directory to start over")
    print(f"srtopo: going on with the lateness the checkpoint was written with: {recorded}", file=sys.stderr)
    return recorded


def claim_checkpoint(fs, checkpoint: str, topology: Topology, window: int | None, physical_plan: str,
                     n_sources: int, lateness: int | None = None) -> None:
    """Refuse a checkpoint written for another query (another topology, TBox or program, window, plan or
    number of sources): Spark would reuse its state and offsets silently. A checkpoint without the file
    (new, or written before it existed) is claimed for this query. The file also keeps the lateness of the
    last run (``settled_lateness``)."""
    mine = query_identity(topology, window, physical_plan, n_sources)
    mine["lateness"] = lateness
    theirs = _recorded_query(fs, checkpoint)
    if theirs is not None:
        differs = [key for key in ("fingerprint", "window", "physical_plan", "sources") if theirs.get(key) != mine[key]]
        if differs:
            what = {"fingerprint": f"topology (a {theirs.get('kind')} topology {theirs.get('topology')!r} with "
                                   f"{theirs.get('stages')} stage(s): another TBox or program)",
                    "window": f"window ({theirs.get('window')})",
                    "physical_plan": f"physical plan ({theirs.get('physical_plan')})",
                    "sources": f"number of sources ({theirs.get('sources')})"}
            raise TopologyError(f"checkpoint {checkpoint} was written for another query: its "
                                + ", ".join(what[key] for key in differs) + " differs from this one's",
                                hint="give a new --checkpoint directory, or delete this one to start over")
        if theirs.get("lateness", "unrecorded") == lateness:
            return
    fs.mkdirs(checkpoint)
    fs.write_text(checkpoint.rstrip("/") + "/" + QUERY_FILE, json.dumps(mine, indent=1) + "\n")


def _staged(source, checkpoint: str, index: int, origins: dict):
    """Records held in memory, written once as files under the checkpoint (one per batch, in batch order);
    ``origins`` learns each file's (name of the records, number of the line before its first)."""
    if not isinstance(source, (Tuples, Lines)):
        return source
    if "://" in checkpoint and not checkpoint.startswith("file:"):
        raise UnsupportedByRunner("records held in memory need a local checkpoint directory to be staged in")
    directory = os.path.join(checkpoint.removeprefix("file:"), "input", str(index))
    items = source.records if isinstance(source, Tuples) else source.lines
    size = max(1, -(-len(items) // max(1, source.batches)))
    if not os.path.isdir(directory):      # a restart finds the files it wrote (and Spark's log of them)
        staging = directory + ".tmp"
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(source, Tuples):
            os.makedirs(staging)
            for b in range(0, max(1, len(items)), size):
                write_tuples(os.path.join(staging, f"part-{b // size:06d}.tsv"), items[b:b + size],
                             mtime=1_600_000_000 + b // size)
        else:
            write_tnt(staging, items, per_file=size)
            if not items:
                open(os.path.join(staging, "part-000000.tnt"), "w").close()
        os.rename(staging, directory)
    for i, name in enumerate(sorted(os.listdir(directory))):
        origins[os.path.join(os.path.abspath(directory), name)] = (source.name, i * size)
    if isinstance(source, Tuples):
        return TupleFiles(directory, files_per_batch=1)
    return TntFiles(directory, files_per_batch=1)
