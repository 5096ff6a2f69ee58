"""The Spark runner: Structured Streaming + foreachBatch, one SQL statement per micro-batch.

Layout under the checkpoint directory C:
  C/query/                      Spark's own checkpoint (offsets log, commit log)
  C/store/<batch>/kind=state/   the window cache after batch <batch> (Parquet, rows of every stage)
  C/store/<batch>/kind=report/  reports closed in the batch; kind=rejected, kind=metric likewise
  C/store/<batch>/_meta.json    cumulative max event time per source, closed frontier, metrics
Sink (``out``): out/batch=<batch>/ (JSON lines or Parquet), out/batch=final/ (reports closed at end of
input by ``--once``; deleted when a run starts, since more input could still arrive).

Exactly-once: batch b reads only store/<b-1> and overwrites store/<b> and out/batch=<b> with content that
is a deterministic function of (store/<b-1>, the batch's input as recorded in Spark's offsets log); the
batch counts as done only when Spark writes its commit-log entry after foreachBatch returns. A crash at
any point re-runs the uncommitted batch with the same id and input, which rewrites the same files.
store/<b-1> is deleted only while batch b+1 runs (after b committed).
"""
from __future__ import annotations

import json
import sys
import tempfile
import time as _time
import uuid
from collections import deque
from contextlib import contextmanager

from srtopo.errors import TopologyError, UnsupportedByRunner
from srtopo.topology.ir import Topology
from srtopo.topology.spark.fs import HadoopFS, qualify
from srtopo.topology.spark.plan import (NEG, POS, STATE_COLUMNS, SqlBuilder, accept_sql, asserted_names, bounds_for, bounds_sql,
                                 build_tables, id_tables, watermark, with_bounds_sql)
from srtopo.topology.spark.session import get_session

PLANS = ("fused", "staged")
CONCURRENT_WRITERS = "spark.sql.maxConcurrentOutputFileWriters"
DEFAULT_PLAN = "fused"
REPORT_COLUMNS = "subject STRING, time BIGINT, ni ARRAY<STRING>, evidence ARRAY<STRUCT<concept: STRING, time: BIGINT>>, stage STRING, plan STRING"


# Settings of the counters job, the job that parses the batch, fills its cache and aggregates it:
# * the cache lives for one batch and is read twice: compressing it cost more than it saved (its
#   compressibility statistics were ~11% of all task CPU in a JFR profile; parse+cache+count of 500k lines
#   1.52 s -> 1.39 s uncompressed, the re-scan 0.21 s -> 0.18 s, best of 5, local[2]);
# * adaptive execution would first run the cache as a query stage of its own and then re-scan it for the
#   aggregate (one more stage and scan per batch, ~0.3 s); without it the aggregate consumes the rows as the
#   cache is built, in the same tasks.
COUNTERS_JOB = {"spark.sql.inMemoryColumnarStorage.compressed": "false", "spark.sql.adaptive.enabled": "false"}


@contextmanager
def _conf(spark, settings: dict):
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


def _columns(schema: str) -> list[list[str]]:
    """[name, TYPE] pairs of a flat ``"name TYPE, ..."`` schema."""
    return [c.strip().split(" ", 1) for c in schema.split(",")]


def empty_frame(session, schema: str):
    """An empty DataFrame of a flat ``"name TYPE, ..."`` schema that is a LocalRelation (no job to read)."""
    cols = _columns(schema)
    return session.sql("SELECT " + ", ".join(f"CAST(NULL AS {typ}) AS {col}" for col, typ in cols) + " WHERE false")


def local_view(session, rows: list, schema: str, name: str) -> None:
    """Register a small lookup table as a view over a LocalRelation (rows held in the plan).

    ``createDataFrame(list)`` gives an RDD-backed relation: every batch that broadcasts it then ran a
    Spark job to collect it again (measured: three such jobs, ~0.5 s per batch). A pandas frame converted
    through Arrow becomes a LocalRelation, which a broadcast reads on the driver without a job."""
    import pandas as pd
    cols = _columns(schema)
    if not rows:
        empty_frame(session, schema).createOrReplaceTempView(name)
        return
    with _conf(session, {"spark.sql.execution.arrow.pyspark.enabled": "true"}):
        session.createDataFrame(pd.DataFrame(rows, columns=[c for c, _ in cols]), schema).createOrReplaceTempView(name)


def _bid(batch_id) -> str:
    return f"{int(batch_id):010d}"


class SparkConsistencyRunner:
    """Run a consistency Topology on Spark Structured Streaming.

    >>> runner = SparkConsistencyRunner(topology, window=30, lateness=0)          # doctest: +SKIP
    >>> query = runner.start([TntSource("in/")], out="reports/", checkpoint="ckpt/")  # doctest: +SKIP
    >>> runner.reports().show()                                                     # doctest: +SKIP
    """

    def __init__(self, topology: Topology, window: int | None, lateness: int | None = 0, plan: str = DEFAULT_PLAN,
                 spark=None, master: str | None = None, metrics: bool = True, cache_input: bool | None = None,
                 history: int = 10000):
        if plan not in PLANS:
            raise TopologyError(f"unknown Spark plan {plan!r}", hint="use 'fused' or 'staged'")
        if window is not None and window < 0:
            raise TopologyError(f"window must be >= 0 time units (or unbounded), got {window}")
        if lateness is not None and lateness < 0:
            raise TopologyError(f"allowed lateness must be >= 0, got {lateness}")
        if not topology.stages:
            raise UnsupportedByRunner("the topology has no stages", hint="compile it from a TBox first")
        self.topology = topology
        self.window = window
        self.lateness = lateness
        self.plan = plan
        self.spark = spark or get_session(master=master)
        self.metrics_enabled = metrics
        self.cache_input = cache_input
        self.tables = build_tables(topology)
        aid_of = {a: i for i, a in enumerate(asserted_names(self.tables))}   # the ids of plan.id_tables
        self._routes: dict[int, list] = {}      # asserted concept id -> [(stage, cached)] (the cmap rows)
        for asserted, k, _concept, cached in self.tables.cmap:
            self._routes.setdefault(aid_of[asserted], []).append((k, cached))
        self.uid = uuid.uuid4().hex[:10]
        self.names = {k: f"srtopo_{k}_{self.uid}" for k in
                      ("amap", "cmap", "srcmap", "emit", "cached", "pairs", "prev", "prevc", "new", "newc", "in", "bnd", "acc",
                       "r", "kept", "rows", "routed", "routed_all", "win")}
        self.fs = HadoopFS(self.spark)
        self.batch_metrics: deque = deque(maxlen=history)   # one small dict per batch, never per tuple
        self.query = None
        self.sources = []
        self.out = None
        self.out_format = "json"
        self.rejected_out = None
        self.callback = None
        self.console = False
        self._prev = None            # (batch id, meta dict) of the last committed store entry
        self._tables_ready = False
        self._sql = None

    # --- setup ----------------------------------------------------------------------------------
    def _register_tables(self, session=None) -> None:
        s = session or self.spark
        if self._tables_ready is s:
            return
        n, t = self.names, self.tables
        for name, (rows, schema) in id_tables(t).items():
            local_view(s, rows, schema, n[name])
        self._empty_state = empty_frame(s, STATE_COLUMNS)
        self._tables_ready = s

    def _sqlb(self) -> SqlBuilder:
        if self._sql is None:
            self._sql = SqlBuilder(self.names, self.tables, self.topology, self.window, self.lateness,
                                   max(1, len(self.sources)), self.plan, self.metrics_enabled,
                                   partitions=int(self.spark.conf.get("spark.sql.shuffle.partitions")))
        return self._sql

    def start(self, sources, out: str | None = None, out_format: str = "json", checkpoint: str | None = None,
              rejected_out: str | None = None, trigger: float | None = None, once: bool = False,
              callback=None, console: bool = False, query_name: str | None = None):
        """Start the streaming query and return it (``pyspark.sql.streaming.StreamingQuery``).

        sources: list of source objects from ``topology.spark.sources`` (merged by event time).
        out: sink directory (JSON lines or Parquet per ``out_format``); callback(batch_id, reports_df) and
        console=True are the other sinks. once=True processes what is available now and stops
        (call ``finish()`` afterwards to close the remaining report times).
        """
        if out_format not in ("json", "parquet"):
            raise TopologyError(f"unknown sink format {out_format!r}", hint="json or parquet")
        self.sources = list(sources)
        if not self.sources:
            raise TopologyError("no stream source given")
        self._sql = None
        self.checkpoint = qualify(checkpoint) if checkpoint else qualify(tempfile.mkdtemp(prefix="srtopo-ckpt-"))
        self.store = self.checkpoint.rstrip("/") + "/store"
        self.out = qualify(out) if out else None
        self.out_format = out_format
        self.rejected_out = qualify(rejected_out) if rejected_out else self.checkpoint.rstrip("/") + "/rejected"
        self.callback = callback
        self.console = console
        self._prev = None
        self._register_tables()
        if self.out:
            self.fs.delete(self.out.rstrip("/") + "/batch=final")
        frames = [src.frame(self.spark, i) for i, src in enumerate(self.sources)]
        stream = frames[0]
        for f in frames[1:]:
            stream = stream.unionByName(f)
        writer = stream.writeStream.foreachBatch(self._on_batch) \
            .option("checkpointLocation", self.checkpoint.rstrip("/") + "/query") \
            .queryName(query_name or f"srtopo_{self.uid}")
        if once:
            writer = writer.trigger(availableNow=True)
        elif trigger:
            writer = writer.trigger(processingTime=f"{float(trigger)} seconds")
        self.query = writer.start()
        return self.query

    # --- the micro-batch ---------------------------------------------------------------------------
    def _committed_before(self, batch_id: int):
        """(id, meta) of the latest store entry older than batch_id (written by a committed batch)."""
        ids = sorted((int(x) for x in self.fs.list_names(self.store) if x.isdigit()), reverse=True)
        for i in ids:
            if i >= batch_id:
                continue
            text = self.fs.read_text(f"{self.store}/{_bid(i)}/_meta.json")
            if text:
                return i, json.loads(text)
        return None

    def _prev_for(self, batch_id: int):
        if self._prev is None or self._prev[0] >= batch_id:
            self._prev = self._committed_before(batch_id)
        return self._prev

    def _state_view(self, prev, spark) -> None:
        path = None if prev is None else f"{self.store}/{_bid(prev[0])}/kind=state"
        if path and self.fs.exists(path):
            spark.read.schema(STATE_COLUMNS).parquet(path).createOrReplaceTempView(self.names["prevc"])
        else:
            self._empty_state.createOrReplaceTempView(self.names["prevc"])

    def _bounds_views(self, spark, bounds, with_new: bool = True) -> None:
        """Register the batch's bounds (a one-row relation) and the state/batch views that carry them."""
        n = self.names
        spark.sql(bounds_sql(bounds)).createOrReplaceTempView(n["bnd"])
        spark.sql(with_bounds_sql(n["prevc"], n["bnd"])).createOrReplaceTempView(n["prev"])
        if with_new:
            spark.sql(with_bounds_sql(n["newc"], n["bnd"])).createOrReplaceTempView(n["new"])

    def _prev_meta(self, prev):
        if prev is None:
            return {}, NEG
        meta = prev[1]
        return {int(k): v for k, v in meta["maxtime"].items()}, int(meta["closed"])

    def _observed(self, spark, sql: str, exprs: list[str], view: str):
        """Register ``sql`` as a view whose rows pass an Observation (metrics computed by the write itself)."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F
        obs = Observation()
        spark.sql(sql).observe(obs, *[F.expr(e) for e in exprs]).createOrReplaceTempView(view)
        return obs

    def _on_batch(self, df, batch_id: int) -> None:
        started = _time.perf_counter()
        spark = df.sparkSession     # foreachBatch runs in the query's own (cloned) session
        if spark.conf.get(CONCURRENT_WRITERS, "0") == "0":
            # the batch writes ~3 partitions (kind=state/report/rejected) per task: concurrent writers skip the
            # sort by partition column the write would otherwise do (measured ~0.6 s per 500k-tuple batch)
            spark.conf.set(CONCURRENT_WRITERS, "4")
        self._register_tables(spark)
        n = self.names
        sq = self._sqlb()
        prev = self._prev_for(batch_id)
        maxtime, closed = self._prev_meta(prev)
        n_sources = len(self.sources)
        self._state_view(prev, spark)
        staged = self.plan == "staged"
        cached = True if self.cache_input is None else self.cache_input   # measured: re-reading the batch costs more than caching it
        df.createOrReplaceTempView(n["in"])
        # W_{b-1}: which records are late is known before the batch is read
        spark.sql(accept_sql(watermark(maxtime, n_sources, self.lateness))).createOrReplaceTempView(n["acc"])
        spark.catalog.dropTempView(n["newc"])
        target = f"{self.store}/{_bid(batch_id)}"
        try:
            with _conf(spark, COUNTERS_JOB if cached else {}):
                if cached:
                    # materialise the parsed batch once (the plan would otherwise re-read and re-parse it). LAZY:
                    # the counters aggregate below is the job that parses the batch and fills the cache (an eager
                    # CACHE TABLE ran a separate count job over it first). The cache's settings are those in force
                    # when it is declared, hence inside this block.
                    spark.sql(f"CACHE LAZY TABLE {n['newc']} AS {sq.batch_cache_sql(n['in'], n['acc'])}")
                else:
                    spark.sql(sq.batch_cache_sql(n["in"], n["acc"])).createOrReplaceTempView(n["newc"])
                parsed = _time.perf_counter()
                # the batch's own max times (a deterministic function of its input): close up to W_b, not W_{b-1}
                stats = spark.sql(sq.batch_stats_sql(n["newc"], n["acc"])).collect()   # sources x vocabulary rows
            counted = _time.perf_counter()
            m, cur_max = self._batch_counters(stats, maxtime)
            b = bounds_for(maxtime, closed, n_sources, self.lateness, self.window, cur_maxtime=cur_max)
            self._bounds_views(spark, b)
            spark.sql(sq.window_sql(b)).createOrReplaceTempView(n["win"])
            obs_rep = self._observed(spark, sq.reports_sql(b), sq.count_by_stage_exprs("reports"), n["r"])
            obs_kept = self._observed(spark, sq.kept_sql(b), sq.count_by_stage_exprs("kept"), n["kept"])
            if staged:
                obs_new = self._observed(spark, sq.staged_rows_sql(b),
                                         sq.stage_metric_exprs() + sq.count_by_stage_exprs(
                                             "newkept", "cached AND time >= b_keep"), n["rows"])
                sql = sq.write_sql(None, n["rows"], n["r"], n["kept"], b)
            else:
                spark.sql(sq.routed_sql(b)).createOrReplaceTempView(n["routed_all"])
                obs_new = self._observed(spark, f"SELECT * FROM {n['routed_all']} WHERE route <> 'drop'",
                                         sq.count_by_stage_exprs("newkept", "route = 'state'"), n["routed"])
                sql = sq.write_sql(n["routed"], None, n["r"], n["kept"], b)
            planned = _time.perf_counter()
            spark.sql(sql).write.mode("overwrite").partitionBy("kind").parquet(target)
        finally:
            if cached:
                spark.sql(f"UNCACHE TABLE IF EXISTS {n['newc']}")
                spark.catalog.dropTempView(n["newc"])
        written = _time.perf_counter()
        for obs in (obs_rep, obs_kept, obs_new):
            m.update({k: (int(v) if v is not None else None) for k, v in obs.get.items()})
        meta = {"batch": int(batch_id), "maxtime": {str(k): v for k, v in sorted(cur_max.items())},
                "closed": int(b.hi), "accept": int(b.accept),
                "watermark": int(watermark(cur_max, n_sources, self.lateness))}
        n_reports = sum(m.get(f"reports_{k}", 0) for k in range(len(self.topology.stages)))
        self._emit(target, batch_id, spark, n_reports > 0, m.get("malformed", 0) + m.get("late", 0) > 0)
        self.fs.write_text(f"{target}/_meta.json", json.dumps(meta))
        self._prev = (int(batch_id), meta)
        # batch_id-1 stays until this batch commits; older entries are no longer needed by any replay
        if prev is not None:
            for name in self.fs.list_names(self.store):
                if name.isdigit() and int(name) < prev[0]:
                    self.fs.delete(f"{self.store}/{name}")
        done = _time.perf_counter()
        record = {"batch": int(batch_id), "duration_s": round(done - started, 4),
                  "sql_s": round(written - started, 4), "sink_s": round(done - written, 4),
                  "phases_s": {"setup": round(parsed - started, 4), "read_parse_cache_count": round(counted - parsed, 4),
                               "plan": round(planned - counted, 4), "close_write": round(written - planned, 4),
                               "sink_meta": round(done - written, 4)},
                  "watermark": meta["watermark"], "closed_upto": meta["closed"], "reports": n_reports}
        for key in ("tuples", "malformed", "late", "irrelevant", "punctuations"):
            record[key] = m.get(key, 0) or 0
        stages = {}
        for k, sid in enumerate(self.tables.stage_ids):
            stages[sid] = {"rows_in": m.get(f"stage_in_{k}", 0), "cached_in": m.get(f"cached_in_{k}", 0),
                           "reports": m.get(f"reports_{k}", 0),
                           "state_rows": m.get(f"kept_{k}", 0) + m.get(f"newkept_{k}", 0)}
        record["stages"] = stages
        record["cached_tuples"] = sum(v["state_rows"] for v in stages.values())
        self.batch_metrics.append(record)

    def _batch_counters(self, stats, maxtime: dict):
        """Counters and cumulative max times of a batch from its (source, concept) aggregate rows."""
        L = 0 if self.lateness is None else int(self.lateness)
        m = {"tuples": 0, "malformed": 0, "late": 0, "punctuations": 0, "irrelevant": 0}
        cur_max = dict(maxtime)
        fused = self.plan != "staged"
        k_stages = len(self.topology.stages)
        if fused:
            for k in range(k_stages):
                m[f"stage_in_{k}"] = m[f"cached_in_{k}"] = 0
        for r in stats:
            m["tuples"] += r["accepted"] + r["late"]
            m["late"] += r["late"]
            m["malformed"] += r["malformed"]
            m["punctuations"] += r["punctuations"]
            for v in (r["max_t"], None if r["max_p"] is None else r["max_p"] + L):
                if v is not None:
                    s_ = int(r["src"])
                    cur_max[s_] = int(v) if cur_max.get(s_) is None else max(cur_max[s_], int(v))
            if r["accepted"]:
                routes = self._routes.get(r["aid"])   # none for a concept no stage reads (aid NULL)
                if not routes:
                    m["irrelevant"] += r["accepted"]
                elif fused:
                    for k, cached in routes:
                        m[f"stage_in_{k}"] += r["accepted"]
                        m[f"cached_in_{k}"] += r["accepted"] if cached else 0
        return m, cur_max

    def _report_frame(self, df):
        ids = ", ".join("'" + i.replace("'", "''") + "'" for i in self.tables.stage_ids)
        plan = (self.topology.plan or "").replace("'", "''")
        return df.selectExpr("subject", "time", "ni", "evidence",
                             f"element_at(array({ids}), stage + 1) AS stage", f"'{plan}' AS plan")

    def _emit(self, target: str, batch_id, spark, has_reports: bool, has_rejected: bool) -> None:
        path = f"{target}/kind=report"
        if has_reports:
            reports = self._report_frame(spark.read.schema(
                "stage INT, subject STRING, time BIGINT, ni ARRAY<STRING>, "
                "evidence ARRAY<STRUCT<concept: STRING, time: BIGINT>>").parquet(path))
            self._sink(reports, batch_id)
        rpath = f"{target}/kind=rejected"
        if self.rejected_out and has_rejected:
            rejected = spark.read.schema("src INT, file STRING, line BIGINT, raw STRING, reason STRING") \
                .parquet(rpath).selectExpr("file AS source", "line", "raw AS text", "reason")
            rejected.write.mode("overwrite").json(f"{self.rejected_out}/batch={_bid(batch_id)}")

    def _sink(self, reports, batch_id) -> None:
        label = batch_id if isinstance(batch_id, str) else _bid(batch_id)
        if self.out:
            writer = reports.write.mode("overwrite")
            dest = f"{self.out}/batch={label}"
            if self.out_format == "parquet":
                writer.parquet(dest)
            else:
                writer.json(dest)
        if self.callback is not None:
            self.callback(batch_id, reports)
        if self.console:
            for row in reports.selectExpr("to_json(struct(*)) AS j").toLocalIterator():
                print(row["j"], flush=True)

    # --- end of input ------------------------------------------------------------------------------
    def finish(self) -> None:
        """Close every remaining report time from the last committed state (end of input: ``--once``).

        Idempotent: writes out/batch=final (overwrite) from the last committed store entry."""
        if self.query is not None and self.query.isActive:
            raise TopologyError("finish() needs the query to be stopped (await it or use once=True)")
        last = self._committed_before(POS)
        if last is None:
            return
        self._register_tables()
        self._sql = None
        maxtime, closed = self._prev_meta(last)
        bounds = bounds_for(maxtime, closed, max(1, len(self.sources)), self.lateness, self.window, final=True)
        self._state_view(last, self.spark)
        self._bounds_views(self.spark, bounds, with_new=False)
        self.spark.sql(self._sqlb().window_sql(bounds, with_new=False)).createOrReplaceTempView(self.names["win"])
        reports = self.spark.sql(self._sqlb().reports_sql(bounds))
        self._sink(self._report_frame(reports), "final")

    def run_once(self, sources, **kwargs):
        """Process what the sources hold now, close every report time, return the reports DataFrame."""
        self.start(sources, once=True, **kwargs)
        self.await_query()
        self.finish()
        return self.reports() if self.out else None

    def await_query(self, timeout: float | None = None):
        q = self.query
        if timeout is None:
            q.awaitTermination()
        else:
            q.awaitTermination(timeout)
        if q.exception() is not None:
            raise q.exception()
        return q

    def stop(self) -> None:
        if self.query is not None and self.query.isActive:
            self.query.stop()

    # --- reading results ---------------------------------------------------------------------------
    def reports(self):
        """All reports written to the sink so far (DataFrame; the column ``batch`` names the micro-batch)."""
        if not self.out:
            raise TopologyError("no sink directory: start() with out=DIR to read reports back")
        reader = self.spark.read.option("basePath", self.out)
        if not [x for x in self.fs.list_names(self.out) if x.startswith("batch=")]:
            return self.spark.createDataFrame([], REPORT_COLUMNS)
        path = self.out.rstrip("/") + "/batch=*"
        if self.out_format == "parquet":
            return reader.parquet(path)
        return reader.schema(REPORT_COLUMNS + ", batch STRING").json(path)

    def iter_reports(self):
        """Reports as dicts, streamed to the driver partition by partition (sorted by time, subject)."""
        df = self.reports().orderBy("time", "subject")
        for row in df.selectExpr("subject", "time", "ni", "evidence", "stage", "plan").toLocalIterator():
            d = row.asDict(recursive=True)
            yield d

    def rejected(self):
        names = [x for x in self.fs.list_names(self.rejected_out) if x.startswith("batch=")]
        schema = "source STRING, line BIGINT, text STRING, reason STRING"
        if not names:
            return self.spark.createDataFrame([], schema)
        return self.spark.read.schema(schema + ", batch STRING").option("basePath", self.rejected_out) \
            .json(self.rejected_out.rstrip("/") + "/batch=*")

    def summary(self) -> dict:
        totals = {"batches": len(self.batch_metrics)}
        for key in ("tuples", "malformed", "late"):
            totals[key] = sum(m.get(key, 0) for m in self.batch_metrics)
        return totals


def print_json_lines(rows, stream=None) -> int:
    stream = stream or sys.stdout
    count = 0
    for d in rows:
        d = {"subject": d["subject"], "time": d["time"], "ni": d["ni"],
             "evidence": [{"concept": e["concept"], "time": e["time"]} for e in d["evidence"]],
             "stage": d.get("stage"), "plan": d.get("plan")}
        if not d["plan"]:
            d.pop("plan")
        stream.write(json.dumps(d, ensure_ascii=False) + "\n")
        count += 1
    stream.flush()
    return count
