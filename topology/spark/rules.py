"""Rule topologies on Spark: the micro-batch of a chain of rule stages, run on the driver of ``spark.streaming``.

Per batch (docs/spark.md, "Rule topologies"):

1. the batch's lines, parsed into clingo-printed atoms by Python in the executors (``rules.stream.record_row``),
   get their time points (per source, units since the source's first timestamp, kept in the store's meta);
   records for time points already evaluated are rejected as late, others wait in the store (``pending``);
2. the time points every source has completed, less the lateness (``closed + 1 .. min_s complete_s - lateness``,
   a source completing its latest time point when its record is the time point whole, else the one before; empty
   ones included) are evaluated: for each segment of rule stages in order (``segments``: consecutive stages
   keyed alike run in one pass), its input rows (the stream's atoms, the atoms
   of the stages before it, and the checkpointed history its windows reach back to) are routed to key
   partitions (``pmod(crc32(key argument), n)``, one partition for unkeyed stages) and each partition runs
   ``rules.partition.PartitionEvaluator``: one clingo evaluation per time point for all its keys;
3. ONE write into the store entry (JSON lines from one task, a directory per kind: model, history, pending,
   rejected): a model per evaluated time point
   (every atom of the time point, ``#show`` applied, sorted), the persistent atoms of the observed predicates
   of the last max-window time points, the records still waiting, the rejected records.

Batch b reads only the entry of the last completed batch, so a replay rewrites the same files.
"""
from __future__ import annotations

import json
import time as _time
from fractions import Fraction

from srtopo.rules.ir import UNIT_SECONDS
from srtopo.rules.partition import CURRENT, HISTORY, TICK, fact_signature, merged_positions, segment_topology
from srtopo.rules.stream import GIVEN, NUMBER, late_reason, stamp_mismatch, unit_micros
from srtopo.topology.ir import Topology
from srtopo.topology.spark.sinks import REJECTED_COLUMNS, WrittenFiles
from srtopo.topology.spark.sql import sql_string as q
from srtopo.topology.spark.streaming import (
    BatchOutcome,
    MicroBatchJob,
    empty_frame,
    local_view,
    session_conf,
    union_all,
)

PARSED_COLUMNS = ("src INT, file STRING, line BIGINT, skind STRING, sval BIGINT, stamp STRING, "
                  "atoms ARRAY<STRUCT<sig: STRING, atom: STRING, args: ARRAY<STRING>>>, whole BOOLEAN, raw STRING, "
                  "reason STRING")
ATOM_COLUMNS = "time BIGINT, sig STRING, atom STRING, args ARRAY<STRING>, src INT, file STRING, line BIGINT, stamp STRING"
HISTORY_COLUMNS = "time BIGINT, sig STRING, atom STRING, args ARRAY<STRING>"
DERIVED_COLUMNS = "time BIGINT, sig STRING, atom STRING, persistent BOOLEAN, args ARRAY<STRING>"
STAGE_INPUT = "kind STRING, time BIGINT, sig STRING, atom STRING, args ARRAY<STRING>, persistent BOOLEAN, part INT"
MODEL_COLUMNS = "time BIGINT, atoms ARRAY<STRING>, timestamp STRING"
#: a store entry's rows (JSON lines, one directory per kind, null fields left out): the columns are named and
#: ordered so that a model row is the sink's model line (time, atoms, timestamp) and a rejected row the sink's
#: rejected line (source, line, text, reason); the sink copies those files as they are
STORED_COLUMNS = ("time BIGINT, atoms ARRAY<STRING>, timestamp STRING, sig STRING, atom STRING, args ARRAY<STRING>, "
                  "src INT, source STRING, line BIGINT, text STRING, reason STRING, kind STRING")
#: evaluated inside the batch: one task per partition (no coalescing), the stage outputs read twice, uncompressed
BATCH_CONF = {"spark.sql.adaptive.enabled": "false", "spark.sql.inMemoryColumnarStorage.compressed": "false"}
#: the store write: task output committed in place (the entry counts only once its meta is written after it, and
#: a replay overwrites it whole) and no _SUCCESS file: together ~40 ms less per batch on local[2]
COMMIT_CONF = {"mapreduce.fileoutputcommitter.algorithm.version": "2",
               "mapreduce.fileoutputcommitter.marksuccessfuljobs": "false"}


def parse_frame(lines, stream_format: str, duplicates: bool = False):
    """(src, file, line, raw) lines -> PARSED_COLUMNS rows, parsed by Python in the executors; blank lines go."""
    def parse(batches):
        import pandas as pd

        from srtopo.rules.stream import record_row
        for pdf in batches:
            out = []
            for src, file, line, raw in zip(pdf["src"], pdf["file"], pdf["line"], pdf["raw"]):
                row = record_row(raw if raw is not None else "", stream_format, duplicates)
                if row is None:
                    continue
                kind, value, stamp, atoms, whole, reason = row
                if reason is not None:
                    out.append((src, file, line, None, None, None, None, None, raw.rstrip("\r\n")[:2000], reason))
                else:
                    out.append((src, file, line, kind, value, stamp,
                                [{"sig": s, "atom": a, "args": g} for s, a, g in atoms], whole, None, None))
            yield pd.DataFrame(out, columns=["src", "file", "line", "skind", "sval", "stamp", "atoms", "whole",
                                             "raw", "reason"])
    return lines.mapInPandas(parse, PARSED_COLUMNS)


def _in(column: str, values) -> str:
    values = sorted(values)
    return f"{column} IN ({', '.join(q(v) for v in values)})" if values else "false"


class RulesJob(MicroBatchJob):
    def __init__(self, spark, topology: Topology, lateness: int | None, n_sources: int, partitions: int,
                 strategy: str = "auto", history: int = 10000, print_empty: bool = True):
        super().__init__(spark, history)
        self.topology = topology
        self.print_empty = print_empty
        number_unit = topology.source.number_unit
        #: numeric timestamps: time points per number unit as a fraction (None: a number counts time points)
        self.number_scale = None if number_unit is None else \
            Fraction(UNIT_SECONDS[number_unit]) / Fraction(UNIT_SECONDS[topology.source.unit])
        self.lateness = lateness
        self.n_sources = max(1, n_sources)
        self.partitions = max(1, int(partitions))
        self.strategy = strategy
        self.unit = unit_micros(UNIT_SECONDS[topology.source.unit])
        self.segments = segments(topology)
        self.reads, self.observed, self.reach, self.positions = [], [], [], []
        for segment in self.segments:
            stages = [topology.stages[i] for i in segment]
            self.reads.append(sorted({p for s in stages for p in set(s.inputs) | {w.observed for w in s.windows}}))
            self.observed.append(sorted({w.observed for s in stages for w in s.windows}))
            self.reach.append(max((max(w.distances) for s in stages for w in s.windows), default=0))
            self.positions.append(merged_positions(stages))
        self.observed_all = sorted({o for obs in self.observed for o in obs})
        self.max_reach = max(self.reach, default=0)
        shows = topology.output.shows
        self.shows = None if shows is None else sorted(shows)
        self.shown_background = [f for f in topology.source.background
                                 if self.shows is None or fact_signature(f) in set(self.shows)]
        self.stage_json = [json.dumps(segment_topology(topology, seg).to_dict()) for seg in self.segments]
        self.names = {k: f"srtopo_r{k}_{self.uid}" for k in
                      ("in", "acc", "prevp", "prevh", "allrows", "cur", "bg", "times", "bnd")}
        self._broadcasts = None
        self._reps = None
        self._persisted: list = []

    # --- setup ----------------------------------------------------------------------------------------
    def _stage_values(self):
        if self._broadcasts is None:
            context = self.spark.sparkContext
            self._broadcasts = [context.broadcast(text) for text in self.stage_json]
        return self._broadcasts

    def _representatives(self, spark) -> list[int]:
        """Per partition p, a grouping value that Spark's hash partitioning sends to shuffle partition p: one
        group per task, whatever Murmur3 does with small integers."""
        if self._reps is None:
            n = self.partitions
            rows = spark.sql(f"SELECT p, min(id) AS r FROM (SELECT id, pmod(hash(id), {n}) AS p FROM range({n * 64})) "
                             "GROUP BY p").collect()
            reps = {int(r["p"]): int(r["r"]) for r in rows}
            self._reps = [reps[p] for p in range(n)]
        return self._reps

    def _views(self, spark, previous) -> None:
        n = self.names
        for kind, view, schema, select in (
                ("pending", n["prevp"], ATOM_COLUMNS, "time, sig, atom, args, src, source AS file, line, "
                                                      "timestamp AS stamp"),
                ("history", n["prevh"], HISTORY_COLUMNS, "time, sig, atom, args")):
            if previous is not None:
                self._stored(spark, previous[0], kind).selectExpr(*select.split(", ")) \
                    .createOrReplaceTempView(view)
            else:
                empty_frame(spark, schema).createOrReplaceTempView(view)
        if not spark.catalog.tableExists(n["bg"]):       # the same every batch: registered once
            local_view(spark, [(a,) for a in self.shown_background], "atom STRING", n["bg"])

    def _stored(self, spark, batch_id, kind: str):
        """The rows of one kind in a store entry (JSON lines partitioned by kind)."""
        return spark.read.schema(STORED_COLUMNS).json(self.store.entry(batch_id)).where(f"kind = {q(kind)}")

    @staticmethod
    def _meta(previous) -> dict:
        if previous is None:
            return {"origin": {}, "maxtime": {}, "complete": {}, "closed": -1}
        return previous[1]

    # --- the micro-batch --------------------------------------------------------------------------------
    def batch(self, df, batch_id: int, spark, previous) -> BatchOutcome:
        started = _time.perf_counter()
        n = self.names
        meta = self._meta(previous)
        closed = int(meta["closed"])
        origin = {int(k): v for k, v in meta["origin"].items()}
        maxtime = {int(k): int(v) for k, v in meta["maxtime"].items()}
        complete = {int(k): int(v) for k, v in meta.get("complete", {}).items()}
        target = self.store.entry(batch_id)
        df.createOrReplaceTempView(n["in"])
        try:
            with session_conf(spark, dict(BATCH_CONF, **{"spark.sql.shuffle.partitions": str(self.partitions)})):
                if len(origin) < self.n_sources:      # until every source's time point 0 is known: parsed twice
                    for r in spark.sql(f"SELECT src, min_by(struct(skind, sval), struct(file, line)) AS o "
                                       f"FROM {n['in']} WHERE reason IS NULL AND skind <> {q(GIVEN)} "
                                       "GROUP BY src").collect():
                        origin.setdefault(int(r["src"]), [r["o"]["skind"], int(r["o"]["sval"])])
                # cached lazily: the statistics below are the job that parses the batch and fills the cache
                self._bounds(spark, closed)
                acc = spark.sql(self._timed_sql(origin)).persist()
                self._persisted.append(acc)
                acc.createOrReplaceTempView(n["acc"])
                stats = spark.sql(
                    f"SELECT src, max(CASE WHEN reason IS NULL THEN time END) AS mx, "
                    f"max(CASE WHEN reason IS NULL THEN time - CASE WHEN whole THEN 0 ELSE 1 END END) "
                    f"AS complete, "
                    f"sum(CASE WHEN reason IS NULL THEN size(atoms) ELSE 0 END) AS atoms, "
                    f"count_if(reason IS NOT NULL AND NOT startswith(reason, 'late: ')) AS malformed, "
                    f"count_if(startswith(reason, 'late: ')) AS late FROM {n['acc']} GROUP BY src").collect()
                parsed = _time.perf_counter()
                for r in stats:
                    if r["mx"] is not None:
                        src = int(r["src"])
                        maxtime[src] = max(int(r["mx"]), maxtime.get(src, -1))
                        complete[src] = max(int(r["complete"]), complete.get(src, -2))
                hi = closed
                if self.lateness is not None and len(complete) >= self.n_sources:
                    hi = max(closed, min(complete.values()) - int(self.lateness))
                self._views(spark, previous)
                self._bounds(spark, closed, closed + 1, hi)
                spark.sql(f"SELECT time, a.sig AS sig, a.atom AS atom, a.args AS args, src, file, line, stamp "
                          f"FROM {n['acc']} LATERAL VIEW OUTER explode(atoms) e AS a WHERE reason IS NULL "
                          f"UNION ALL SELECT * FROM {n['prevp']}").createOrReplaceTempView(n["allrows"])
                model, derived, metrics = self._evaluate(spark, closed + 1, hi, self._clock_origin(origin))
                evaluated = _time.perf_counter()
                parts = [f"SELECT time, CAST(NULL AS ARRAY<STRING>) AS atoms, stamp AS timestamp, sig, atom, args, src, "
                         f"file AS source, line, CAST(NULL AS STRING) AS text, CAST(NULL AS STRING) AS reason, "
                         f"'pending' AS kind FROM {n['allrows']} WHERE time > {self._bound('b_hi')}",
                         f"SELECT CAST(NULL AS BIGINT), NULL, NULL, NULL, NULL, NULL, NULL, file, line, raw, reason, "
                         f"'rejected' FROM {n['acc']} WHERE reason IS NOT NULL",
                         self._history_sql(closed + 1, hi, derived)]
                frame = spark.sql(" UNION ALL ".join(f"({p})" for p in parts))
                if model is not None:
                    frame = frame.unionByName(model.selectExpr(
                        "time", "atoms", "timestamp", "CAST(NULL AS STRING) AS sig", "CAST(NULL AS STRING) AS atom",
                        "CAST(NULL AS ARRAY<STRING>) AS args", "CAST(NULL AS INT) AS src",
                        "CAST(NULL AS STRING) AS source", "CAST(NULL AS BIGINT) AS line",
                        "CAST(NULL AS STRING) AS text", "CAST(NULL AS STRING) AS reason", "'model' AS kind"))
                observation = None
                if metrics is not None:       # the segments' metrics rows, observed and dropped before the write
                    from pyspark.sql import Observation
                    from pyspark.sql import functions as F
                    frame = frame.unionByName(metrics.selectExpr(
                        "CAST(NULL AS BIGINT) AS time", "CAST(NULL AS ARRAY<STRING>) AS atoms",
                        "CAST(NULL AS STRING) AS timestamp", "CAST(NULL AS STRING) AS sig",
                        "CAST(NULL AS STRING) AS atom", "args", "CAST(NULL AS INT) AS src",
                        "CAST(NULL AS STRING) AS source", "CAST(segment AS BIGINT) AS line",
                        "CAST(NULL AS STRING) AS text", "CAST(NULL AS STRING) AS reason", "'metrics' AS kind"))
                    observation = Observation()
                    exprs = [F.expr(f"sum(CASE WHEN kind = 'metrics' AND line = {k} THEN CAST(args[{i}] AS BIGINT) "
                                    f"END)").alias(f"{name}{k}")
                             for k in range(len(self.segments)) for i, name in ((0, "r"), (1, "d"))]
                    frame = frame.observe(observation, *exprs).where("kind <> 'metrics'")
                # one task, a file per kind: the entry is small next to the work before it, and a write of many
                # tiny files from every task cost twice as long (measured per batch on local[2])
                with session_conf(spark, COMMIT_CONF):
                    frame.coalesce(1).write.mode("overwrite").partitionBy("kind").json(target)
                stage_metrics = self._segment_metrics(observation.get if observation else {}, closed + 1, hi)
        finally:
            self._release(spark)
        written = _time.perf_counter()
        counts = {"atoms": sum(int(r["atoms"] or 0) for r in stats),
                  "malformed": sum(int(r["malformed"]) for r in stats), "late": sum(int(r["late"]) for r in stats)}
        meta = {"batch": int(batch_id), "origin": {str(k): v for k, v in sorted(origin.items())},
                "maxtime": {str(k): v for k, v in sorted(maxtime.items())},
                "complete": {str(k): v for k, v in sorted(complete.items())}, "closed": int(hi)}
        n_models = max(0, hi - closed)
        record = {"phases_s": {"read_parse": round(parsed - started, 4), "evaluate": round(evaluated - parsed, 4),
                               "write": round(written - evaluated, 4)},
                  "tuples": counts["atoms"], "malformed": counts["malformed"], "late": counts["late"],
                  "reports": n_models, "evaluated": [closed + 1, hi] if n_models else None,
                  "stages": stage_metrics}
        outputs = WrittenFiles(f"{target}/kind=model", MODEL_COLUMNS) if n_models else None
        rejected = None
        if counts["malformed"] + counts["late"]:
            rejected = WrittenFiles(f"{target}/kind=rejected", REJECTED_COLUMNS)
        return BatchOutcome(meta, record, outputs, rejected)

    def _bounds(self, spark, closed: int, lo: int | None = None, hi: int | None = None) -> None:
        """Register the batch's bounds (a one-row relation of texts) that ``_bound`` reads."""
        lo = closed + 1 if lo is None else lo
        hi = closed if hi is None else hi
        values = ", ".join(f"'{int(v)}'" for v in (closed, lo, hi, hi - self.max_reach))
        spark.sql(f"SELECT * FROM VALUES ({values}) AS t(b_closed, b_lo, b_hi, b_cut)") \
            .createOrReplaceTempView(self.names["bnd"])

    def _bound(self, name: str) -> str:
        """A bound of the batch as a BIGINT expression that is not a literal of the generated code.

        Spark's code generator inlines BIGINT literals into the generated Java, so per-batch bounds as literals
        made every micro-batch compile new classes (~17 Janino compiles, ~0.15 s per micro-batch on local[2]),
        and a cross join with a one-row relation costs a broadcast job per use. A scalar subquery over a
        one-row relation is evaluated on the driver without a job, and a STRING value is passed to the
        generated code as a reference, so the code is the same every batch."""
        return f"CAST((SELECT {name} FROM {self.names['bnd']}) AS BIGINT)"

    def _timed_sql(self, origin: dict) -> str:
        """The batch's records with their time point, or the reason they are rejected."""
        n = self.names
        if origin:
            okind = "CASE src " + " ".join(f"WHEN {s} THEN {q(k)}" for s, (k, _v) in origin.items()) + " END"
            oval = "CASE src " + " ".join(f"WHEN {s} THEN CAST({int(v)} AS BIGINT)" for s, (_k, v) in origin.items()) \
                   + " END"
        else:
            okind, oval = "CAST(NULL AS STRING)", "CAST(NULL AS BIGINT)"
        u = self.unit
        delta = "(sval - okind_val)"
        number = delta
        if self.number_scale is not None:     # floor(delta * a / b): --t-format numbers in time points
            a, b = self.number_scale.numerator, self.number_scale.denominator
            number = f"floor(({delta} * {a}) / {b})" if b != 1 else f"({delta} * {a})"
        time = (f"CASE WHEN skind = {q(GIVEN)} THEN sval WHEN skind = {q(NUMBER)} THEN CAST({number} AS BIGINT) "
                f"WHEN {delta} >= 0 THEN {delta} DIV {u} ELSE -((-{delta} + {u - 1}) DIV {u}) END")
        kinds = ("n", "d", "z")
        mismatch = "CASE " + " ".join(
            f"WHEN okind = {q(a)} AND skind = {q(b)} THEN {q(stamp_mismatch(a, b))}"
            for a in kinds for b in kinds if a != b) + " END"
        closed_ = self._bound("b_closed")
        late_head, late_tail = late_reason(-1, -2).split("-1", 1)
        late_mid, late_tail = late_tail.split("-2", 1)
        return (f"SELECT src, file, line, whole, stamp, atoms, raw, t AS time, CASE WHEN reason IS NOT NULL THEN reason "
                f"WHEN skind <> {q(GIVEN)} AND skind <> okind THEN {mismatch} "
                f"WHEN t < 0 THEN concat('time point ', t, ' is before the first record') "
                f"WHEN t <= {closed_} THEN concat({q(late_head)}, t, {q(late_mid)}, {closed_}, {q(late_tail)}) END "
                f"AS reason FROM (SELECT *, {time} AS t FROM (SELECT *, {okind} AS okind, {oval} AS okind_val "
                f"FROM {n['in']}))")

    # --- evaluation --------------------------------------------------------------------------------------
    def _part_expr(self, k: int) -> str:
        positions = self.positions[k]
        if positions is None:
            return "0"
        n = self.partitions
        cases = " ".join(f"WHEN {q(sig)} THEN pmod(crc32(CAST(element_at(args, {pos + 1}) AS BINARY)), {n})"
                         for sig, pos in sorted(positions.items()))
        return f"CAST(CASE sig {cases} END AS INT)"

    @staticmethod
    def _clock_origin(origin: dict):
        """Time point 0's timestamp for @now: the first source's (kind, value) as ``rules.clock`` reads it."""
        return tuple(origin[min(origin)]) if origin else None

    def _evaluate(self, spark, lo: int, hi: int, clock_origin=None):
        """Evaluate time points lo..hi through the stage chain: (model frame, derived frames, metrics frame), all
        lazy: the one action that uses them (the store write) runs the chain; (None, [], None) when there is
        nothing to evaluate.

        Each derived frame is cached, and read by the segments after it, the model and the history: segment
        k + 1's shuffle computes segment k (one reader while it runs), and the model's shuffle the last one,
        so no two tasks wait on the same partition. Each partition task adds one metrics row (``sig`` NULL:
        every reader of atoms drops it) that the metrics frame collects."""
        if hi < lo:
            return None, [], None
        n = self.names
        # cached lazily: the first segment's shuffle fills it; the model and the history read it again
        current = spark.sql(f"SELECT * FROM {n['allrows']} WHERE time BETWEEN {self._bound('b_lo')} AND "
                            f"{self._bound('b_hi')}").persist()
        self._persisted.append(current)
        current.createOrReplaceTempView(f"{n['cur']}_c")
        cur = f"{n['cur']}_c"
        reps = self._representatives(spark)
        rep_array = "array(" + ", ".join(f"CAST({r} AS BIGINT)" for r in reps) + ")"
        derived: list = []
        metrics = []
        for k, segment in enumerate(self.segments):
            reads = self.reads[k]
            pieces = [f"SELECT {q(CURRENT)} AS kind, time, sig, atom, args, true AS persistent FROM {cur} "
                      f"WHERE atom IS NOT NULL AND {_in('sig', reads)}"]
            if self.observed[k]:
                pieces.append(f"SELECT {q(HISTORY)}, time, sig, atom, args, true FROM {n['prevh']} "
                              f"WHERE time >= {self._bound('b_lo')} - {self.reach[k]} "
                              f"AND {_in('sig', self.observed[k])}")
            inputs = spark.sql(" UNION ALL ".join(pieces))
            for d in derived:
                inputs = inputs.unionByName(d.where(_in("sig", reads)).selectExpr(
                    f"{q(CURRENT)} AS kind", "time", "sig", "atom", "args", "persistent"))
            inputs = inputs.selectExpr("*", f"{self._part_expr(k)} AS part")
            ticks = range(self.partitions) if self.positions[k] is not None else range(1)
            tick_frame = spark.sql(f"SELECT {q(TICK)} AS kind, CAST(NULL AS BIGINT) AS time, CAST(NULL AS STRING) "
                                   f"AS sig, CAST(NULL AS STRING) AS atom, CAST(NULL AS ARRAY<STRING>) AS args, "
                                   f"false AS persistent, CAST(id AS INT) AS part FROM range({len(ticks)})")
            grouped = inputs.unionByName(tick_frame).selectExpr("kind", "time", "atom", "persistent", "part",
                                                                f"element_at({rep_array}, part + 1) AS rep")
            # argument texts only where a reader routes rows by them: a later segment or the history
            with_args = frozenset(p for j in range(k + 1, len(self.segments)) for p in self.reads[j]) \
                | frozenset(self.observed_all)
            task = _stage_task((self.uid, k), self._stage_values()[k], lo, hi, self.partitions, self.strategy,
                               with_args, clock_origin)
            out = grouped.groupBy("rep").applyInPandas(task, DERIVED_COLUMNS).persist()
            self._persisted.append(out)
            metrics.append(out.where("sig IS NULL").selectExpr(f"{k} AS segment", "args"))
            derived.append(out.where("sig IS NOT NULL"))
        model = self._model(spark, lo, hi, cur, derived)
        return model, derived, union_all(metrics)

    def _segment_metrics(self, observed: dict, lo: int, hi: int) -> dict:
        out = {}
        for k, segment in enumerate(self.segments):
            tasks = self.partitions if self.positions[k] is not None else 1
            out[self.topology.stages[segment[0]].id] = {
                "records_in": int(observed.get(f"r{k}") or 0) if hi >= lo else 0,
                "derived": int(observed.get(f"d{k}") or 0) if hi >= lo else 0, "tasks": tasks,
                "segment": [self.topology.stages[i].id for i in segment]}
        return out

    def _model(self, spark, lo: int, hi: int, cur: str, derived: list):
        n = self.names
        shown = "" if self.shows is None else f" AND {_in('sig', self.shows)}"
        spark.sql(f"SELECT explode(sequence({self._bound('b_lo')}, {self._bound('b_hi')})) AS time") \
            .createOrReplaceTempView(n["times"])
        atoms = spark.sql(f"SELECT time, atom FROM {cur} WHERE atom IS NOT NULL{shown} "
                          f"UNION ALL SELECT t.time, b.atom FROM {n['times']} t CROSS JOIN {n['bg']} b")
        for d in derived:      # every derived row read (hidden ones as NULL): the model's shuffle computes them
            atom = "atom" if self.shows is None else f"CASE WHEN {_in('sig', self.shows)} THEN atom END AS atom"
            atoms = atoms.unionByName(d.selectExpr("time", atom))
        atoms.createOrReplaceTempView(n["times"] + "_a")
        # one aggregation (one shuffle): every time point has a row (empty ones too), its atoms, its first stamp;
        # without print_empty only the time points some record reached (a row of the batch's records) are kept
        keep = "" if self.print_empty else " HAVING max(recorded)"
        return spark.sql(
            f"SELECT time, sort_array(collect_set(atom)) AS atoms, min_by(stamp, skey) AS timestamp FROM ("
            f"SELECT time, atom, CAST(NULL AS STRING) AS stamp, CAST(NULL AS STRUCT<src: INT, file: STRING, "
            f"line: BIGINT>) AS skey, false AS recorded FROM {n['times']}_a "
            f"UNION ALL SELECT time, NULL, NULL, NULL, false FROM {n['times']} "
            f"UNION ALL SELECT time, NULL, stamp, CASE WHEN stamp IS NOT NULL THEN struct(src, file, line) END, true "
            f"FROM {cur}) "
            f"GROUP BY time{keep}")

    def _history_sql(self, lo: int, hi: int, derived: list) -> str:
        """History rows of the next entry: persistent atoms of observed predicates at the last max-window points."""
        n = self.names
        select = ("SELECT time, CAST(NULL AS ARRAY<STRING>), CAST(NULL AS STRING), sig, atom, args, "
                  "CAST(NULL AS INT), CAST(NULL AS STRING), CAST(NULL AS BIGINT), CAST(NULL AS STRING), "
                  "CAST(NULL AS STRING), 'history'")
        observed = _in("sig", self.observed_all)
        sources = [f"SELECT time, sig, atom, args FROM {n['prevh']}"]
        if hi >= lo:
            sources.append(f"SELECT time, sig, atom, args FROM {n['cur']}_c WHERE atom IS NOT NULL AND {observed}")
            for i, _d in enumerate(derived):
                view = f"{n['cur']}_d{i}"
                _d.where(f"persistent AND {observed}").select("time", "sig", "atom", "args") \
                    .createOrReplaceTempView(view)
                sources.append(f"SELECT * FROM {view}")
        union = " UNION ALL ".join(sources)
        return (f"{select} FROM (SELECT DISTINCT * FROM ({union}) WHERE time > {self._bound('b_cut')} "
                f"AND {observed})")

    # --- end of input --------------------------------------------------------------------------------------
    def close(self, last):
        """Evaluate what is still waiting: every time point up to the latest one any source reached."""
        meta = self._meta(last)
        closed = int(meta["closed"])
        hi = max((int(v) for v in meta["maxtime"].values()), default=closed)
        if hi <= closed:
            return None
        spark = self.spark
        self._views(spark, last)
        self._bounds(spark, closed, closed + 1, hi)
        n = self.names
        spark.sql(f"SELECT * FROM {n['prevp']}").createOrReplaceTempView(n["allrows"])
        origin = {int(k): v for k, v in meta["origin"].items()}
        with session_conf(spark, dict(BATCH_CONF, **{"spark.sql.shuffle.partitions": str(self.partitions)})):
            model, _derived, _metrics = self._evaluate(spark, closed + 1, hi, self._clock_origin(origin))
            # cached: the sink writes the model after this returns (``finish`` releases the caches)
            model = model.persist()
            self._persisted.append(model)
            model.count()
            return model

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self._release(self.spark)

    def _release(self, spark) -> None:
        for frame in self._persisted:
            frame.unpersist()
        self._persisted.clear()


def segments(topology: Topology) -> list[list[int]]:
    """Consecutive stages evaluated in one pass: all in one partition, or keyed alike (one key position per
    predicate across them, and every predicate a stage reads from an earlier one of the pass derived keyed
    at that position), so no repartition is needed between them."""
    out: list[list[int]] = []
    for k, stage in enumerate(topology.stages):
        if out and _joins(topology, out[-1], stage):
            out[-1].append(k)
        else:
            out.append([k])
    return out


def _joins(topology: Topology, segment: list[int], stage) -> bool:
    before = [topology.stages[i] for i in segment]
    merged = merged_positions(before)
    if merged is None or not stage.key.keyed:
        return merged is None and not stage.key.keyed
    mine = dict(stage.key.positions)
    if any(p in merged and merged[p] != i for p, i in mine.items()):
        return False
    derived = {h for s in before for h in s.heads}
    return all(p in merged for p in set(stage.inputs) | {w.observed for w in stage.windows} if p in derived)


def _stage_task(key: tuple, stage_value, lo: int, hi: int, partitions: int, strategy: str, with_args=None,
                clock_origin=None):
    """The function each partition of a stage runs (in an executor's Python worker)."""
    def task(pdf):
        import pandas as pd

        from srtopo.rules.partition import CURRENT, evaluator
        part = int(pdf["part"].iloc[0])
        ev = evaluator(key + (part, partitions), stage_value.value, part, partitions, strategy)
        rows = zip(pdf["kind"], pdf["time"], pdf["atom"], pdf["persistent"])
        out = ev.run(lo, hi, rows, with_args, clock_origin)
        records_in = int((pdf["kind"] == CURRENT).sum())
        out.append((-1, None, None, False, [str(records_in), str(len(out))]))     # the metrics row
        return pd.DataFrame(out, columns=["time", "sig", "atom", "persistent", "args"])
    return task

