"""The micro-batch driver every Spark topology kind runs on.

A :class:`MicroBatchJob` starts one Structured Streaming query over its sources (merged into one stream),
hands each micro-batch to the kind's ``batch`` method inside ``foreachBatch``, and around it keeps what every
kind needs: the exactly-once store (``store``), the sinks (``sinks``), a bounded log of per-batch metrics, the
query's life cycle, and end of input (``finish``). A kind (``spark.consistency``) implements ``batch`` (write
the store entry, return what to sink) and ``close`` (the outputs still open at the end of input).
"""
from __future__ import annotations

import threading
import time as _time
import uuid
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass

from srtopo.errors import TopologyError
from srtopo.runners.spark.fs import HadoopFS
from srtopo.runners.spark.sinks import BatchSinks
from srtopo.runners.spark.store import BatchStore


@dataclass
class BatchOutcome:
    """What a kind's ``batch`` hands back: the meta of its store entry, its metrics record, and the outputs and
    rejected records to sink (DataFrames read back from the entry, or None when there are none); ``reports``: the
    reports of a topology that outputs reports and models apart (a chain: ``outputs`` are its models)."""
    meta: dict
    record: dict
    outputs: object = None
    rejected: object = None
    reports: object = None


@contextmanager
def session_conf(spark, settings: dict):
    """Session settings for the duration of a block (restored after: the session is the user's)."""
    before = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


#: how long a stop waits for the micro-batch in progress to commit before it stops the batch where it is (a batch
#: stopped so is not committed: a restart from the checkpoint runs it again)
STOP_GRACE = 5.0


class BatchStopped(Exception):
    """A micro-batch (or the end of input's close) stopped before it ended because its query is being stopped; it
    is not committed. Short on purpose: Spark matches a failed batch's traceback against a backtracking regular
    expression, and a long one (py4j's, with the Java stack inside) took its stream thread to a StackOverflowError."""


def columns(schema: str) -> list[list[str]]:
    """[name, TYPE] pairs of a flat ``"name TYPE, ..."`` schema."""
    return [c.strip().split(" ", 1) for c in schema.split(",")]


def empty_frame(session, schema: str):
    """An empty DataFrame of a flat ``"name TYPE, ..."`` schema that is a LocalRelation (no job to read)."""
    cols = columns(schema)
    return session.sql("SELECT " + ", ".join(f"CAST(NULL AS {typ}) AS {col}" for col, typ in cols) + " WHERE false")


def local_view(session, rows: list, schema: str, name: str) -> None:
    """Register a small lookup table as a view over a LocalRelation (rows held in the plan).

    ``createDataFrame(list)`` gives an RDD-backed relation: every batch that broadcasts it then ran a
    Spark job to collect it again (measured: three such jobs, ~0.5 s per batch). A pandas frame converted
    through Arrow becomes a LocalRelation, whose rows live in the plan. A broadcast of it still runs a small job
    of one or two tasks in the JVM (Spark 4.3's ``LocalTableScanExec`` hands its rows over in place to
    ``collect()``, not to a broadcast)."""
    import pandas as pd
    cols = columns(schema)
    if not rows:
        empty_frame(session, schema).createOrReplaceTempView(name)
        return
    with session_conf(session, {"spark.sql.execution.arrow.pyspark.enabled": "true"}):
        session.createDataFrame(pd.DataFrame(rows, columns=[c for c, _ in cols]), schema).createOrReplaceTempView(name)


def union_all(frames: list):
    """The frames (one schema) as one, by column name."""
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


class MicroBatchJob:
    """One streaming query of a topology; subclasses implement ``batch`` and ``close``."""

    #: the columns of the outputs (``BatchSinks.write``)
    output_columns: str | None = None

    def __init__(self, spark, history: int = 10000):
        self.spark = spark
        self.uid = uuid.uuid4().hex[:10]
        self.fs = HadoopFS(spark)
        self.batch_metrics: deque = deque(maxlen=history)   # one small dict per batch, never per tuple
        self.query = None
        self.store: BatchStore | None = None
        self.sinks: BatchSinks | None = None
        self._in_batch = False       # inside _on_batch (the Python part of a trigger)
        self._batches_ended = 0
        self._batches_begun = 0
        #: set when the run is being stopped: the batch in progress, or the close, stops at its next ``check_stop``
        self.stopping = threading.Event()
        #: the Spark job group of the end of input's close (``finish``), cancelled by ``abort``
        self.close_group = f"srtopo-close-{self.uid}"
        self._views_in: list = []      # the JVM sessions that hold the job's lookup views (``needs_views``)

    def needs_views(self, session, names) -> bool:
        """Whether the job's lookup views ``names`` must be registered in ``session``, which is then counted among
        those that hold them. ``foreachBatch`` passes the query's session in a new Python object every batch, so
        sessions are compared by their JVM object (registering again each batch cost 0.15-0.27 s on local[2]).
        The query's session is a clone of the run's, taken when the query starts, and a clone carries the
        temporary views: views registered when the job started are there already."""
        key = session._jsparkSession
        if any(key.equals(done) for done in self._views_in):
            return False
        self._views_in.append(key)
        return not all(session.catalog.tableExists(name) for name in names)

    # --- to implement ----------------------------------------------------------------------------------
    def batch(self, df, batch_id: int, spark, previous) -> BatchOutcome:
        raise NotImplementedError

    def close(self, last):
        """The outputs still open at the end of input, from the last completed entry: a DataFrame, or
        ``WrittenFiles`` the job wrote itself, or None for none."""
        raise NotImplementedError

    def reuse(self, batch_id: int, meta: dict) -> BatchOutcome | None:
        """The outcome of a batch whose store entry is complete already: written before a crash, then replayed
        because Spark had not committed it. None: compute the batch again, which rewrites the same entry where
        the kind's output is a function of its input. A kind whose output may differ from run to run (a choice
        program's answer sets) reads the outcome back from the entry, so that an answer once written is the one
        handed over again."""
        return None

    # --- life cycle --------------------------------------------------------------------------------------
    def start(self, frames: list, checkpoint: str, sinks: BatchSinks, once: bool = False,
              trigger: float | None = None, query_name: str | None = None):
        """Start the query over ``frames`` (streaming DataFrames of one schema, merged) and return it."""
        if not frames:
            raise TopologyError("no stream source given")
        self.store = BatchStore(self.fs, checkpoint.rstrip("/") + "/store")
        self.sinks = sinks
        sinks.start()
        self._drop_partial_log_writes(checkpoint.rstrip("/") + "/query")
        writer = union_all(frames).writeStream.foreachBatch(self._on_batch) \
            .option("checkpointLocation", checkpoint.rstrip("/") + "/query") \
            .queryName(query_name or f"srtopo_{self.uid}")
        if once:
            writer = writer.trigger(availableNow=True)
        elif trigger:
            writer = writer.trigger(processingTime=f"{float(trigger)} seconds")
        self.query = writer.start()
        return self.query

    def _drop_partial_log_writes(self, query_checkpoint: str) -> None:
        """Remove the temporary files of offset and commit log entries whose write was cut short (a run stopped
        or killed while Spark wrote one). Such a file never is an entry (an entry appears by an atomic rename),
        but Spark 4 refuses to start batch 0 over an offsets directory holding one."""
        for log in ("offsets", "commits"):
            folder = f"{query_checkpoint}/{log}"
            for name in self.fs.list_names(folder):
                if name.startswith(".") and name.endswith(".tmp"):
                    self.fs.delete(f"{folder}/{name}")

    def check_stop(self) -> None:
        """Raise ``BatchStopped`` if the run is being stopped: the loops of a batch or a close that runs in Python
        on the driver call it between time points."""
        if self.stopping.is_set():
            raise BatchStopped("stopped by a signal before the micro-batch ended; it is not committed")

    def abort(self) -> None:
        """Stop what runs now where it is: the batch in progress and the close stop at their next ``check_stop``,
        and the Spark jobs of the close are cancelled (those of a batch are cancelled by ``query.stop``)."""
        self.stopping.set()
        self.spark.sparkContext.cancelJobGroup(self.close_group)

    def _on_batch(self, df, batch_id: int) -> None:
        self._in_batch = True
        try:
            if self.stopping.is_set():
                raise BatchStopped("the query is being stopped: the micro-batch is not run")
            self._run_batch(df, batch_id)
        except BaseException as error:
            if self.stopping.is_set() or isinstance(error, KeyboardInterrupt):
                # a batch stopped on purpose fails with one short line, never with the traceback of what stopped
                # it (a cancelled Spark job, a signal): the query ends, nothing of the batch is committed
                raise BatchStopped("stopped by a signal before the micro-batch ended; it is not committed") from None
            raise
        finally:
            self._in_batch = False
            self._batches_ended += 1

    def _run_batch(self, df, batch_id: int) -> None:
        started = _time.perf_counter()
        spark = df.sparkSession     # foreachBatch runs in the query's own (cloned) session
        previous = self.store.completed_before(batch_id)
        outcome = None
        if self._batches_begun == 0:    # only a query's first batch can be a replay of one whose entry is whole
            own = self.store.completed(batch_id)
            if own is not None:
                outcome = self.reuse(batch_id, own)
        self._batches_begun += 1
        if outcome is None:
            outcome = self.batch(df, batch_id, spark, previous)
        written = _time.perf_counter()
        # the entry is complete before anything reaches the sinks: what they receive is what a replay hands over
        self.store.complete(batch_id, outcome.meta, previous)
        written_at = self.sinks.write(batch_id, outcome.outputs, outcome.rejected, self.output_columns,
                                      reports=outcome.reports)
        done = _time.perf_counter()
        record = {"batch": int(batch_id), "written_at": round(written_at, 4), "finished_at": round(_time.time(), 4),
                  "duration_s": round(done - started, 4),
                  "sql_s": round(written - started, 4), "sink_s": round(done - written, 4), **outcome.record}
        record.setdefault("phases_s", {})["sink_meta"] = round(done - written, 4)
        self.batch_metrics.append(record)

    def await_query(self, timeout: float | None = None):
        q = self.query
        if timeout is None:
            q.awaitTermination()
        else:
            q.awaitTermination(timeout)
        if q.exception() is not None:
            raise q.exception()
        return q

    def stop(self, grace: float = 60.0) -> None:
        """Stop the query once the micro-batch in progress (if any) has ended, or after ``grace`` seconds where it
        is (a signal gives it ``STOP_GRACE``): its Python passes on the driver stop at their next ``check_stop`` and its Spark jobs are cancelled
        (``query.stop`` cancels the query's job group), so the batch fails with one short ``BatchStopped`` and is
        not committed; a restart from the checkpoint runs it again. Without that, a long batch (a time point
        that takes minutes) kept the stop, and with it the run, waiting: ``query.stop`` waits for the Python part of
        the batch to return.

        Only the batch in progress is waited for: with input arriving all the time a trigger is nearly always
        active (the next one starts as the last ends), and waiting for an idle moment ran on for the whole grace
        period, batch after batch. A trigger outside the Python part (listing, planning) is stopped at once."""
        query = self.query
        if query is None or not query.isActive:
            return
        deadline = _time.monotonic() + grace
        ended = self._batches_ended
        while query.isActive and self._in_batch and self._batches_ended == ended and _time.monotonic() < deadline:
            _time.sleep(0.01)
        if query.isActive and self._in_batch and self._batches_ended == ended:
            self.stopping.set()
        query.stop()

    def drop_views(self) -> None:
        """Forget the temporary views of this job's batches (their plans would otherwise live as long as the
        session: a test session runs hundreds of queries)."""
        # SHOW VIEWS, not ``catalog.listTables()``: that asks the JVM about each table, ~0.4 s a run at 30 views
        for row in self.spark.sql(f"SHOW VIEWS LIKE '*{self.uid}*'").collect():
            if row["isTemporary"]:
                self.spark.catalog.dropTempView(row["viewName"])

    def finish(self) -> None:
        """Close everything still open from the last completed entry (end of input). Idempotent: overwrites the
        sink's ``batch=final``."""
        if self.query is not None and self.query.isActive:
            raise TopologyError("finish() needs the query to be stopped (await it or run once)")
        self.store.forget()
        last = self.store.last_completed()
        if last is None:
            return
        context = self.spark.sparkContext
        # the close's Spark jobs in a group of their own, which ``abort`` cancels (a signal during the close)
        context.setJobGroup(self.close_group, "srtopo: the end of input's close", interruptOnCancel=True)
        try:
            closed = self.close(last)
            self.check_stop()
            self.sinks.write("final", closed, None, self.output_columns)
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)
            context.setLocalProperty("spark.job.description", None)
            context.setLocalProperty("spark.job.interruptOnCancel", None)
