"""SparkSession creation with the defaults this project relies on (pyspark imported here only)."""
from __future__ import annotations

import atexit
import fcntl
import os
import signal
import sys
import tempfile
from contextlib import contextmanager

from srtopo import interrupt

DEFAULT_MASTER = "local[*]"
#: the JVM's garbage collector per workload. Throughput (consistency checks, big micro-batches): the parallel
#: collector, ~10% less JVM CPU per batch than G1. Latency (rule streams, a time point per micro-batch): G1 with
#: short pauses; with the parallel collector a paced rule stream saw one ~0.35 s full collection per ~50 batches
#: (experiments/README.md)
JAVA_OPTIONS = {"throughput": "-XX:+UseParallelGC", "latency": "-XX:+UseG1GC -XX:MaxGCPauseMillis=50"}


def python_for_workers() -> str:
    """The interpreter executors use: PYSPARK_PYTHON if set, else the driver's own interpreter."""
    return os.environ.get("PYSPARK_PYTHON") or sys.executable


def get_session(master: str | None = None, app_name: str = "srtopo", conf: dict | None = None,
                shuffle_partitions: int | None = None, ui: bool = False, collector: str = "throughput"):
    """Return the active SparkSession or build one (``local[*]`` unless ``master`` says otherwise).

    Executors run the same interpreter as the driver (PYSPARK_PYTHON), the UI is off unless asked for,
    and shuffle partitions default to twice the default parallelism on local masters (Spark's 200 is
    far too many for micro-batches). ``collector``: ``throughput`` or ``latency`` (``JAVA_OPTIONS``; the
    environment variable SRTOPO_SPARK_JAVA_OPTIONS overrides it).
    """
    os.environ.setdefault("PYSPARK_PYTHON", python_for_workers())
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName(app_name).master(master or DEFAULT_MASTER)
    java_options = os.environ.get("SRTOPO_SPARK_JAVA_OPTIONS", JAVA_OPTIONS[collector])
    settings = {
        "spark.ui.enabled": "true" if ui else "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions or 4),
        # without adaptive execution: every job of the project chooses its partitions (a key's partitions, the
        # shuffle partitions) and broadcasts by hint, and its micro-batches are small, so adaptive execution only
        # re-planned each query after every stage. The hot jobs turned it off one by one already; off for the
        # session, the rest (the sinks' copies, the closes at the end of input, reads of the store) follow: the
        # differential tests on every runner took 8% less CPU (362 -> 332 CPU-s on 2 cores)
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.maxConcurrentOutputFileWriters": "8",
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
        "spark.sql.session.timeZone": "UTC",
        # Spark makes this directory when a session starts: not in the user's working folder
        "spark.sql.warehouse.dir": os.path.join(tempfile.gettempdir(), "srtopo-spark-warehouse"),
        "spark.executorEnv.PYSPARK_PYTHON": os.environ["PYSPARK_PYTHON"],
        "spark.driver.memory": os.environ.get("SRTOPO_SPARK_DRIVER_MEMORY", "3g"),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # the generated-code cache: a rule micro-batch alone uses ~100 generated classes, and Spark's 100-entry
        # cache (evicting per segment) then recompiled ~20 of them every batch (~0.1 s per micro-batch)
        "spark.sql.codegen.cache.maxEntries": "1000",
        # Tungsten's memory page: Spark sizes it for big batches (heap / cores / 16, 32 MB on 2 cores and 2 GB),
        # and every sort, aggregate and hash join of a running task holds at least one. A staged consistency
        # plan runs dozens of them per task and in local mode shares the heap with the driver, which builds the
        # broadcast tables: with 32 MB pages a 60-stage plan peaked at 1.8 GB of a 2 GB heap and failed to
        # broadcast; with 2 MB pages it peaked at 0.8 GB (docs/spark.md has the throughput check)
        "spark.buffer.pageSize": os.environ.get("SRTOPO_SPARK_PAGE_SIZE", "2m"),
        # what the driver remembers of finished work, for a UI that is off by default: Spark keeps 1,000 SQL
        # executions, jobs and stages, and a running query starts several of each per micro-batch, so the live
        # heap of a long run grew with every batch until those limits were reached (+19-42% from the 20th to the
        # 200th batch, experiments/long_run_memory.py); with these it levels off within the first batches
        "spark.sql.ui.retainedExecutions": "50",
        "spark.ui.retainedJobs": "100",
        "spark.ui.retainedStages": "100",
        "spark.ui.retainedTasks": "10000",
        "spark.ui.dagGraph.retainedRootRDDs": "100",
        # the listings of the directories a batch reads (the previous state entry) go to a cache shared by the
        # session and bounded only at 250 MB: every micro-batch reads new directories, so it never hit and grew
        # by ~5 file statuses per batch (experiments/long_run_memory.py); without partition management, no cache
        "spark.sql.hive.manageFilesourcePartitions": "false",
        # local paths without Hadoop's checksum layer: every file written on a local disk (a micro-batch's offsets
        # and commit log entries, the store entry, the sink's files) was written twice, as itself and as a .crc
        # beside it, and renamed twice. A rule micro-batch's two log writes took 33 + 35 ms with it, 17 + 19 ms
        # without (local[2]). Atomicity still comes from the rename; a file is read whole or not at all
        "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
        "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.RawLocalFs",
        # the garbage collector of the workload (JAVA_OPTIONS)
        "spark.driver.extraJavaOptions": java_options,
        "spark.executor.extraJavaOptions": java_options,
    }
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    _launch_gateway({"spark.master": master or DEFAULT_MASTER, "spark.app.name": app_name, **settings})
    with _signals_kept():
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("SRTOPO_SPARK_LOG_LEVEL", "ERROR"))
    return spark


#: where the JVM's own output goes: a file (default: a temporary one), or ``-`` for this process's stderr
LOG_ENV = "SRTOPO_SPARK_LOG"


def jvm_log() -> str | None:
    """The file the JVM of this process writes its console output to (None: the terminal)."""
    return _LOG["path"]


def keep_jvm_log() -> str | None:
    """Keep the JVM's log file when this process exits (a run failed: the error names it); its path."""
    _LOG["keep"] = True
    return _LOG["path"]


_LOG: dict = {"path": None, "keep": False, "temporary": False}
#: the lock file the JVM of this process holds (``runners.spark.lease``)
_LOCK: dict = {"path": None}


def jvm_lock() -> str | None:
    """The lock file this process's JVM holds until it exits (None: the JVM was not launched here)."""
    return _LOCK["path"]


def _remove_lock() -> None:
    """At exit: a process whose runs all ended leaves nothing for a later run to wait for (its JVM exits in a
    moment, with no query). One that exits with a query still running keeps the file: its JVM may write on."""
    from srtopo.runners.spark.lease import held
    if _LOCK["path"] and not held():
        try:
            os.remove(_LOCK["path"])
        except OSError:
            pass


def _remove_log() -> None:
    """At exit: a temporary log nobody asked to keep goes (a run that went well leaves nothing behind)."""
    path = _LOG["path"]
    if path and _LOG["temporary"] and not _LOG["keep"]:
        try:
            os.remove(path)
        except OSError:
            pass


def _launch_gateway(settings: dict) -> None:
    """Start the JVM ourselves, as PySpark would but in a process group of its own and, unless ``SRTOPO_SPARK_LOG``
    is ``-``, with its console output in a log file.

    A terminal's Ctrl-C goes to its whole foreground process group: the Python workers that the JVM forks
    restore Python's SIGINT handler and die printing tracebacks, failing the batch in progress, while this
    process was about to stop the query cleanly. In a group of its own the JVM and its workers hear only what this
    process tells them, and die with it (the JVM exits when its standard input, a pipe from us, closes). Its
    console output - start-up warnings, Spark's log - would otherwise cover the terminal on every run. It inherits
    a lock (``jvm_lock``) that outlives this process as long as the JVM does (``runners.spark.lease``)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    kwargs: dict = {"start_new_session": True}
    target = os.environ.get(LOG_ENV)
    handle = None
    if target != "-":
        if target:
            handle = open(target, "ab")
        else:
            fd, target = tempfile.mkstemp(prefix="srtopo-spark-", suffix=".log")
            handle = os.fdopen(fd, "ab")
            _LOG["temporary"] = True
            atexit.register(_remove_log)
        kwargs.update(stdout=handle, stderr=handle)
        _LOG["path"] = target
    from srtopo.runners.spark.lease import LOCK_PREFIX, LOCK_SUFFIX
    lock_fd, lock_path = tempfile.mkstemp(prefix=LOCK_PREFIX, suffix=LOCK_SUFFIX)
    os.fchmod(lock_fd, 0o644)               # another user's run on a shared checkpoint can wait for it too
    fcntl.flock(lock_fd, fcntl.LOCK_EX)     # held by this process and, inherited, by the JVM: gone with both
    kwargs["pass_fds"] = (lock_fd,)
    try:
        conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
        gateway = launch_gateway(conf, popen_kwargs=kwargs)
    except BaseException:
        os.close(lock_fd)
        os.remove(lock_path)
        raise
    finally:
        if handle is not None:
            handle.close()
    _LOCK["path"] = lock_path
    atexit.register(_remove_lock)
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


@contextmanager
def _signals_kept():
    """Create the context without PySpark's SIGINT handler (it cancels every job and raises wherever the main
    thread is, often inside a py4j call) when this process routes its signals itself (``srtopo.interrupt``)."""
    if not interrupt.installed():
        yield
        return
    real = signal.signal

    def keep(signum, handler):
        return signal.getsignal(signum) if signum in interrupt.SIGNALS else real(signum, handler)
    signal.signal = keep
    try:
        yield
    finally:
        signal.signal = real


def stop_active_session() -> None:
    """Stop this process's active session, if any (the next ``get_session`` builds a new one, e.g. on another
    master)."""
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def active_jvm_pid() -> int | None:
    """The process id of the active session's JVM (None when there is no active session)."""
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    return None if active is None else jvm_pid(active)


def jvm_pid(spark) -> int:
    """The process id of ``spark``'s JVM (the driver's)."""
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
