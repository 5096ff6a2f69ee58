"""Chains on Spark: ONE streaming query runs a chain's consistency stages, its saturation stage and its rule
stages, exactly-once with the store of ``spark.streaming`` (docs/spark.md, "Chains on Spark").

A micro-batch's records carry their statements (``spark.sources.statement_frame``). Per micro-batch:

1. the consistency stages run as a consistency topology's job does (``spark.consistency``: keyed by subject,
   closing the report times below the batch's watermark, on the driver for a small batch), into their own store
   entry (``store/consistency/<batch>``);
2. the statements of the time points the batch closes (the previous entry's waiting statements and the batch's
   accepted ones below the same bound) are withheld and saturated as Spark joins: a join with the batch's
   reports on (subject, time) and (object, time), then with the saturation stage's lookup tables (broadcast);
   the statements of later time points wait in the chain's entry (``store/<batch>/kind=pending``);
3. the saturated statements, as ``.tnt`` lines (and one empty JSON record per closed time point, which makes a
   time point whose statements were all withheld one the stream reached), are the input of the rule stages, run
   as a rules topology's job runs them (``spark.rules``: on the driver for a small batch, else key-partitioned
   clingo tasks) up to the last closed time point, into their own store entry (``store/rules/<batch>``).

Each part's entry depends only on the previous completed entries and the batch's input, so a replay after a
crash rewrites the same files; the chain's entry is completed after both, before anything reaches a sink. The
end of input closes what is still open into ``batch=final`` (the consistency part's last reports, the waiting
statements, the program's last time points).
"""
from __future__ import annotations

from dataclasses import replace

import json
import time as _time
from typing import ClassVar, Sequence

from srtopo.concepts import RDF_TYPE
from srtopo.errors import UnsupportedByRunner
from srtopo.io.sources import Lines, SocketLines, TntFiles
from srtopo.io.tnt import TIME_MIN
from srtopo.ir.records import Model, Report
from srtopo.ir.run import StageCounters
from srtopo.ir.topology import ConsistencyStage, RuleStage, SaturationStage, Topology
from srtopo.runners.spark.consistency import (
    PHYSICAL_PLANS,
    REPORT_COLUMNS,
    ConsistencyJob,
    ConsistencyOnSpark,
    driver_tuples,
    report_of,
)
from srtopo.runners.spark.kind import ModelKind
from srtopo.runners.spark.rules import (
    BATCH_CONF,
    LINE_FIELDS,
    MODEL_COLUMNS,
    SEGMENT_COLUMNS,
    RulesJob,
    RulesOnSpark,
    collect_small,
    history_chain,
    line_frame,
    parse_task,
)
from srtopo.runners.spark.runner import DRIVER_BYTES
from srtopo.runners.spark.sinks import REJECTED_COLUMNS, WrittenFiles
from srtopo.runners.spark.sources import STATEMENT_COLUMNS, statement_frame
from srtopo.runners.spark.sql import NEG, POS
from srtopo.runners.spark.sql import sql_string as q
from srtopo.runners.spark.store import BatchStore
from srtopo.runners.spark.streaming import BatchOutcome, MicroBatchJob, empty_frame, local_view, session_conf

#: a statement waiting for its time point to close (the chain's store entry, ``kind=pending``)
PENDING_COLUMNS = "time BIGINT, src INT, file STRING, line BIGINT, s STRING, p STRING, o STRING, lit STRING"
#: the saturation stage's lookup tables: a class to a superclass; a property to what it entails, by direction
#: (f: a q b, b: b q a, d: a rdf:type q, r: b rdf:type q)
TYPES_COLUMNS = "c STRING, d STRING"
PROPERTIES_COLUMNS = "p STRING, q STRING, dir STRING"
#: the part of a report the withholding reads
REPORT_KEY_COLUMNS = "subject STRING, time BIGINT"
_TYPE = q(RDF_TYPE)


def _term(column: str) -> str:
    """An IRI column as N-Triples writes it (``<iri>``), a blank node as it is."""
    return f"CASE WHEN startswith({column}, '_:') THEN {column} ELSE concat('<', {column}, '>') END"


class ChainJob(MicroBatchJob):
    """One streaming query of a chain (the module docstring)."""
    output_columns = MODEL_COLUMNS

    def __init__(self, spark, topology: Topology, window: int | None, lateness: int | None, n_sources: int,
                 options, partitions: int, history: int = 10000):
        super().__init__(spark, history)
        consistency, saturation, rules = topology.parts()
        self.topology = topology
        self.saturation: SaturationStage = saturation
        self.consistency = ConsistencyJob(spark, consistency, window, lateness, options.physical_plan, n_sources,
                                          driver_tuples=driver_tuples(options, spark.sparkContext.master),
                                          carry=STATEMENT_COLUMNS)
        # the program's records are the closed time points' statements: never late, never far ahead
        self.program = RulesJob(spark, rules, None, 1, partitions, strategy=options.strategy,
                                print_empty=True, max_gap=None, driver_lines=options.driver_lines)
        self.program.given_times = True
        self.print_empty = True
        self.names = {k: f"srtopo_ch{k}_{self.uid}" for k in ("types", "props", "pending", "all", "bound", "rep",
                                                             "released", "flagged", "kept", "sat")}
        self._persisted: list = []
        #: (batch, waiting statements) the driver wrote into that batch's entry: the next batch's, if it
        #: continues from it, without reading them back
        self._held: tuple | None = None
        #: what the end of input added to the counters (``ChainOnSpark.final_counters``)
        self.final_extra: dict = {}

    # --- setup ----------------------------------------------------------------------------------------
    def _register_tables(self, session) -> None:
        """The saturation stage's lookup tables as views (LocalRelations, ``local_view``), once per session that
        does not hold them yet (``needs_views``)."""
        if not self.needs_views(session, [self.names["types"], self.names["props"]]):
            return
        stage = self.saturation
        types = [(c, d) for c, supers in stage.types for d in supers]
        props = [(p, x, direction) for p, *entailed in stage.properties
                 for direction, found in zip("fbdr", entailed) for x in found]
        local_view(session, types, TYPES_COLUMNS, self.names["types"])
        local_view(session, props, PROPERTIES_COLUMNS, self.names["props"])

    def start(self, frames, checkpoint, sinks, **kwargs):
        root = checkpoint.rstrip("/") + "/store"
        self.consistency.store = BatchStore(self.fs, root + "/consistency")
        self.program.store = BatchStore(self.fs, root + "/rules")
        self.consistency._sql = None
        self.consistency._register_tables(self.spark)
        self._register_tables(self.spark)
        return super().start(frames, checkpoint, sinks, **kwargs)

    def set_print_empty(self, value: bool) -> None:
        self.print_empty = self.program.print_empty = value

    # --- the micro-batch --------------------------------------------------------------------------------
    def batch(self, df, batch_id: int, spark, previous) -> BatchOutcome:
        started = _time.perf_counter()
        self._register_tables(spark)
        cons, prog = self.consistency, self.program
        prev_c = cons.store.completed_before(batch_id)
        prev_r = prog.store.completed_before(batch_id)
        target = self.store.entry(batch_id)
        held = self._held if self._held is not None and previous is not None and self._held[0] == previous[0] \
            else None
        self._held = None
        released: dict = {}

        def then(session, bounds, on_driver) -> None:   # the consistency part's views are alive
            began = _time.perf_counter()
            statements = (f"SELECT time, src, file, line, subject AS s, predicate AS p, object AS o, literal AS lit "
                          f"FROM {cons.names['new']} WHERE ik = 't' AND part = 0 AND NOT late")
            reports = cons.store.part(batch_id, "report")
            if on_driver:      # a small batch: its statements are withheld and saturated on the driver
                released.update(self._release_on_driver(session, int(bounds.hi), previous, held, target,
                                                        statements, reports, batch_id))
            else:
                released.update(self._release(session, int(bounds.hi), previous, held, target, statements, reports))
            released["seconds"] = _time.perf_counter() - began
        try:
            out_c = cons.batch(df, batch_id, spark, prev_c, then=then)
            cons.store.complete(batch_id, out_c.meta, prev_c)
            checked = _time.perf_counter()
            out_r = prog.batch(released.get("frame"), batch_id, spark, prev_r, upto=released["hi"] - 1,
                               given=released.get("lines"))
            prog.store.complete(batch_id, out_r.meta, prev_r)
        finally:
            self._unpersist()
        done = _time.perf_counter()
        record = self._record(out_c.record, out_r.record, released)
        record["phases_s"] = {"consistency": round(checked - started - released["seconds"], 4),
                              "withhold_saturate": round(released["seconds"], 4),
                              "program": round(done - checked, 4)}
        record["extra"].update(consistency_s=record["phases_s"]["consistency"],
                               saturation_s=record["phases_s"]["withhold_saturate"],
                               program_s=record["phases_s"]["program"])
        record["saturated_on"] = "driver" if "lines" in released else "spark"
        return self._outcome(batch_id, record)

    def _outcome(self, batch_id, record: dict) -> BatchOutcome:
        """What the batch hands to the sinks: files its parts' entries hold (a replay hands over the same)."""
        cons, prog = self.consistency.store, self.program.store
        models = WrittenFiles(prog.part(batch_id, "model"), MODEL_COLUMNS) if record["reports"] else None
        reports = WrittenFiles(cons.part(batch_id, "report"), REPORT_COLUMNS) if record["extra"]["reports"] else None
        rejected = []
        if record["rejected_c"]:
            rejected.append(WrittenFiles(cons.part(batch_id, "rejected"), REJECTED_COLUMNS))
        if record["rejected_r"]:
            rejected.append(WrittenFiles(prog.part(batch_id, "rejected"), REJECTED_COLUMNS))
        meta = {"batch": int(batch_id), "record": record}
        return BatchOutcome(meta, record, models, rejected or None, reports)

    def reuse(self, batch_id: int, meta: dict) -> BatchOutcome | None:
        """A replayed batch whose entry is complete hands over what its parts' entries hold (a choice part's
        answer sets, once written, are never solved again)."""
        if "record" not in meta:
            return None
        return self._outcome(batch_id, dict(meta["record"], reused=True))

    # --- withholding and saturation: Spark joins ---------------------------------------------------------
    def _release(self, spark, hi: int, previous, held, target: str | None, statements: str | None,
                 reports: str) -> dict:
        """Withhold and saturate the statements of the time points below ``hi`` (the previous entry's waiting
        ones and ``statements``, SQL of the batch's accepted ones), and write those of later time points into
        ``target`` (None: none wait, the end of input). Returns the program's input lines (``frame``: a persisted
        DataFrame of ``spark.rules.LINE_COLUMNS``), the bound and the counts."""
        n, fs = self.names, self.fs
        if held is not None:        # written on the driver by the previous batch: held there
            pending = [tuple(r) for r in held[1]]
            frame = spark.createDataFrame(_pending_table(pending)) if pending else empty_frame(spark, PENDING_COLUMNS)
            frame.createOrReplaceTempView(n["pending"])
        else:
            waiting = self.store.part(previous[0], "pending") if previous is not None else None
            if waiting is not None and fs.exists(waiting):
                spark.read.schema(PENDING_COLUMNS).json(waiting).createOrReplaceTempView(n["pending"])
            else:
                empty_frame(spark, PENDING_COLUMNS).createOrReplaceTempView(n["pending"])
        every = f"SELECT * FROM {n['pending']}" + (f" UNION ALL {statements}" if statements else "")
        spark.sql(every).createOrReplaceTempView(n["all"])
        if hi > TIME_MIN:
            # the last released time as data, not a literal in the SQL (``spark.sql.bounds_sql`` says why); the
            # last, not ``hi``: the end of input's ``hi`` is 2^63, beyond a BIGINT
            spark.sql(f"SELECT * FROM VALUES (CAST({int(hi) - 1} AS BIGINT)) AS t(c_last)").createOrReplaceTempView(
                n["bound"])
            split = (f"SELECT /*+ BROADCAST(h) */ a.* FROM {n['all']} a CROSS JOIN {n['bound']} h "
                     f"WHERE a.time {{}} h.c_last")
            later, below = split.format(">"), split.format("<=")
        else:       # nothing is released
            later, below = f"SELECT * FROM {n['all']}", f"SELECT * FROM {n['all']} WHERE FALSE"
        if target is not None:
            spark.sql(later).write.mode("overwrite").json(f"{target}/kind=pending")
        spark.sql(below).createOrReplaceTempView(n["released"])
        if self.saturation.inconsistent == "drop" and fs.exists(reports):
            spark.read.schema(REPORT_KEY_COLUMNS).json(reports).createOrReplaceTempView(n["rep"])
            withheld = "(x.subject IS NOT NULL OR y.subject IS NOT NULL)"
            joins = (f"LEFT JOIN {n['rep']} x ON x.subject = r.s AND x.time = r.time "
                     f"LEFT JOIN {n['rep']} y ON r.o IS NOT NULL AND r.p <> {_TYPE} AND y.subject = r.o "
                     f"AND y.time = r.time")
        else:
            withheld, joins = "false", ""
        flagged = spark.sql(f"SELECT r.*, {withheld} AS w FROM {n['released']} r {joins}").persist()
        self._persisted.append(flagged)
        flagged.createOrReplaceTempView(n["flagged"])
        counts = spark.sql(f"SELECT count(*) AS released, count_if(w) AS withheld, "
                           f"count(DISTINCT CASE WHEN w THEN time END) AS points, max(time) AS last "
                           f"FROM {n['flagged']}").collect()[0]
        kept = f"SELECT * FROM {n['flagged']} WHERE NOT w"
        entailed = [
            f"SELECT time, src, file, line, s, p, o, lit FROM ({kept})",
            f"SELECT /*+ BROADCAST(t) */ k.time, k.src, k.file, k.line, k.s, {_TYPE} AS p, t.d AS o, "
            f"CAST(NULL AS STRING) AS lit FROM ({kept}) k JOIN {n['types']} t ON k.p = {_TYPE} AND t.c = k.o",
            f"SELECT /*+ BROADCAST(x) */ k.time, k.src, k.file, k.line, "
            f"CASE WHEN x.dir IN ('f', 'd') THEN k.s ELSE k.o END AS s, "
            f"CASE WHEN x.dir IN ('f', 'b') THEN x.q ELSE {_TYPE} END AS p, "
            f"CASE x.dir WHEN 'f' THEN k.o WHEN 'b' THEN k.s ELSE x.q END AS o, CAST(NULL AS STRING) AS lit "
            f"FROM ({kept}) k JOIN {n['props']} x ON x.p = k.p AND k.o IS NOT NULL"]
        # duplicates collapse within a time point; a statement keeps the place of its first line (a rejected
        # record of the program's side names it)
        saturated = (f"SELECT time, s, p, o, lit, min(named_struct('src', src, 'file', file, 'line', line)) AS at "
                     f"FROM ({' UNION ALL '.join(entailed)}) GROUP BY time, s, p, o, lit")
        text = (f"concat(CAST(time AS STRING), '\\t', {_term('s')}, ' <', p, '> ', "
                f"coalesce({_term('o')}, lit), ' .')")
        lines = spark.sql(
            f"SELECT 0 AS src, at.file AS file, at.line AS line, {text} AS raw, 'tnt' AS fmt, false AS dup, "
            f"CAST(NULL AS BIGINT) AS fo FROM ({saturated}) UNION ALL "
            f"SELECT 0, CAST(NULL AS STRING), CAST(NULL AS BIGINT), "
            f"concat('{{\"time\":', CAST(time AS STRING), ',\"atoms\":[]}}'), 'jsonl', false, "
            f"CAST(NULL AS BIGINT) FROM (SELECT DISTINCT time FROM {n['flagged']})").persist()
        self._persisted.append(lines)
        return {"frame": lines, "hi": int(hi), "released": int(counts["released"]),
                "withheld": int(counts["withheld"]), "points": int(counts["points"]),
                "last": None if counts["last"] is None else int(counts["last"])}

    # --- withholding and saturation of a small batch: on the driver ---------------------------------------
    def _release_on_driver(self, spark, hi: int, previous, held, target: str | None, statements: str | None,
                           reports: str, batch_id) -> dict:
        """What ``_release`` does, on the driver (``chain.entail.Entailment``, the local executor's lookups): the
        batch's statements come in one Spark job, the waiting ones from the driver's memory (else the store),
        the reports from the consistency part's entry; the statements of later time points are written into
        ``target`` and held for the next batch. Returns the program's input lines as ``LINE_FIELDS`` tuples."""
        from srtopo.chain.entail import Entailment
        from srtopo.chain.local import statement_text
        from srtopo.ir.records import Statement
        fs = self.fs
        if held is not None:
            pending = list(held[1])
        else:
            waiting = self.store.part(previous[0], "pending") if previous is not None else None
            pending = [_pending_row(json.loads(x)) for x in fs.read_lines(waiting)] \
                if waiting is not None and fs.exists(waiting) else []
        if statements:
            table = spark.sql(statements).toArrow()
            pending += list(zip(*(table.column(c).to_pylist() for c in PENDING_NAMES))) if table.num_rows else []
        released = [r for r in pending if r[0] < hi]
        later = [r for r in pending if r[0] >= hi]
        if target is not None:
            fs.delete(target)
            if later:
                fs.write_text(f"{target}/kind=pending/{DRIVER_PART}",
                              "".join(_pending_line(r) for r in later))
            self._held = (int(batch_id), later)
        reported: dict = {}
        if self.saturation.inconsistent == "drop" and fs.exists(reports):
            for x in fs.read_lines(reports):
                report = json.loads(x)
                reported.setdefault(int(report["time"]), set()).add(report["subject"])
        entail = Entailment(self.saturation)
        places: dict = {}          # (time, s, p, o, lit) -> the first place a statement gave it
        withheld, points, times = 0, set(), set()
        for time, src, file, line, s, p, o, lit in released:
            times.add(time)
            statement = Statement(time, s, p, o, lit)
            if entail.withheld(statement, reported.get(time)):
                withheld += 1
                points.add(time)
                continue
            place = (src, (0,) if file is None else (1, file), (0,) if line is None else (1, line))
            for triple in entail.saturate(statement):
                key = (time,) + triple
                if key not in places or place < places[key][0]:
                    places[key] = (place, file, line)
        lines = [(0, file, line, statement_text(Statement(*key)), "tnt", False, None)
                 for key, (_place, file, line) in places.items()]
        lines += [(0, None, None, f'{{"time":{t},"atoms":[]}}', "jsonl", False, None) for t in sorted(times)]
        return {"lines": lines, "hi": int(hi), "released": len(released), "withheld": withheld,
                "points": len(points), "last": max(times) if times else None}

    def _unpersist(self) -> None:
        for frame in self._persisted:
            frame.unpersist()
        self._persisted.clear()

    def _record(self, checked: dict, evaluated: dict, released: dict) -> dict:
        """The batch's metrics record: the consistency part's counters, the saturation's and the program's."""
        kept = released["released"] - released["withheld"]
        stages = dict(checked.get("stages", {}))
        stages[self.saturation.id] = {"records_in": released["released"], "forwarded": kept,
                                      "outputs": evaluated.get("tuples", 0),
                                      "inferred": max(0, evaluated.get("tuples", 0) - kept)}
        stages.update(evaluated.get("stages", {}))
        return {"tuples": checked.get("tuples", 0), "malformed": checked.get("malformed", 0) + evaluated["malformed"],
                "late": checked.get("late", 0), "irrelevant": checked.get("irrelevant", 0),
                "punctuations": checked.get("punctuations", 0),
                "reports": evaluated["reports"], "watermark": checked.get("watermark"),
                "closed_upto": released["hi"], "closed_on": checked.get("closed_on"),
                "evaluated_on": evaluated.get("evaluated_on"), "evaluated": evaluated.get("evaluated"),
                "rejected_c": checked.get("malformed", 0) + checked.get("late", 0),
                "rejected_r": evaluated["malformed"] + evaluated["late"],
                "stages": stages,
                "extra": {"reports": checked.get("reports", 0), "withheld": released["withheld"],
                          "withheld_points": released["points"], "models": evaluated["reports"]}}

    # --- end of input --------------------------------------------------------------------------------------
    def close(self, last):
        raise NotImplementedError("a chain closes in finish()")

    def finish(self) -> None:
        """Close everything still open from the last completed entries (end of input) into ``batch=final``:
        the consistency part's last reports, the waiting statements, the program's last time points. Idempotent:
        after the same batch, the final entry is handed over again rather than computed again."""
        from srtopo.errors import TopologyError
        if self.query is not None and self.query.isActive:
            raise TopologyError("finish() needs the query to be stopped (await it or run once)")
        for store in (self.store, self.consistency.store, self.program.store):
            store.forget()
        last = self.store.last_completed()
        if last is None:
            return
        target = self.store.entry("final")
        done = f"{target}/_meta.json"
        marker = self.fs.read_text(done)
        found = json.loads(marker) if marker else {}
        if found.get("after") != int(last[0]):
            try:
                found = self._close_final(last, target)
            finally:
                self._unpersist()
            self.fs.write_text(done, json.dumps(found))
        self.final_extra = found["extra"]
        models = WrittenFiles(f"{target}/kind=model", MODEL_COLUMNS) if found["models"] else None
        reports = WrittenFiles(f"{target}/kind=report", REPORT_COLUMNS) if found["extra"]["reports"] else None
        rejected = WrittenFiles(f"{target}/kind=rejected", REJECTED_COLUMNS) if found["rejected"] else None
        self.sinks.write("final", models, rejected, self.output_columns, reports=reports)

    def _close_final(self, last, target: str) -> dict:
        spark, fs = self.spark, self.fs
        self._register_tables(spark)
        cons, prog = self.consistency, self.program
        held = self._held if self._held is not None and self._held[0] == int(last[0]) else None
        started = _time.perf_counter()
        fs.delete(target)
        closed = cons.close(cons.store.last_completed())     # files when it closed on the driver, None: no report
        if isinstance(closed, WrittenFiles):
            fs.copy_files(closed.path, f"{target}/kind=report")
        elif closed is None:
            fs.mkdirs(f"{target}/kind=report")
        else:
            closed.write.mode("overwrite").json(f"{target}/kind=report")
        n_reports = sum(1 for _ in fs.read_lines(f"{target}/kind=report"))
        checked = _time.perf_counter()
        if held is not None:
            released = self._release_on_driver(spark, POS, last, held, None, None, f"{target}/kind=report", "final")
        else:
            released = self._release(spark, POS, last, None, None, None, f"{target}/kind=report")
        saturated = _time.perf_counter()
        models, rejected = self._program_final(released, prog.store.last_completed(), f"{target}/rules",
                                               int(last[0]) + 1)
        for kind, path in (("model", models), ("rejected", rejected)):
            if path is not None and fs.exists(path):
                fs.copy_files(path, f"{target}/kind={kind}")
        n_models = sum(1 for _ in fs.read_lines(f"{target}/kind=model")) if models else 0
        return {"after": int(last[0]), "models": n_models, "rejected": rejected is not None,
                "extra": {"reports": n_reports, "withheld": released["withheld"],
                          "withheld_points": released["points"], "models": n_models,
                          "consistency_s": round(checked - started, 4), "saturation_s": round(saturated - checked, 4),
                          "program_s": round(_time.perf_counter() - saturated, 4)}}

    def _program_final(self, released: dict, last_r, target: str, batch: int) -> tuple[str | None, str | None]:
        """The program's last time points (up to the last waiting statement's) into ``target``: the paths of its
        models and rejected records (None: none)."""
        import uuid
        prog, spark = self.program, self.spark
        meta = prog._meta(last_r)
        hi = max(int(meta["closed"]), released["last"] if released["last"] is not None else NEG)
        if hi <= int(meta["closed"]):
            return None, None
        plan = prog._plan(meta, {}, upto=hi)
        given = released.get("lines")
        if given is None:       # released in Spark: a few lines are still the driver's, as a batch's are
            given = collect_small(released["frame"], LINE_FIELDS, prog.driver_lines, DRIVER_BYTES)
        if given is not None and len(given) <= prog.driver_lines:
            observed = prog.driver.run(plan, given, {}, batch, last_r, history_chain(last_r), target,
                                       uuid.uuid4().hex)
        else:
            frame = released["frame"] if given is None else None
            try:
                with session_conf(spark, dict(BATCH_CONF, **{"spark.sql.shuffle.partitions": str(prog.partitions)})):
                    if frame is None:
                        frame = line_frame(spark, given)
                    prog._previous(spark, last_r, history_chain(last_r))
                    records = frame.mapInArrow(parse_task({}, prog.unit, prog.number_scale, prog.specs[0].partitions,
                                                          batch), SEGMENT_COLUMNS)
                    observed = prog._write(spark, plan, target, records)
            finally:
                prog._release(spark)
        got = json.loads(observed["meta"]) if observed.get("meta") else {}
        rejected = f"{target}/kind=rejected" if got.get("malformed") else None
        return f"{target}/kind=model", rejected


#: the fields of a waiting statement, in ``PENDING_COLUMNS`` order
PENDING_NAMES = tuple(c.split()[0] for c in PENDING_COLUMNS.split(", "))
#: the one file of each kind the driver writes into an entry
DRIVER_PART = "part-00000-driver.json"
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _pending_row(data: dict) -> tuple:
    return tuple(data.get(k) for k in PENDING_NAMES)


def _pending_line(row: tuple) -> str:
    """A waiting statement as the Spark write gives it: its fields in order, null ones left out."""
    return _ENCODE({k: v for k, v in zip(PENDING_NAMES, row) if v is not None}) + "\n"


def _pending_table(rows: list[tuple]):
    import pyarrow as pa
    types = {"BIGINT": pa.int64(), "INT": pa.int32(), "STRING": pa.string()}
    schema = pa.schema([(c.split()[0], types[c.split()[1]]) for c in PENDING_COLUMNS.split(", ")])
    columns = list(zip(*rows))
    return pa.Table.from_arrays([pa.array(v, type=f.type) for v, f in zip(columns, schema)], schema=schema)


# --- the kind's Spark job (``srtopo.kinds``) ---------------------------------------------------------------

class ChainOnSpark:
    """Chains on the Spark runner (``runners.spark.kind.SparkKind``): the consistency and rules kinds' jobs
    in one query, with the saturation stage between them as Spark joins."""
    collector: ClassVar[str] = "throughput"
    event_time: ClassVar[bool] = True

    def __init__(self):
        self._consistency = ConsistencyOnSpark()
        self._rules = RulesOnSpark()
        self._models = ModelKind()

    def check(self, topology: Topology, sources: Sequence, options) -> None:
        from srtopo.runners.spark.sources import refuse_pipe
        consistency, _saturation, rules = topology.parts()
        if options.physical_plan not in PHYSICAL_PLANS:
            raise UnsupportedByRunner(f"unknown physical plan {options.physical_plan!r}",
                                      hint="use " + " or ".join(PHYSICAL_PLANS))
        if options.out_format != "json":
            raise UnsupportedByRunner("a chain writes its models and reports as JSON lines",
                                      hint="leave --out-format out (json)")
        for source in sources:
            if not isinstance(source, (TntFiles, SocketLines, Lines)):
                raise UnsupportedByRunner(f"the spark runner reads no {type(source).__name__} sources for a chain",
                                          hint="give timestamped N-Triples: a .tnt file or directory, "
                                               "tcp://HOST:PORT, or lines in memory")
            if getattr(source, "path", None) == "-":
                raise UnsupportedByRunner("the spark runner cannot read standard input",
                                          hint="give a file, a directory or tcp://HOST:PORT (or --engine local)")
            refuse_pipe(getattr(source, "path", None), "tcp://HOST:PORT")
        self._rules.check(rules, [], options)

    def options_for(self, options, sources: list):
        """A chain's statements travel on from its check to its program as rows, which the columnar plan (compact
        columns read in its tasks) does not carry: the chain's check runs the fused plan instead, as the default
        and when asked (docs/spark.md)."""
        if options.physical_plan == "columnar":
            return replace(options, physical_plan="fused")
        return options

    def stage_tasks(self, topology: Topology, options, spark) -> list[int]:
        consistency, _saturation, rules = topology.parts()
        return (self._consistency.stage_tasks(consistency, options, spark) + [1]
                + self._rules.stage_tasks(rules, options, spark))

    def describe(self, topology: Topology, options, master: str, tasks: list[int]) -> str:
        consistency, _saturation, rules = topology.parts()
        k = len(consistency.stages)
        return (f"spark chain on {master}, one query: " +
                self._consistency.describe(consistency, options, master, tasks[:k]).split(": ", 1)[1] +
                "; withholding and saturation with a batch's close (on the driver for a batch that closes there, else "
                "as joins with the reports and the broadcast lookup tables); " +
                self._rules.describe(rules, options, master, tasks[k + 1:]).split(": ", 1)[1])

    def sources(self, topology: Topology, sources: list, stage) -> list:
        return [stage(i, source) for i, source in enumerate(sources)]

    def job(self, spark, topology: Topology, config, lateness, n_sources: int, options):
        job = ChainJob(spark, topology, config.window, lateness, n_sources, options,
                       RulesOnSpark.partitions(options, spark))
        job.set_print_empty(config.print_empty)
        return job

    def frames(self, spark, sources: list, lateness, options=None) -> list:
        return [statement_frame(spark, source, i, ordered=lateness is not None) for i, source in enumerate(sources)]

    def collect(self, job, options) -> tuple:
        """The reports (by time and subject), then the models (by time), read on the driver."""
        reports = sorted((report_of(row) for row in job.sinks.written_rows(reports=True)),
                         key=lambda r: (r.time, r.subject))
        models = sorted((self._models.output_of(row) for row in job.sinks.written_rows()), key=lambda m: m.time)
        return None, reports + models

    def output_of(self, row) -> Report | Model:
        fields = row if isinstance(row, dict) else row.__fields__
        return report_of(row) if "subject" in fields else self._models.output_of(row)

    def read_local(self, paths: list[str]) -> list | None:
        return None

    def stage_counters(self, stage, per_batch: list[dict], tasks: int) -> StageCounters:
        if isinstance(stage, ConsistencyStage):
            return self._consistency.stage_counters(stage, per_batch, tasks)
        if isinstance(stage, RuleStage):
            return self._models.stage_counters(stage, per_batch, tasks)
        c = StageCounters(stage.id, tasks=tasks, seconds=None, window_rows=None, window_peak=None)
        for key in ("records_in", "forwarded", "inferred", "outputs"):
            setattr(c, key, sum(p.get(key, 0) for p in per_batch))
        return c

    def final_counters(self, job, counters, records) -> None:
        """The end of input's reports, withheld statements and models; with the records read back (a bounded
        run), outputs are the models and ``extra['reports']`` the reports, counted off them."""
        for key, value in job.final_extra.items():
            counters.extra[key] = counters.extra.get(key, 0) + value
        if records is not None:
            counters.extra["reports"] = sum(1 for r in records if isinstance(r, Report))
            counters.extra["models"] = counters.outputs = sum(1 for r in records if isinstance(r, Model))


JOB = ChainOnSpark()
