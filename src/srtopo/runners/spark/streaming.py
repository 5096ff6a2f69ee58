"""The micro-batch driver every Spark topology kind runs on.

A :class:`MicroBatchJob` starts one Structured Streaming query over its sources (merged into one stream),
hands each micro-batch to the kind's ``batch`` method inside ``foreachBatch``, and around it keeps what every
kind needs: the exactly-once store (``store``), the sinks (``sinks``), a bounded log of per-batch metrics, the
query's life cycle, and end of input (``finish``). A kind (``spark.consistency``) implements ``batch`` (write
the store entry, return what to sink) and ``close`` (the outputs still open at the end of input).
"""
from __future__ import annotations

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
    through Arrow becomes a LocalRelation, which a broadcast reads on the driver without a job."""
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

    # --- to implement ----------------------------------------------------------------------------------
    def batch(self, df, batch_id: int, spark, previous) -> BatchOutcome:
        raise NotImplementedError

    def close(self, last):
        """The outputs still open at the end of input, from the last completed entry (a DataFrame)."""
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

    def _on_batch(self, df, batch_id: int) -> None:
        self._in_batch = True
        try:
            self._run_batch(df, batch_id)
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
        """Stop the query once the micro-batch in progress (if any, for up to ``grace`` seconds) has ended.

        Interrupting a running ``foreachBatch`` makes the Python side raise, and Spark then matches the long
        Python traceback against a backtracking regular expression until its stream thread dies of a
        StackOverflowError (printed to the console). The batch would be replayed on restart anyway.

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
        query.stop()

    def drop_views(self) -> None:
        """Forget the temporary views of this job's batches (their plans would otherwise live as long as the
        session: a test session runs hundreds of queries)."""
        for table in self.spark.catalog.listTables():
            if table.isTemporary and self.uid in table.name:
                self.spark.catalog.dropTempView(table.name)

    def finish(self) -> None:
        """Close everything still open from the last completed entry (end of input). Idempotent: overwrites the
        sink's ``batch=final``."""
        if self.query is not None and self.query.isActive:
            raise TopologyError("finish() needs the query to be stopped (await it or run once)")
        self.store.forget()
        last = self.store.last_completed()
        if last is None:
            return
        self.sinks.write("final", self.close(last), None, self.output_columns)
