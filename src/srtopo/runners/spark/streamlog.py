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
on arrival, on every runner. One partition evaluates the program (on the driver): keyed Streamlog stages are not
split into key partitions yet.
"""
from __future__ import annotations

import json
import time as _time
from typing import ClassVar, Sequence

from srtopo.errors import UnsupportedByRunner
from srtopo.io.sources import AtomLog, FactLines, Lines, TntFiles
from srtopo.io.tnt import REPLACEMENT, NotUtf8
from srtopo.ir.records import Model, RejectedRecord
from srtopo.ir.topology import Topology
from srtopo.runners.spark import slstate
from srtopo.runners.spark.kind import ModelKind
from srtopo.runners.spark.sinks import REJECTED_COLUMNS, WrittenFiles
from srtopo.runners.spark.streaming import BatchOutcome, MicroBatchJob

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
            self.fs.write_text(f"{entry}/kind=rejected/part-00000.json",
                               "".join(json.dumps({"source": r.source, "line": r.line, "text": r.text,
                                                   "reason": r.reason}, ensure_ascii=False) + "\n"
                                       for r in rejected))
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


# --- the kind's Spark job (``srtopo.kinds``) ---------------------------------------------------------------

class StreamlogOnSpark(ModelKind):
    """Streamlog topologies on the Spark runner (``runners.spark.kind.SparkKind``)."""
    collector: ClassVar[str] = "latency"
    event_time: ClassVar[bool] = False

    def check(self, topology: Topology, sources: Sequence, options) -> None:
        from srtopo.runners.spark.sources import refuse_pipe
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

    def stage_tasks(self, topology: Topology, options, spark) -> list[int]:
        return [1 for _ in topology.stages]

    def describe(self, topology: Topology, options, master: str, tasks: list[int]) -> str:
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
        return StreamlogJob(spark, topology, [f"stream {k + 1}" for k in range(n_sources)],   # rows name their file
                            max_gap=config.max_gap)


JOB = StreamlogOnSpark()
