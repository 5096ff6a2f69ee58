"""What the Spark runner asks of a topology kind's Spark job (``srtopo.kinds``: the module named as a kind's
``spark`` holds ``JOB``, an object of this protocol). The runner itself is the same for every kind: session,
checkpoint, staging of records held in memory, the query's start and stop, the hand-over to the sink."""
from __future__ import annotations

from typing import ClassVar, Protocol, Sequence

from srtopo.ir.records import Model, Report
from srtopo.ir.run import RunConfig, StageCounters
from srtopo.ir.topology import Stage, Topology
from srtopo.runners.spark.sinks import row_field


class SparkKind(Protocol):
    #: the session's garbage collector: ``latency`` (a time point per micro-batch) or ``throughput``
    collector: ClassVar[str]
    #: records are judged late by an allowed lateness (``ir.lateness``); False: the kind orders its input itself
    #: (Streamlog: punctuation and the union)
    event_time: ClassVar[bool]

    def check(self, topology: Topology, sources: Sequence, options) -> None:
        """Raise ``UnsupportedByRunner`` for what the kind's job cannot run (sources, options, features)."""

    def stage_tasks(self, topology: Topology, options, spark) -> list[int]:
        """The tasks each stage runs with (``spark``: the runner's session, or None before it has one)."""

    def describe(self, topology: Topology, options, master: str, tasks: list[int]) -> str:
        """The physical plan in a line."""

    def sources(self, topology: Topology, sources: list, stage) -> list:
        """The sources as the job reads them; ``stage(index, source)`` writes the records held in memory of the
        source at ``index`` under the checkpoint as files and returns the file source that reads them (any other
        source comes back as it is)."""

    def job(self, spark, topology: Topology, config: RunConfig, lateness: int | None, n_sources: int, options):
        """The micro-batch job (``runners.spark.streaming.MicroBatchJob``)."""

    def frames(self, spark, sources: list, lateness: int | None, options=None) -> list:
        """One streaming DataFrame per source (``options``: the run's ``SparkOptions``)."""

    def collect(self, job, options) -> tuple:
        """At the end of a bounded run, (outputs: rows or a DataFrame, sorted by time; or None, records: outputs
        already converted), read back from what the batches wrote."""

    def output_of(self, row) -> Report | Model:
        """One written output row as a record."""

    def read_local(self, paths: list[str]) -> list | None:
        """Outputs in local files, read faster than row by row (None: no such reader)."""

    def stage_counters(self, stage: Stage, per_batch: list[dict], tasks: int) -> StageCounters:
        """A stage's counters from its per-batch metrics."""


def _fields(row):
    """The field names of a Spark Row or a JSON line's dict."""
    return row if isinstance(row, dict) else row.__fields__


class ModelKind:
    """What the kinds that write one model per time point (rules, Streamlog) share: atom lines read by Spark,
    models read back in time order, per-stage counters of atoms read and derived."""

    def frames(self, spark, sources: list, lateness, options=None) -> list:
        from srtopo.runners.spark.sources import atom_frame
        return [atom_frame(spark, source, i) for i, source in enumerate(sources)]

    def collect(self, job, options) -> tuple:
        if options.out_format == "json":
            # a model per time point, in files the batches wrote: read on the driver (a Spark job that
            # re-reads and sorts them cost seconds on streams of millions of atoms)
            return sorted(job.sinks.written_rows(), key=lambda row: int(row["time"])), []
        return job.sinks.outputs(job.spark, job.output_columns).orderBy("time"), []

    def output_of(self, row) -> Model:
        stamp = row_field(row, "timestamp")     # a number in a JSON line (records.INTEGER_TEXT), text in a Row
        unsatisfiable = row_field(row, "unsatisfiable") if "unsatisfiable" in _fields(row) else None
        return Model(int(row_field(row, "time")), tuple(row_field(row, "atoms") or ()),
                     None if stamp is None else str(stamp), not unsatisfiable)

    def read_local(self, paths: list[str]) -> list | None:
        return None

    def stage_counters(self, stage, per_batch: list[dict], tasks: int) -> StageCounters:
        return StageCounters(stage.id, tasks=tasks, seconds=None, window_rows=None, window_peak=None,
                             records_in=sum(p.get("records_in", 0) for p in per_batch),
                             outputs=sum(p.get("derived", 0) for p in per_batch))

