"""Rule topologies on Spark: the micro-batch of a chain of rule stages, run on the driver of ``spark.streaming``.

A micro-batch is ONE Spark job (docs/spark.md, "Rules on Spark"):

1. the batch's lines are parsed and timed by Python in the executors (``rules.partition.parse_pass``: each
   source's time point 0 comes from the store's meta): a row per atom of a timed record, a row per malformed
   line, and, once for each partition of the first segment, a row per record (its source, place and time
   point) and per source its statistics;
2. with the previous entry's pending records and history, the rows go through the segments in order
   (``segments``: consecutive stages keyed alike run in one pass), each routed to its key partition
   (``pmod(crc32(key argument), n)``, one partition for unkeyed segments; rows a segment does not read are
   spread) where ``rules.partition.segment_pass`` runs: the first segment's tasks judge the records in each
   source's order from the clocks in the store's meta (``rules.partition.judge``, ``ir.lateness``: late
   and far-ahead records are dropped and rejected) and compute the time points to evaluate (up to the last one
   no unfinished source may still send a record for, empty ones included), and every segment evaluates them
   with one clingo call per time point for all the keys of its partition;
3. the last segment's rows become the store entry in ONE write (JSON lines from one task, a directory per
   kind: model, history, pending, rejected): a model per evaluated time point (its partitions' parts merged:
   every atom of the time point, ``#show`` applied, sorted), the persistent atoms of the observed predicates at
   the time points it evaluated (a delta: the meta names the earlier entries still in the windows' reach, and
   every ``rules.batch.CHAIN_LIMIT`` entries one holds the whole history again), the records still waiting, the
   rejected records; the batch's meta (bounds, per-source progress, counts) reaches the driver through an
   Observation of that write.

Batch b reads only the entry of the last completed batch, so a replay rewrites the same files.

A micro-batch of at most ``driver_lines`` lines is evaluated on the driver instead, by the same passes in one
partition, into the same entry (``rules.batch``): Spark's cost per stage is larger than such a batch's work.
"""
from __future__ import annotations

import hashlib
import json
import time as _time
import uuid
from fractions import Fraction
from typing import ClassVar, Sequence

from srtopo.errors import UnsupportedByRunner
from srtopo.io.sources import AtomLog, Lines, Timeline, TntFiles
from srtopo.ir import records
from srtopo.ir.topology import Topology
from srtopo.rules.batch import CHAIN_LIMIT, DriverPasses, first_records, history_chain, next_chain
from srtopo.rules.ir import UNIT_SECONDS
from srtopo.rules.partition import (
    BOUNDS,
    CURRENT,
    DERIVED,
    HISTORY,
    KEPT_HISTORY,
    META,
    METRICS,
    MODEL,
    PENDING,
    POINT,
    REJECTED,
    ROW_FIELDS,
    BatchPlan,
    UNSATISFIABLE,
    SegmentSpec,
    fact_signature,
    merged_positions,
    segment_topology,
)
from srtopo.rules.timestamps import unit_micros
from srtopo.runners.spark.kind import ModelKind
from srtopo.runners.spark.runner import DRIVER_BYTES, DRIVER_LINES
from srtopo.runners.spark.sinks import REJECTED_COLUMNS, WrittenFiles
from srtopo.runners.spark.sql import sql_string as q
from srtopo.runners.spark.streaming import (
    BatchOutcome,
    MicroBatchJob,
    columns,
    empty_frame,
    session_conf,
)

#: the rows between the passes of a micro-batch (``rules.partition.ROW_FIELDS``): atoms, history, statistics,
#: bounds, and what the last segment emits (model parts, history, pending records, meta, metrics)
SEGMENT_COLUMNS = ("kind STRING, time BIGINT, sig STRING, atom STRING, args ARRAY<STRING>, persistent BOOLEAN, "
                   "src INT, source STRING, line BIGINT, stamp STRING, atoms ARRAY<STRING>, text STRING, "
                   "reason STRING, part INT")
#: a model line: ``unsatisfiable`` is true where the choice part has no answer set, else null (left out)
MODEL_COLUMNS = "time BIGINT, atoms ARRAY<STRING>, timestamp STRING, unsatisfiable BOOLEAN"
#: a log timestamp as its JSON value (``records.Model.to_dict``, ``records.INTEGER_TEXT``): a number if it is an
#: integer written plainly, else a string. Written as a VARIANT, so Spark's JSON writer gives the field either type, row by row; read back
#: as STRING, a number is its digits again
INTEGER_TEXT = f"^({records.INTEGER_TEXT.pattern})$"


def _json_stamp(expr: str) -> str:
    """The timestamp as a VARIANT; NULL (left out of the line, as the local runner leaves it) where a time point
    has none (no record reached it), not a JSON null."""
    return (f"parse_json(CASE WHEN {expr} IS NULL THEN NULL WHEN {expr} RLIKE {q(INTEGER_TEXT)} THEN {expr} "
            f"ELSE substring(to_json(array({expr})), 2, length(to_json(array({expr}))) - 2) END)")


#: a history row of a store entry
HISTORY_COLUMNS = "time BIGINT, sig STRING, atom STRING, args ARRAY<STRING>"
#: a store entry's rows (JSON lines, one directory per kind, null fields left out): the columns are named and
#: ordered so that a model row is the sink's model line (time, atoms, timestamp) and a rejected row the sink's
#: rejected line (source, line, text, reason); the sink copies those files as they are
STORED_COLUMNS = ("time BIGINT, atoms ARRAY<STRING>, timestamp STRING, unsatisfiable BOOLEAN, sig STRING, "
                  "atom STRING, args ARRAY<STRING>, src INT, source STRING, line BIGINT, text STRING, reason STRING, "
                  "kind STRING")
#: the columns a segment's tasks receive: every row field but ``atoms``, which only the last segment's model
#: rows carry (an all-null ARRAY column costs Spark's Arrow writer ~4 us per row: 0.5 s per micro-batch of
#: 120k rows per task, measured on local[2])
SEGMENT_INPUT = tuple(name for name in ROW_FIELDS[:-1] if name != "atoms")
#: evaluated inside the batch: one task per partition (no coalescing), the stage outputs read twice, uncompressed
BATCH_CONF = {"spark.sql.adaptive.enabled": "false", "spark.sql.inMemoryColumnarStorage.compressed": "false"}
#: the store write: task output committed in place (the entry counts only once its meta is written after it, and
#: a replay overwrites it whole) and no _SUCCESS file: together ~40 ms less per batch on local[2]
COMMIT_CONF = {"mapreduce.fileoutputcommitter.algorithm.version": "2",
               "mapreduce.fileoutputcommitter.marksuccessfuljobs": "false"}


#: a rule source's lines as the stream hands them to a batch: parsed in the batch (its time points depend on
#: the store's meta), by Python in the executors
LINE_COLUMNS = "src INT, file STRING, line BIGINT, raw STRING, fmt STRING, dup BOOLEAN, fo BIGINT"
LINE_FIELDS = tuple(name for name, _type in columns(LINE_COLUMNS))
ORIGIN_COLUMNS = "src INT, file STRING, line BIGINT, fo BIGINT, skind STRING, sval BIGINT"


def origins(lines) -> dict:
    """Each source's time point 0, (kind, value) of its first accepted record with a timestamp in the source's
    order (``rules.partition.record_order``), needed before its records can be timed: one Spark stage, each
    task handing back its own first record per source (a handful of rows), the earliest taken on the driver.
    A socket's lines come in one partition in arrival order (numbered as ``parse_pass`` numbers them)."""
    from srtopo.rules.partition import record_order
    schema = arrow_schema(ORIGIN_COLUMNS)

    def first(batches):
        from srtopo.rules.batch import first_records
        found = first_records(row for batch in batches for row in _arrow_rows(batch, LINE_FIELDS))
        yield _arrow_batch([(src,) + record for src, record in found.items()], schema)
    found: dict = {}
    for r in lines.mapInArrow(first, ORIGIN_COLUMNS).collect():
        key = record_order(r["src"], r["fo"], r["file"], r["line"])
        if r["src"] not in found or key < found[r["src"]][0]:
            found[r["src"]] = (key, [r["skind"], int(r["sval"])])
    return {src: value for src, (_key, value) in found.items()}


def collect_small(df, fields, lines: int, size: int) -> list[tuple] | None:
    """The batch's lines as tuples of ``fields`` if there are at most ``lines`` of them and ``size`` bytes of
    text, else None (a job that stops after ``lines + 1`` rows: cheap next to the executors' plan)."""
    if lines <= 0:
        return None
    rows = df.limit(lines + 1).collect()
    if len(rows) > lines or sum(len(r["raw"] or "") for r in rows) > size:
        return None
    return [tuple(r[f] for f in fields) for r in rows]


def line_frame(spark, rows: list[tuple]):
    """Lines held on the driver (``LINE_FIELDS`` tuples) as a DataFrame of ``LINE_COLUMNS`` (through Arrow)."""
    import pyarrow as pa
    schema = arrow_schema(LINE_COLUMNS)
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    table = pa.Table.from_arrays([pa.array(v, type=f.type) for v, f in zip(columns, schema)], schema=schema)
    return spark.createDataFrame(table)


#: rows per Arrow batch a parse task hands back
_CHUNK = 20000


def parse_task(origin: dict, unit_us: int, number_scale, width: int, batch: int):
    """The function that parses and times a batch's lines in the executors (``rules.partition.parse_pass``)."""
    schema = arrow_schema(SEGMENT_COLUMNS)

    def parse(batches):
        from itertools import islice

        from srtopo.rules.partition import parse_pass

        def lines():
            for batch in batches:
                yield from _arrow_rows(batch, LINE_FIELDS)
        rows = parse_pass(lines(), origin, unit_us, number_scale, width, batch)
        while chunk := list(islice(rows, _CHUNK)):
            yield _arrow_batch(chunk, schema)
    return parse


#: partition count -> a grouping value per shuffle partition (``representatives``)
_REPRESENTATIVES: dict[int, list[int]] = {}


def representatives(spark, n: int) -> list[int]:
    """Per partition p, a grouping value that Spark's hash partitioning sends to shuffle partition p: one
    group per task, whatever Murmur3 does with small integers (found once per driver and partition count:
    they depend on Spark's hash function alone)."""
    if n not in _REPRESENTATIVES:
        rows = spark.sql(f"SELECT p, min(id) AS r FROM (SELECT id, pmod(hash(id), {n}) AS p FROM range({n * 64})) "
                         "GROUP BY p").collect()
        reps = {int(r["p"]): int(r["r"]) for r in rows}
        _REPRESENTATIVES[n] = [reps[p] for p in range(n)]
    return _REPRESENTATIVES[n]


class RulesJob(MicroBatchJob):
    output_columns = MODEL_COLUMNS

    def __init__(self, spark, topology: Topology, lateness: int | None, n_sources: int, partitions: int,
                 strategy: str = "auto", history: int = 10000, print_empty: bool = True,
                 max_gap: int | None = None, driver_lines: int = DRIVER_LINES):
        super().__init__(spark, history)
        self.topology = topology
        #: a micro-batch of at most this many lines is evaluated on the driver (0: always in the executors)
        self.driver_lines = driver_lines
        self.print_empty = print_empty
        number_unit = topology.source.number_unit
        #: numeric timestamps: time points per number unit as a fraction (None: a number counts time points)
        self.number_scale = None if number_unit is None else \
            Fraction(UNIT_SECONDS[number_unit]) / Fraction(UNIT_SECONDS[topology.source.unit])
        self.lateness = lateness
        self.max_gap = max_gap
        self.n_sources = max(1, n_sources)
        self.partitions = max(1, int(partitions))
        self.strategy = strategy
        self.unit = unit_micros(UNIT_SECONDS[topology.source.unit])
        self.segments = segments(topology)
        self.positions = [merged_positions([topology.stages[i] for i in seg]) for seg in self.segments]
        self.specs = self._specs()
        self.stage_json = [json.dumps(segment_topology(topology, seg).to_dict()) for seg in self.segments]
        # a worker's evaluators are keyed by what they evaluate, not by the query: a restarted query, or a
        # service's next query of the same program, finds them built (an evaluator's solvers are functions of
        # their inputs and its history comes from the rows given, so sharing one is safe; the driver's passes go
        # on from an evaluator's own history only while it is marked with the entry they continue, ``rules.batch``)
        self.stage_keys = [hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] for text in self.stage_json]
        self.names = {k: f"srtopo_r{k}_{self.uid}" for k in ("prev", "history", "out")}
        #: its sources' records carry time points of their own (a chain's statements): no time point 0 to find
        self.given_times = False
        self._broadcasts = None
        self._persisted: list = []
        self.driver = DriverPasses(self)

    def _specs(self) -> list[SegmentSpec]:
        topology = self.topology
        reads, observed, reach = [], [], []
        for segment in self.segments:
            stages = [topology.stages[i] for i in segment]
            reads.append(frozenset(p for s in stages for p in set(s.inputs) | {w.observed for w in s.windows}))
            observed.append(frozenset(w.observed for s in stages for w in s.windows))
            reach.append(max((max(w.distances) for s in stages for w in s.windows), default=0))
        observed_all = frozenset(o for obs in observed for o in obs)
        shows = topology.output.shows
        shows = None if shows is None else frozenset(shows)
        background = tuple(f for f in topology.source.background if shows is None or fact_signature(f) in shows)
        width = [self.partitions if p is not None else 1 for p in self.positions]
        out = []
        for k in range(len(self.segments)):
            last = k == len(self.segments) - 1
            # argument texts only where a reader routes rows by them: a later segment or the history
            with_args = frozenset(p for j in range(k + 1, len(self.segments)) for p in reads[j]) | observed_all
            out.append(SegmentSpec(k, last, width[k], 0 if last else width[k + 1], reads[k], observed[k], reach[k],
                                   with_args, observed_all, max(reach, default=0), shows, background,
                                   self.print_empty))
        return out

    # --- setup ----------------------------------------------------------------------------------------
    def _stage_values(self):
        if self._broadcasts is None:
            context = self.spark.sparkContext
            self._broadcasts = [context.broadcast(text) for text in self.stage_json]
        return self._broadcasts

    def _representatives(self, spark) -> list[int]:
        return representatives(spark, self.partitions)

    def _previous(self, spark, previous, chain) -> None:
        """The previous entry's pending records and the history of its chain (``rules.batch.history_chain``) as
        views, or empty ones."""
        pending = self.store.part(previous[0], "pending") if previous is not None else None
        if pending is not None and self.fs.exists(pending):
            spark.read.schema(STORED_COLUMNS).json(pending).createOrReplaceTempView(self.names["prev"])
        else:
            empty_frame(spark, STORED_COLUMNS).createOrReplaceTempView(self.names["prev"])
        paths = [p for p in (self.store.part(b, "history") for b, _hi in chain) if self.fs.exists(p)]
        if paths:
            spark.read.schema(HISTORY_COLUMNS).json(paths).createOrReplaceTempView(self.names["history"])
        else:
            empty_frame(spark, HISTORY_COLUMNS).createOrReplaceTempView(self.names["history"])

    @staticmethod
    def _meta(previous) -> dict:
        """The store's meta before the batch; each source's clock (``ir.lateness``) as JSON, and the stream's
        first time point. An entry of an earlier version kept each source's largest and completed time points
        instead, and its stream started at time point 0."""
        if previous is None:
            return {"origin": {}, "clocks": {}, "closed": -1, "first": None}
        meta = previous[1]
        if "clocks" not in meta:
            meta = dict(meta, clocks={k: [int(v), int(meta["complete"].get(k, v - 1)) == int(v), None]
                                      for k, v in meta["maxtime"].items()})
        if "first" not in meta:
            meta = dict(meta, first=0)
        return meta

    def _plan(self, meta: dict, origin: dict, fixed_hi: int | None = None, snapshot: bool = False,
              upto: int | None = None) -> BatchPlan:
        return BatchPlan(int(meta["closed"]), dict(meta["clocks"]), self.n_sources, self.lateness, fixed_hi,
                         self._clock_origin(origin), self.max_gap, snapshot, meta.get("first"), upto)

    # --- the micro-batch --------------------------------------------------------------------------------
    def batch(self, df, batch_id: int, spark, previous, upto: int | None = None,
              given: list[tuple] | None = None) -> BatchOutcome:
        """One Spark job: parse and time the records, route them with the previous entry's pending records and
        history through the segments, and write the new entry. The bounds of what is evaluated are computed
        inside the first segment's tasks from statistics rows that every partition receives, so the driver
        never waits for an intermediate result (a statistics job and the DataFrames built after it cost
        ~0.3 s per micro-batch). A small batch is evaluated on the driver instead (``rules.batch``).
        ``upto``: evaluate up to this time point, whatever the sources completed (a chain closes its time points
        itself; the records are judged all the same). ``given``: the batch's lines (``LINE_FIELDS`` tuples)
        already on the driver, instead of ``df``."""
        started = _time.perf_counter()
        meta = self._meta(previous)
        closed = int(meta["closed"])
        origin = {int(k): v for k, v in meta["origin"].items()}
        target = self.store.entry(batch_id)
        token = uuid.uuid4().hex
        chain = history_chain(previous)
        snapshot = len(chain) >= CHAIN_LIMIT
        if given is not None:
            small = len(given) <= self.driver_lines and sum(len(r[3] or "") for r in given) <= DRIVER_BYTES
            lines = given if small else None
            if not small:
                df = line_frame(spark, given)
        else:
            lines = collect_small(df, LINE_FIELDS, self.driver_lines, DRIVER_BYTES)
        needs_origin = len(origin) < self.n_sources and not self.given_times
        if lines is not None:
            if needs_origin:
                for src, found in first_records(lines).items():
                    origin.setdefault(int(src), [found[3], int(found[4])])
            outcome = self.driver.run(self._plan(meta, origin, snapshot=snapshot, upto=upto), lines, origin, batch_id,
                                      previous, chain, target, token)
        else:
            try:
                with session_conf(spark, dict(BATCH_CONF, **{"spark.sql.shuffle.partitions": str(self.partitions)})):
                    if needs_origin:      # until every source's time point 0 is known: parsed twice
                        for src, value in origins(df).items():
                            origin.setdefault(int(src), value)
                    self._previous(spark, previous, chain)
                    plan = self._plan(meta, origin, snapshot=snapshot, upto=upto)
                    records = df.mapInArrow(parse_task({k: tuple(v) for k, v in origin.items()}, self.unit,
                                                        self.number_scale, self.specs[0].partitions, int(batch_id)),
                                             SEGMENT_COLUMNS)
                    outcome = self._write(spark, plan, target, records)
            finally:
                self._release(spark)
        written = _time.perf_counter()
        got = json.loads(outcome["meta"])
        hi = int(got["hi"])
        chain = next_chain(chain, snapshot, batch_id, hi, self.specs[-1].max_reach, int(outcome.get("h") or 0) > 0)
        first = got.get("first")
        meta = {"batch": int(batch_id), "origin": {str(k): v for k, v in sorted(origin.items())},
                "clocks": got["clocks"], "closed": hi, "token": token, "history": chain,
                "needs": min((b for b, _hi in chain), default=int(batch_id)), "first": first}
        lo = closed + 1 if first is None else max(closed + 1, first)
        n_models = max(0, hi - lo + 1)
        record = {"phases_s": {"plan_write": round(written - started, 4)},
                  "evaluated_on": "driver" if lines is not None else "executors",
                  "tuples": got["atoms"], "malformed": got["malformed"], "late": got["late"],
                  "reports": n_models, "evaluated": [lo, hi] if n_models else None,
                  "stages": self._segment_metrics(outcome, n_models > 0)}
        meta["record"] = record         # handed over again if the batch is replayed (``reuse``)
        return self._outcome(target, meta, record)

    def _outcome(self, target: str, meta: dict, record: dict) -> BatchOutcome:
        outputs = WrittenFiles(f"{target}/kind=model", MODEL_COLUMNS) if record["reports"] else None
        rejected = None
        if record["malformed"] + record["late"]:
            rejected = WrittenFiles(f"{target}/kind=rejected", REJECTED_COLUMNS)
        return BatchOutcome(meta, record, outputs, rejected)

    def reuse(self, batch_id: int, meta: dict) -> BatchOutcome | None:
        """A replayed batch hands over the models its complete entry holds: a choice part may have more than one
        answer set, and solving again could give another one for a time point already written."""
        if "record" not in meta:        # an entry of an earlier version: computed again
            return None
        return self._outcome(self.store.entry(batch_id), meta, dict(meta["record"], reused=True))

    def _write(self, spark, plan: BatchPlan, target: str, records=None) -> dict:
        """Run the segments over the batch's records (rows of ``parse_task``) and the previous entry (view
        ``prev``) and write the entry at ``target``; returns the observed meta (JSON text) and per-segment
        metrics."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F
        n = self.names
        frame = spark.sql(self._first_input_sql(plan))
        if records is not None:
            frame = frame.unionByName(records)
        reps = self._representatives(spark)
        rep_array = "array(" + ", ".join(f"CAST({r} AS BIGINT)" for r in reps) + ")"
        values = self._stage_values()
        for k, spec in enumerate(self.specs):
            frame = frame.selectExpr(*SEGMENT_INPUT, f"{self._part_expr(k)} AS part") \
                .selectExpr("*", f"element_at({rep_array}, part + 1) AS rep")
            task = _segment_task((self.stage_keys[k], k), values[k], spec, plan, self.strategy)
            frame = frame.groupBy("rep").applyInArrow(task, SEGMENT_COLUMNS)
        # cached: the model, the history and the pending records are three reads of the last segment's rows
        frame = frame.persist()
        self._persisted.append(frame)
        frame.createOrReplaceTempView(n["out"])
        observation = Observation()
        exprs = [F.expr(f"max(CASE WHEN kind = {q(META)} THEN text END)").alias("meta"),
                 F.expr(f"count(CASE WHEN kind = {q(KEPT_HISTORY)} THEN 1 END)").alias("h")]
        exprs += [F.expr(f"sum(CASE WHEN kind = {q(METRICS)} AND line = {k} THEN CAST(args[{i}] AS BIGINT) END)")
                  .alias(f"{name}{k}") for k in range(len(self.segments)) for i, name in ((0, "r"), (1, "d"))]
        stored = spark.sql(self._stored_sql()).observe(observation, *exprs) \
            .where(f"kind <> {q(META)} AND kind <> {q(METRICS)}")
        # one task, a file per kind: the entry is small next to the work before it, and a write of many tiny
        # files from every task cost twice as long (measured per batch on local[2])
        with session_conf(spark, COMMIT_CONF):
            stored.coalesce(1).write.mode("overwrite").partitionBy("kind").json(target)
        return observation.get

    def _first_input_sql(self, plan: BatchPlan) -> str:
        """The first segment's rows besides the batch's records: the previous entry's pending records and history,
        each time point they reach for every partition, and a bounds row per partition (NULL: the tasks compute
        the bounds; the end of input fixes them)."""
        n = self.names
        width = self.specs[0].partitions
        hi = "NULL" if plan.fixed_hi is None else str(int(plan.fixed_hi))
        none = "CAST(NULL AS {}) AS {}"
        pieces = [f"SELECT {q(CURRENT)} AS kind, time, sig, atom, args, true AS persistent, src, source, line, "
                  f"timestamp AS stamp, {none.format('ARRAY<STRING>', 'atoms')}, {none.format('STRING', 'text')}, "
                  f"{none.format('STRING', 'reason')}, {none.format('INT', 'part')} "
                  f"FROM {n['prev']}",
                  f"SELECT {q(HISTORY)}, time, sig, atom, args, true, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL "
                  f"FROM {n['history']}",
                  f"SELECT {q(BOUNDS)}, CAST({hi} AS BIGINT), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                  f"NULL, NULL, CAST(id AS INT) FROM range({width})",
                  f"SELECT {q(POINT)}, time, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                  f"CAST(id AS INT) FROM (SELECT DISTINCT time FROM {n['prev']}) CROSS JOIN range({width})"]
        return " UNION ALL ".join(f"({p})" for p in pieces)

    def _stored_sql(self) -> str:
        """The entry's rows (STORED_COLUMNS) from the last segment's rows: one model row per time point (its
        partitions' parts merged), the history (an atom derived in several partitions is kept once per partition:
        a set again in the next batch's tasks, which receive equal history rows in one partition), the pending
        records, the rejected records, and the meta and metrics rows (observed, then dropped)."""
        n = self.names
        none = "CAST(NULL AS {}) AS {}"
        rest = (f"{none.format('STRING', 'sig')}, {none.format('STRING', 'atom')}, "
                f"{none.format('ARRAY<STRING>', 'args')}, {none.format('INT', 'src')}, "
                f"{none.format('STRING', 'source')}, {none.format('BIGINT', 'line')}, "
                f"{none.format('STRING', 'text')}, {none.format('STRING', 'reason')}, 'model' AS kind")
        if self.specs[-1].partitions == 1:      # one task made each model whole: no aggregation, no shuffle
            keep = "" if self.print_empty else " AND persistent"
            model = (f"SELECT time, atoms, {_json_stamp('stamp')} AS timestamp, "
                     f"CASE WHEN reason = {q(UNSATISFIABLE)} THEN true END AS unsatisfiable, {rest} FROM {n['out']} "
                     f"WHERE kind = {q(MODEL)}{keep}")
        else:       # a time point with no answer set in one partition has none: it shows no atom
            keep = "" if self.print_empty else " HAVING max(persistent)"
            no_answer = f"max(reason) = {q(UNSATISFIABLE)}"
            model = (f"SELECT time, CASE WHEN {no_answer} THEN CAST(array() AS ARRAY<STRING>) "
                     f"ELSE sort_array(array_distinct(flatten(collect_list(atoms)))) END AS atoms, "
                     f"{_json_stamp('min_by(stamp, CASE WHEN stamp IS NOT NULL THEN struct(src, source, line) END)')} "
                     f"AS timestamp, CASE WHEN {no_answer} THEN true END AS unsatisfiable, "
                     f"{rest} FROM {n['out']} WHERE kind = {q(MODEL)} GROUP BY time{keep}")
        pieces = [
            model,
            f"SELECT time, NULL, NULL, NULL, sig, atom, args, NULL, NULL, NULL, NULL, NULL, 'history' "
            f"FROM {n['out']} WHERE kind = {q(KEPT_HISTORY)}",
            f"SELECT time, NULL, {_json_stamp('stamp')}, NULL, sig, atom, args, src, source, line, NULL, NULL, "
            f"'pending' FROM {n['out']} WHERE kind = {q(PENDING)}",
            f"SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, source, line, text, reason, 'rejected' "
            f"FROM {n['out']} WHERE kind = {q(REJECTED)}",
            f"SELECT NULL, NULL, NULL, NULL, NULL, NULL, args, NULL, NULL, line, text, NULL, kind "
            f"FROM {n['out']} WHERE kind = {q(META)} OR kind = {q(METRICS)}"]
        return " UNION ALL ".join(f"({p})" for p in pieces)

    # --- routing ----------------------------------------------------------------------------------------
    def _part_expr(self, k: int) -> str:
        """The partition of a row in segment k: preset (bounds, statistics), the key argument's hash for atoms of
        a keyed predicate, else spread by the row's content (rows that only pass through)."""
        width = self.specs[k].partitions
        positions = self.positions[k]
        if positions is None:
            return "CAST(coalesce(part, 0) AS INT)"
        cases = " ".join(f"WHEN {q(sig)} THEN pmod(crc32(CAST(element_at(args, {pos + 1}) AS BINARY)), {width})"
                         for sig, pos in sorted(positions.items()))
        spread = f"pmod(hash(kind, time, atom, source, line), {width})"
        keyed = f"CASE WHEN kind IN ({q(CURRENT)}, {q(DERIVED)}, {q(HISTORY)}) THEN CASE sig {cases} END END"
        return f"CAST(coalesce(part, {keyed}, {spread}) AS INT)"

    @staticmethod
    def _clock_origin(origin: dict):
        """Time point 0's timestamp for @now: the first source's (kind, value) as ``rules.clock`` reads it."""
        return tuple(origin[min(origin)]) if origin else None

    def _segment_metrics(self, observed: dict, evaluated: bool) -> dict:
        out = {}
        for k, segment in enumerate(self.segments):
            out[self.topology.stages[segment[0]].id] = {
                "records_in": int(observed.get(f"r{k}") or 0) if evaluated else 0,
                "derived": int(observed.get(f"d{k}") or 0) if evaluated else 0, "tasks": self.specs[k].partitions,
                "segment": [self.topology.stages[i].id for i in segment]}
        return out

    # --- end of input --------------------------------------------------------------------------------------
    def close(self, last):
        """Evaluate what is still waiting (every time point up to the latest one any source reached) into the
        store entry ``final``; returns its models."""
        meta = self._meta(last)
        closed = int(meta["closed"])
        hi = max((int(v[0]) for v in meta["clocks"].values() if v[0] is not None), default=closed)
        if hi <= closed:
            return None
        spark = self.spark
        origin = {int(k): v for k, v in meta["origin"].items()}
        target = self.store.entry("final")
        done = f"{target}/_meta.json"
        # the end of input closed after the same batch before (a run stopped after it, or run again): its models
        # are handed over again rather than solved again (``reuse``)
        if self.fs.read_text(done) == json.dumps({"after": int(last[0])}):
            return WrittenFiles(f"{target}/kind=model", MODEL_COLUMNS)
        if (last[1].get("record") or {}).get("evaluated_on") == "driver":
            # the last batch was evaluated on the driver: so is the rest, with no records to add, as a chain's end
            # of input does (a Spark job here took ~3 s of a small run on local[2])
            self.driver.run(self._plan(meta, origin, upto=hi), [], origin, int(last[0]) + 1, last,
                            history_chain(last), target, uuid.uuid4().hex)
        else:
            try:
                with session_conf(spark, dict(BATCH_CONF, **{"spark.sql.shuffle.partitions": str(self.partitions)})):
                    self._previous(spark, last, history_chain(last))
                    self._write(spark, self._plan(meta, origin, fixed_hi=hi), target)
            finally:
                self._release(spark)
        self.fs.write_text(done, json.dumps({"after": int(last[0])}))
        return WrittenFiles(f"{target}/kind=model", MODEL_COLUMNS)

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


def _segment_task(key: tuple, stage_value, spec: SegmentSpec, plan: BatchPlan, strategy: str):
    """The function each partition of a segment runs (in an executor's Python worker)."""
    schema = arrow_schema(SEGMENT_COLUMNS)

    def task(table):
        from srtopo.rules.partition import ROW_FIELDS, evaluator, segment_pass
        rows = _arrow_rows(table, ROW_FIELDS)
        part = int(rows[0][-1])
        ev = evaluator(key, stage_value.value, part, spec.partitions, strategy)
        return _arrow_batch(segment_pass(spec, plan, part, rows, ev), schema, table=True)
    return task


# --- rows between Spark and the Python passes: Arrow columns in, Arrow columns out (no pandas: its object
# columns, NaN for null integers and numpy arrays cost more than the passes' own work on big batches)
_ARROW_TYPES = {"STRING": "string", "BIGINT": "int64", "INT": "int32", "BOOLEAN": "bool_"}


def arrow_schema(ddl: str):
    """The Arrow schema of a flat ``"name TYPE, ..."`` schema (STRING, BIGINT, INT, BOOLEAN, ARRAY<STRING>)."""
    import pyarrow as pa
    return pa.schema([(name, pa.list_(pa.string()) if typ == "ARRAY<STRING>" else getattr(pa, _ARROW_TYPES[typ])())
                      for name, typ in columns(ddl)])


def _arrow_rows(batch, fields) -> list[tuple]:
    """An Arrow batch's (or table's) rows as tuples of Python values (None for null, and for a field the batch
    does not have), columns ``fields``."""
    names = set(batch.schema.names)
    missing = [None] * batch.num_rows
    return list(zip(*(batch.column(name).to_pylist() if name in names else missing for name in fields)))


def _arrow_batch(rows: list, schema, table: bool = False):
    """Rows (tuples in the schema's column order) as an Arrow record batch (or table)."""
    import pyarrow as pa
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    arrays = [pa.array(values, type=field.type) for values, field in zip(columns, schema)]
    return (pa.Table if table else pa.RecordBatch).from_arrays(arrays, schema=schema)


# --- the kind's Spark job (``srtopo.kinds``) ---------------------------------------------------------------

class RulesOnSpark(ModelKind):
    """Rules topologies on the Spark runner (``runners.spark.kind.SparkKind``)."""
    collector: ClassVar[str] = "latency"     # a time point per micro-batch
    event_time: ClassVar[bool] = True

    def check(self, topology: Topology, sources: Sequence, options) -> None:
        from srtopo.runners.spark.sources import refuse_pipe
        if options.partitions is not None and options.partitions < 1:
            raise UnsupportedByRunner(f"partitions must be >= 1, got {options.partitions}")
        for source in sources:
            if not isinstance(source, (AtomLog, Timeline, Lines)):
                raise UnsupportedByRunner(f"the spark runner does not read {type(source).__name__} sources for "
                                          "rules topologies", hint="give an I-DLV-sr log or JSON-lines file or "
                                          "directory, tcp://HOST:PORT, or time points in memory")
            if isinstance(source, AtomLog) and source.spec == "-":
                raise UnsupportedByRunner("the spark runner cannot read standard input",
                                          hint="give a file, a directory or tcp://HOST:PORT (or --engine local)")
            if isinstance(source, AtomLog):
                refuse_pipe(source.spec, "tcp://HOST:PORT")
        if topology.source.externals:     # a missing script or function is reported here, not by a task
            from srtopo.solving.externals import ExternalFunctions
            ExternalFunctions(topology.source.scripts, dict(topology.source.externals)).check(
                f for f, _where in topology.source.externals)

    @staticmethod
    def partitions(options, spark) -> int:
        return options.partitions or (int(spark.sparkContext.defaultParallelism) if spark is not None else 1)

    def stage_tasks(self, topology: Topology, options, spark) -> list[int]:
        n = self.partitions(options, spark)
        return [n if s.key.keyed else 1 for s in topology.stages]

    def describe(self, topology: Topology, options, master: str, tasks: list[int]) -> str:
        small = (f"micro-batches of at most {options.driver_lines} lines on the driver, larger ones in "
                 if options.driver_lines else "")
        return (f"spark rules on {master}: {small}one clingo task per key partition and time point, "
                f"stage partitions " + ",".join(map(str, tasks)))

    def sources(self, topology: Topology, sources: list, stage) -> list:
        """Time points held in memory are staged as JSON lines, other records held in memory as log lines."""
        from srtopo.rules.points import timeline_json_lines
        out = []
        for i, source in enumerate(sources):
            if isinstance(source, Timeline):
                lines = Lines(tuple(timeline_json_lines(source.points)), source.batches, source.name)
                out.append(AtomLog(stage(i, lines).path, "jsonl", files_per_batch=1))
                continue
            staged = stage(i, source)
            out.append(AtomLog(staged.path, "detect", 1) if isinstance(staged, TntFiles) else staged)
        return out

    def job(self, spark, topology: Topology, config, lateness, n_sources: int, options):
        return RulesJob(spark, topology, lateness, n_sources, self.partitions(options, spark),
                        strategy=options.strategy, print_empty=config.print_empty, max_gap=config.max_gap,
                        driver_lines=options.driver_lines)


JOB = RulesOnSpark()
