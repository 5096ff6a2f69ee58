"""Streamlog topologies on Spark: each micro-batch's lines, evaluated by the Streamlog evaluator restored from the
store, exactly-once.

Spark reads the streams (files and directories, or ``tcp://HOST:PORT``) into one streaming query. A micro-batch
collects its lines, keeps each source's order (file order, then line), and feeds them source by source to a
``streamlog.streams.Streamlog`` as the last completed batch left it (``Streamlog.state``: each stream's
progress, the facts of incomplete timestamps, the history later timestamps read). The timestamps that became
complete are evaluated and written as models, with the rejected lines and the new state, into the batch's store
entry; the next batch starts from that state. At the end of input every stream is closed and what is still
pending is evaluated (``close``). The state is the only thing carried between batches, so a restart (or a replay
of an uncommitted batch) gives the same output as an uninterrupted run.

A batch costs what it reads, not the length of the history: the driver keeps the evaluator in memory while it
is exactly the last completed entry's (restoring it from the store only in a new process, or to replay a batch),
and an entry holds the state as a delta over the entry before, with a full snapshot every ``slstate.EVERY``
entries (``slstate``).

Under the synchronized and sort-merge unions the output does not depend on how the streams interleave, so it
equals the local runner's; under the plain union, which rejects facts of timestamps already evaluated, it depends
on arrival, on every runner. This is how a stage that is not keyed (or not split: ``streamlog.partition``) runs,
in one partition on the driver; a keyed stage runs in key partitions in the executors (below).

A keyed Streamlog stage on Spark: each micro-batch evaluated in one executor task per key partition, from the
partitions' states in the store, exactly-once.

A micro-batch is ONE Spark job:

1. the batch's lines are routed by Python in the executors (``streamlog.partition.Routing``): a fact line to the
   partition of its key value, as progress (stream, timestamp) to the others; punctuation to every partition; a
   line rejected whatever the state to partition 0 alone;
2. with a row per partition holding its state from the last completed entry, the rows are grouped by partition
   (one task each: ``rules.representatives``); a task sorts its rows in each source's order (file order, then
   line) and runs its ``streamlog.partition.KeyPartition``: its own lines pushed, the others' progress, so every
   partition evaluates a timestamp in the same batch. It returns a model part per timestamp it evaluated, its
   rejected records, its new state and its counters;
3. the tasks' rows, small next to the lines, come back to the driver (the job's only result), which writes the
   entry: a model per timestamp (the parts' atoms merged, sorted; timestamps where no partition derived a
   shown atom are left out, as on the local runner), the rejected records in the sources' order, the state of
   each partition, and sums the counters.

Batch b reads only the entry of the last completed batch and a replay rewrites the same files. A Python worker
keeps the evaluators it ran (``_KEPT``), each tagged with the token of the batch attempt it reflects; a task
reuses one only when the tag is the token of the entry it continues from (the store's meta of that entry names
it), else restores from the stored state: a restart, a retried task or a replay is correct from the store alone.
"""
from __future__ import annotations

import hashlib
import json
import time as _time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import ClassVar, Sequence

from srtopo.errors import TopologyError, UnsupportedByRunner
from srtopo.io.sources import AtomLog, FactLines, Lines, TntFiles
from srtopo.io.tnt import REPLACEMENT, NotUtf8
from srtopo.ir.records import Model, RejectedRecord
from srtopo.ir.topology import Topology
from srtopo.runners.spark import slstate
from srtopo.runners.spark.kind import ModelKind
from srtopo.runners.spark.rules import BATCH_CONF, _arrow_batch, _arrow_rows, arrow_schema, representatives
from srtopo.runners.spark.sinks import REJECTED_COLUMNS, WrittenFiles
from srtopo.runners.spark.sql import sql_string as q
from srtopo.runners.spark.store import BatchStore
from srtopo.runners.spark.streaming import BatchOutcome, MicroBatchJob, session_conf
from srtopo.runners.spark.streaming import columns as _columns
from srtopo.streamlog.partition import PUSH, Routing

MODEL_COLUMNS = "time BIGINT, atoms ARRAY<STRING>"


class StreamlogJob(MicroBatchJob):
    output_columns = MODEL_COLUMNS

    def __init__(self, spark, topology: Topology, names: list[str], history: int = 10000,
                 max_gap: int | None = None):
        super().__init__(spark, history)
        from srtopo.streamlog.program import parse_program
        self.topology = topology
        self.names = names
        self.max_gap = max_gap
        stage = topology.stages[0]
        self.program = parse_program(stage.program, stage.file).check()
        self._held = None            # (entry id, evaluator): the evaluator as that entry's state has it
        self._kept_upto = None       # the last history timestamp of the entry the batch continues

    def start(self, frames: list, checkpoint: str, sinks, **kwargs):
        """A checkpoint of a keyed run is refused before the query starts (its error would be a batch's)."""
        self._check(BatchStore(self.fs, checkpoint.rstrip("/") + "/store").last_completed())
        return super().start(frames, checkpoint, sinks, **kwargs)

    @staticmethod
    def _check(previous) -> None:
        if previous is not None and previous[1].get("partitions"):
            raise TopologyError(f"the checkpoint holds the states of {previous[1]['partitions']} key partitions; "
                                "this run evaluates the program in one", hint="start a new checkpoint")

    def _streamlog(self, previous, rejected: list):
        """The evaluator as the batch ``previous`` (id, meta) left it, or a new one: the one in memory when it is
        that entry's (the driver runs the batches of a query one after the other), else restored from the store.
        The one in memory is taken out while a batch changes it, so that a batch that fails is replayed from the
        store."""
        from srtopo.streamlog.streams import Counters, Streamlog
        held, self._held = self._held, None
        if held is not None and previous is not None and held[0] == previous[0]:
            engine = held[1]
            engine.on_reject = rejected.append
            engine.counters = Counters()           # this batch's
            self._kept_upto = slstate.last_kept(engine)
            return engine
        stage = self.topology.stages[0]
        engine = Streamlog(self.program, self.names, self.topology.source.union, stage.retain,
                           on_reject=rejected.append, max_gap=self.max_gap)
        engine.check = self.check_stop
        self._check(previous)
        if previous is not None:
            state = slstate.read(self.fs, self.store, previous[0])
            if state is not None:
                engine.restore(state)
        self._kept_upto = slstate.last_kept(engine)
        return engine

    def _write(self, batch_id, models: list, rejected: list, engine, previous) -> tuple:
        entry = self.store.entry(batch_id)
        chain = slstate.write(self.fs, self.store, batch_id, engine, previous, self._kept_upto)
        outputs = rejects = None
        if models:
            self.fs.write_text(f"{entry}/kind=model/part-00000.json",
                               "".join(m.to_json() + "\n" for m in models))
            outputs = WrittenFiles(f"{entry}/kind=model", MODEL_COLUMNS)
        if rejected:
            self.fs.write_text(f"{entry}/kind=rejected/part-00000.json", "".join(r.to_json() + "\n" for r in rejected))
            rejects = WrittenFiles(f"{entry}/kind=rejected", REJECTED_COLUMNS)
        return outputs, rejects, chain

    def batch(self, df, batch_id: int, spark, previous) -> BatchOutcome:
        started = _time.perf_counter()
        rows = df.select("src", "file", "line", "raw", "fo").collect()
        # each source in its own order: files in the order they were listed, lines in file order (a socket's
        # rows have neither and keep their arrival order: the sort is stable)
        rows.sort(key=lambda r: (r["src"], r["fo"] or 0, r["file"] or "", r["line"] or 0))
        read = _time.perf_counter()
        rejected: list[RejectedRecord] = []
        engine = self._streamlog(previous, rejected)
        models: list[Model] = []
        for row in rows:
            raw = row["raw"]
            if REPLACEMENT in raw:      # Spark's text source decodes bytes that are not UTF-8 as U+FFFD
                raw = NotUtf8(raw)
            models += engine.push(row["src"], raw, row["line"], row["file"])
        outputs, rejects, chain = self._write(batch_id, models, rejected, engine, previous)
        self._held = (int(batch_id), engine)       # what the entry holds, once it is complete
        c = engine.counters
        record = {"tuples": c.facts, "malformed": c.rejected, "irrelevant": c.unused, "reports": len(models),
                  "late": 0, "lines": len(rows),
                  "extra": {"timestamps": c.timestamps, "punctuations": c.punctuations},
                  "stages": {self.topology.stages[0].id: {"records_in": c.facts, "derived": len(models)}},
                  "phases_s": {"collect": round(read - started, 4),
                               "evaluate_write": round(_time.perf_counter() - read, 4)}}
        record["extra"]["state_snapshots"] = int(chain["depth"] == 0)
        return BatchOutcome({"lines": len(rows), **chain}, record, outputs, rejects)

    def close(self, last):
        """End of input: every stream closed, the pending timestamps evaluated (written as ``batch=final``)."""
        started = _time.perf_counter()
        rejected: list[RejectedRecord] = []
        engine = self._streamlog(last, rejected)
        models = engine.finish()
        self.batch_metrics.append({"batch": "final", "tuples": 0, "reports": len(models), "lines": 0,
                                   "extra": {"timestamps": engine.counters.timestamps},
                                   "stages": {self.topology.stages[0].id: {"derived": len(models)}},
                                   "duration_s": round(_time.perf_counter() - started, 4)})
        if not models:
            return None
        target = f"{self.store.root}/final/kind=model"
        self.fs.write_text(f"{target}/part-00000.json", "".join(m.to_json() + "\n" for m in models))
        return WrittenFiles(target, MODEL_COLUMNS)


# --- keyed stages: one task per key partition ------------------------------------------------------------

LINE_FIELDS = ("src", "file", "line", "raw", "fo")
#: a routed line: its partition, its place in its source (``seq``: the line number, or the arrival number of a
#: socket's line), what the partition does with it (``partition.Routing.rows``; ``hello``: every partition gets
#: one, so each runs every batch; ``state``: ``raw`` holds its state), the timestamp of progress
ROUTED_COLUMNS = ("part INT, src INT, fo BIGINT, file STRING, seq BIGINT, line BIGINT, what STRING, ts BIGINT, "
                  "raw STRING")
ROUTED_FIELDS = ("part", "src", "fo", "file", "seq", "line", "what", "ts", "raw")
#: what a partition's task returns: model parts, rejected records (with their place, for the sort), its state,
#: its counters (``atoms``: facts, rejected, unused, punctuations, lines pushed, 1 if its evaluator was built
#: (restored from the state) rather than kept from the batch before)
PART_COLUMNS = ("kind STRING, part INT, time BIGINT, atoms ARRAY<STRING>, src INT, fo BIGINT, file STRING, "
                "seq BIGINT, source STRING, line BIGINT, text STRING, reason STRING")
STATE, HELLO = "state", "hello"
_CHUNK = 20000


@dataclass(frozen=True)
class PartitionSpec:
    """What a partition's task needs to build its evaluator (shipped with the task)."""
    program: str
    file: str
    streams: tuple
    union: str
    retain: int | None
    routing: Routing
    key: str                 # identifies the program, streams and store: the evaluators a worker keeps
    max_gap: int | None = None


#: (spec key, partition) -> (token of the batch attempt the evaluator reflects, evaluator), in a Python worker
_KEPT: OrderedDict = OrderedDict()
_KEEP = 16
_PROGRAMS: dict = {}


def _literal(path: str) -> str:
    """A path Spark's reader takes as it is, not as a glob (a checkpoint may be named ``ck-local[2]``)."""
    from srtopo.runners.spark.sources import _GLOB_CHARS
    return "".join("\\" + c if c in _GLOB_CHARS else c for c in path)


def _evaluator(spec: PartitionSpec, part: int, continues: str | None, state: str | None, on_reject):
    """The partition's evaluator as the entry with token ``continues`` left it: kept from that batch, or
    restored from ``state`` (None: a new one)."""
    from srtopo.streamlog.partition import KeyPartition
    from srtopo.streamlog.program import parse_program
    kept = _KEPT.pop((spec.key, part), None)      # taken out: a task that fails leaves nothing half-advanced
    if kept is not None and continues is not None and kept[0] == continues:
        engine = kept[1]
        engine.on_reject = on_reject
        return engine, False
    program = _PROGRAMS.get(spec.key)
    if program is None:
        program = _PROGRAMS[spec.key] = parse_program(spec.program, spec.file).check()
    engine = KeyPartition(program, spec.streams, spec.union, spec.retain, spec.routing, part, on_reject,
                          max_gap=spec.max_gap)
    if state is not None:
        engine.restore(json.loads(state))
    return engine, True


def _keep(spec: PartitionSpec, part: int, token: str, engine) -> None:
    _KEPT[(spec.key, part)] = (token, engine)
    while len(_KEPT) > _KEEP:
        _KEPT.popitem(last=False)


def route_task(routing: Routing):
    """The function that routes a batch's lines in the executors."""
    schema = arrow_schema(ROUTED_COLUMNS)

    def route(batches):
        arrived = 0
        out = []
        for batch in batches:
            for src, file, line, raw, fo in _arrow_rows(batch, LINE_FIELDS):
                if line is None:       # a socket's lines: one partition, in arrival order
                    seq, arrived = arrived, arrived + 1
                else:
                    seq = line
                text = raw if raw is not None else ""
                if REPLACEMENT in text:  # Spark's text source decodes bytes that are not UTF-8 as U+FFFD
                    text = NotUtf8(text)
                for part, what, ts in routing.rows(text):
                    out.append((part, src, fo, file, seq, line, what, ts, raw if what == PUSH else None))
                if len(out) >= _CHUNK:
                    yield _arrow_batch(out, schema)
                    out = []
        yield _arrow_batch(out, schema)
    return route


def partition_task(spec: PartitionSpec, continues: str | None, token: str, finish: bool = False):
    """The function each key partition runs (in an executor's Python worker): its rows of the batch through its
    evaluator; ``finish``: the end of input (every stream closed)."""
    schema = arrow_schema(PART_COLUMNS)

    def task(table):
        rows = _arrow_rows(table, ROUTED_FIELDS)
        part = int(rows[0][0])
        state = next((r[8] for r in rows if r[6] == STATE), None)
        rejected, place = [], [None]

        def reject(record):
            rejected.append((*place[0], record))
        engine, built = _evaluator(spec, part, continues, state, reject)
        before = engine.counters.to_dict()
        engine.visited = []
        atoms: dict = {}
        lines = sorted((r for r in rows if r[6] not in (STATE, HELLO)),
                       key=lambda r: (r[1], r[2] or 0, r[3] or "", r[4] or 0))
        for _part, src, fo, file, seq, line, what, ts, raw in lines:
            place[0] = (src, fo, file, seq)
            text = raw if raw is not None else ""
            if what == PUSH and REPLACEMENT in text:
                text = NotUtf8(text)
            for m in engine.receive(src, what, ts, text, line, file):
                atoms[m.time] = m.atoms
        if finish:
            for m in engine.finish():
                atoms[m.time] = m.atoms
        c = engine.counters.to_dict()
        counts = [c[k] - before[k] for k in ("facts", "rejected", "unused", "punctuations")]
        out = [("model", part, t, list(atoms.get(t, ())), None, None, None, None, None, None, None, None)
               for t in engine.visited]
        out += [("rejected", part, None, None, src, fo, file, seq, r.source, r.line, r.text, r.reason)
                for src, fo, file, seq, r in rejected]
        counts += [sum(r[6] == PUSH for r in lines), int(built)]
        out.append(("metrics", part, None, [str(n) for n in counts],
                    None, None, None, None, None, None, None, None))
        if not finish:
            out.append((STATE, part, None, None, None, None, None, None, None, None, json.dumps(engine.state()),
                        None))
            _keep(spec, part, token, engine)
        return _arrow_batch(out, schema, table=True)
    return task


class KeyedStreamlogJob(MicroBatchJob):
    """The micro-batches of a keyed Streamlog stage in ``partitions`` key partitions."""
    output_columns = MODEL_COLUMNS

    def __init__(self, spark, topology: Topology, names: list[str], partitions: int, history: int = 10000,
                 max_gap: int | None = None):
        super().__init__(spark, history)
        from srtopo.streamlog.program import parse_program
        self.topology = topology
        self.max_gap = max_gap
        stage = topology.stages[0]
        self.stage = stage
        self.partitions = max(1, int(partitions))
        program = parse_program(stage.program, stage.file).check()
        self.routing = Routing.of(program, stage.key, self.partitions)
        self.names = tuple(names)
        self._spec = None

    def spec(self) -> PartitionSpec:
        if self._spec is None:
            stage = self.stage
            ident = json.dumps([stage.program, stage.file, self.names, self.topology.source.union, stage.retain,
                                self.partitions, self.store.root, self.max_gap])
            self._spec = PartitionSpec(stage.program, stage.file, self.names, self.topology.source.union,
                                       stage.retain, self.routing, hashlib.sha256(ident.encode()).hexdigest()[:16],
                                       self.max_gap)
        return self._spec

    def start(self, frames: list, checkpoint: str, sinks, **kwargs):
        """A checkpoint of another number of partitions is refused before the query starts."""
        self._check(BatchStore(self.fs, checkpoint.rstrip("/") + "/store").last_completed())
        return super().start(frames, checkpoint, sinks, **kwargs)

    def _check(self, previous) -> None:
        if previous is not None and previous[1].get("partitions") != self.partitions:
            was = previous[1].get("partitions")
            raise TopologyError(f"the checkpoint holds the state of {was or 1} partition(s) "
                                f"({'keyed' if was else 'one evaluator'}), this run has {self.partitions}",
                                hint=f"run with --partitions {was} on this checkpoint, or start a new checkpoint"
                                if was else "start a new checkpoint")

    def batch(self, df, batch_id: int, spark, previous) -> BatchOutcome:
        started = _time.perf_counter()
        self._check(previous)
        token = uuid.uuid4().hex
        target = self.store.entry(batch_id)
        routed = df.select(*LINE_FIELDS).mapInArrow(route_task(self.routing), ROUTED_COLUMNS)
        got = self._run(spark, previous, token, target, routed)
        written = got["written"]
        record = {"tuples": got["facts"], "malformed": got["rejected"], "irrelevant": got["unused"],
                  "reports": written, "late": 0, "lines": got["lines"],
                  "evaluators_built": got["built"],      # the others were kept in their worker from the batch before
                  "extra": {"timestamps": got["timestamps"], "punctuations": got["punctuations"]},
                  "stages": {self.stage.id: {"records_in": got["facts"], "derived": written,
                                             "tasks": self.partitions}},
                  "phases_s": {"route_evaluate_write": round(_time.perf_counter() - started, 4)}}
        outputs = WrittenFiles(f"{target}/kind=model", MODEL_COLUMNS) if written else None
        rejects = WrittenFiles(f"{target}/kind=rejected", REJECTED_COLUMNS) if got["rejected"] else None
        return BatchOutcome({"partitions": self.partitions, "token": token, "lines": got["lines"]}, record,
                            outputs, rejects)

    def close(self, last):
        """End of input: every partition closes its streams and evaluates what is pending (``batch=final``)."""
        started = _time.perf_counter()
        self._check(last)
        target = self.store.entry("final")
        got = self._run(self.spark, last, uuid.uuid4().hex, target, None)
        self.batch_metrics.append({"batch": "final", "tuples": 0, "reports": got["written"], "lines": 0,
                                   "extra": {"timestamps": got["timestamps"]},
                                   "stages": {self.stage.id: {"derived": got["written"],
                                                              "tasks": self.partitions}},
                                   "duration_s": round(_time.perf_counter() - started, 4)})
        return WrittenFiles(f"{target}/kind=model", MODEL_COLUMNS) if got["written"] else None

    def _run(self, spark, previous, token: str, target: str, routed) -> dict:
        """The partitions over the routed lines (None: the end of input) and the previous entry's states, in one
        Spark job whose rows (model parts, rejected records, states, counters: small next to the lines) come
        back to the driver, which writes the entry at ``target``; returns the counters."""
        n = self.partitions
        continues = previous[1].get("token") if previous is not None else None
        with session_conf(spark, dict(BATCH_CONF, **{"spark.sql.shuffle.partitions": str(n)})):
            frame = spark.sql(f"SELECT CAST(id AS INT) AS part, NULL AS src, NULL AS fo, NULL AS file, "
                              f"NULL AS seq, NULL AS line, {q(HELLO)} AS what, NULL AS ts, NULL AS raw "
                              f"FROM range({n})").selectExpr(*self._routed_casts())
            if previous is not None:
                states = spark.read.schema("part INT, text STRING") \
                    .json(_literal(f"{self.store.entry(previous[0])}/kind={STATE}"))
                frame = frame.unionByName(states.selectExpr(
                    "part", "NULL AS src", "NULL AS fo", "NULL AS file", "NULL AS seq", "NULL AS line",
                    f"{q(STATE)} AS what", "NULL AS ts", "text AS raw").selectExpr(*self._routed_casts()))
            if routed is not None:
                frame = frame.unionByName(routed)
            reps = representatives(spark, n)
            rep_array = "array(" + ", ".join(f"CAST({r} AS BIGINT)" for r in reps) + ")"
            task = partition_task(self.spec(), continues, token, finish=routed is None)
            table = frame.selectExpr("*", f"element_at({rep_array}, part + 1) AS rep") \
                .groupBy("rep").applyInArrow(task, PART_COLUMNS).toArrow()
        return self._write(target, _arrow_rows(table, [name for name, _t in _columns(PART_COLUMNS)]))

    def _write(self, target: str, rows: list) -> dict:
        """The entry from the partitions' rows: a model per timestamp with atoms (its parts merged, sorted), the
        rejected records in the sources' order, each partition's state; the counters summed."""
        merged: dict = {}
        rejected, states = [], []
        totals = dict.fromkeys(("facts", "rejected", "unused", "punctuations", "lines", "built"), 0)
        for tag, part, time, atoms, src, fo, file, seq, source, line, text, reason in rows:
            if tag == "model":
                merged.setdefault(time, set()).update(atoms or ())
            elif tag == "rejected":
                rejected.append(((src, fo or 0, file or "", seq or 0), RejectedRecord(source, line, text, reason)))
            elif tag == STATE:
                states.append((part, text))
            elif tag == "metrics":
                for name, value in zip(totals, atoms):
                    totals[name] += int(value)
        models = [Model(t, tuple(sorted(a))) for t, a in sorted(merged.items()) if a]
        fs = self.fs
        for part, text in sorted(states):
            fs.write_text(f"{target}/kind={STATE}/part-{part:05d}.json",
                          json.dumps({"part": part, "text": text}) + "\n")
        if models:
            fs.write_text(f"{target}/kind=model/part-00000.json",
                          "".join(m.to_json() + "\n" for m in models))
        if rejected:
            rejected.sort(key=lambda r: r[0])
            fs.write_text(f"{target}/kind=rejected/part-00000.json",
                          "".join(r.to_json() + "\n" for _k, r in rejected))
        return dict(totals, timestamps=len(merged), written=len(models))

    @staticmethod
    def _routed_casts() -> list[str]:
        return [f"CAST({name} AS {typ}) AS {name}" for name, typ in _columns(ROUTED_COLUMNS)]


# --- the kind's Spark job (``srtopo.kinds``) ---------------------------------------------------------------

class StreamlogOnSpark(ModelKind):
    """Streamlog topologies on the Spark runner (``runners.spark.kind.SparkKind``)."""
    collector: ClassVar[str] = "latency"
    event_time: ClassVar[bool] = False

    def check(self, topology: Topology, sources: Sequence, options) -> None:
        from srtopo.runners.spark.sources import refuse_pipe
        if getattr(options, "partitions", None) is not None and options.partitions < 1:
            raise UnsupportedByRunner(f"partitions must be >= 1, got {options.partitions}")
        for source in sources:
            if not isinstance(source, (FactLines, Lines)):
                raise UnsupportedByRunner(f"the spark runner does not read {type(source).__name__} sources for "
                                          "streamlog topologies", hint="give fact lines: a file, a directory, "
                                          "tcp://HOST:PORT, or lines held in memory")
            if isinstance(source, FactLines):
                if source.spec == "-":
                    raise UnsupportedByRunner("the spark runner cannot read standard input",
                                              hint="give a file, a directory or tcp://HOST:PORT (or --engine "
                                                   "local)")
                if source.idle is not None:
                    raise UnsupportedByRunner("--idle punctuates a silent stream by the wall clock: the spark "
                                              "runner replays batches and punctuates only from the stream",
                                              hint="write '#punctuation T.' lines into the stream, or use "
                                                   "--engine local")
                refuse_pipe(source.spec, "tcp://HOST:PORT")

    @staticmethod
    def partitions(options, spark) -> int:
        return getattr(options, "partitions", None) or \
            (int(spark.sparkContext.defaultParallelism) if spark is not None else 1)

    @staticmethod
    def keyed(topology: Topology) -> bool:
        """Whether the stage runs in key partitions (``streamlog.partition.keyed``)."""
        from srtopo.streamlog.partition import keyed
        from srtopo.streamlog.program import parse_program
        stage = topology.stages[0]
        if not stage.key.keyed:
            return False
        return keyed(parse_program(stage.program, stage.file), stage.key, topology.source.union, stage.retain)

    def stage_tasks(self, topology: Topology, options, spark) -> list[int]:
        n = self.partitions(options, spark) if self.keyed(topology) else 1
        return [n for _ in topology.stages]

    def describe(self, topology: Topology, options, master: str, tasks: list[int]) -> str:
        if self.keyed(topology):
            return (f"spark streamlog on {master}: the streams read by Spark, the program evaluated keyed by "
                    f"{topology.stages[0].key.name} in {tasks[0]} partition(s), one task each per micro-batch, "
                    f"from their checkpointed states ({topology.source.union} union)")
        return (f"spark streamlog on {master}: the streams read by Spark, the program evaluated in one partition "
                f"per micro-batch from the checkpointed state ({topology.source.union} union)")

    def sources(self, topology: Topology, sources: list, stage) -> list:
        out = []
        for i, source in enumerate(sources):
            if isinstance(source, Lines):
                staged = stage(i, source)
                out.append(AtomLog(staged.path, "log", 1) if isinstance(staged, TntFiles) else staged)
            else:
                out.append(AtomLog(source.spec, "log", source.files_per_batch))
        return out

    def job(self, spark, topology: Topology, config, lateness, n_sources: int, options):
        names = [f"stream {k + 1}" for k in range(n_sources)]      # rows name their file
        if self.keyed(topology):
            return KeyedStreamlogJob(spark, topology, names, self.partitions(options, spark), max_gap=config.max_gap)
        return StreamlogJob(spark, topology, names, max_gap=config.max_gap)


JOB = StreamlogOnSpark()
