"""What a run is given and what it gives back, the same for every kind of topology and every runner: the
configuration (:class:`RunConfig`), the per-stage and per-run counters, per-batch metrics and the result, and the
sink that receives outputs and rejected records as they are produced. Plain data: no Spark or clingo imports."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from srtopo.errors import TopologyError
from srtopo.ir.records import Model, RejectedRecord, Report

#: the largest gap a rules run accepts by default (``RunConfig.max_gap``): a day of time points at the default
#: unit of a second
MAX_GAP = 86400


@dataclass(frozen=True)
class RunConfig:
    """What a run needs besides the topology and its sources.

    window: consistency window in time units (None: unbounded); lateness: allowed lateness in time units
    (None: unbounded, exact on any input order); checkpoint: where a runner keeps its state (exactly-once
    across restarts where the runner offers it); out / rejected_out: where the runner writes outputs and
    rejected records in its own durable form (the local runner: JSON-lines files; Spark: directories of
    per-batch files); options: the runner's own frozen options (e.g. ``SparkOptions``); print_empty: a rules
    run outputs every time point (True) or only those some record reached (False: ``srtopo reason`` without
    ``--print-empty``; empty time points are evaluated either way, and long empty stretches cost nothing);
    max_gap: a rules run rejects a record more than this many time points after the last evaluated one (a
    mistyped timestamp; None: any gap is accepted); reports_out: where a run whose topology outputs reports and
    models apart (a chain: ``ModelOutput`` and ``ReportOutput`` both, ``records`` of its output) writes the
    reports in the runner's durable form (None: they are kept out of ``out``, and only reach the sink)."""
    window: int | None = None
    lateness: int | None = None
    checkpoint: str | None = None
    out: str | None = None
    rejected_out: str | None = None
    options: Any = None
    print_empty: bool = True
    max_gap: int | None = MAX_GAP
    reports_out: str | None = None

    def __post_init__(self):
        if self.window is not None and (not isinstance(self.window, int) or self.window < 0):
            raise TopologyError(f"window must be a whole number >= 0 of time units (or unbounded), got {self.window!r}")
        if self.lateness is not None and (not isinstance(self.lateness, int) or self.lateness < 0):
            raise TopologyError(f"allowed lateness must be a whole number >= 0, got {self.lateness!r}")
        if self.max_gap is not None and (not isinstance(self.max_gap, int) or self.max_gap < 1):
            raise TopologyError(f"the largest gap must be a whole number >= 1 of time points (or none), "
                                f"got {self.max_gap!r}")


@dataclass
class StageCounters:
    """Per stage, the same fields on every runner (None where a runner cannot measure one).

    tasks: the tasks the runner ran the stage with (the topology's parallelism where honoured);
    records_in: records the stage received (consistency: tuples, after routing; rules: input atoms);
    cached_in: of those, the ones its window kept; forwarded / inferred: tuples it passed on unchanged or as a
    superclass; ops_evaluated: conjunction ops the received tuples were checked against; outputs: reports it
    found / atoms it derived; window_rows: rows in its window at the end; window_peak: the largest window
    seen; seconds: time spent in the stage; solves / groundings: clingo calls (rule stages)."""
    stage: str
    tasks: int = 1
    records_in: int = 0
    cached_in: int = 0
    forwarded: int = 0
    inferred: int = 0
    ops_evaluated: int = 0
    outputs: int = 0
    window_rows: int | None = 0
    window_peak: int | None = 0
    seconds: float | None = None
    solves: int = 0
    groundings: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class RunCounters:
    """records: stream records taken in (consistency: tuples, a role assertion gives two; rules: atoms),
    late ones included; malformed / late: rejected records; irrelevant: tuples no stage reads; outputs: reports
    or models; batches: micro-batches (the local runner: batches of its sources; Streamlog: timestamps evaluated)."""
    records: int = 0
    malformed: int = 0
    late: int = 0
    irrelevant: int = 0
    outputs: int = 0
    batches: int = 0
    stages: list[StageCounters] = field(default_factory=list)
    extra: dict = field(default_factory=dict)     # what one kind counts besides (Streamlog: punctuations)

    @property
    def window_peak_total(self) -> int:
        return sum(s.window_peak or 0 for s in self.stages)

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "stages"}
        out["stages"] = [s.to_dict() for s in self.stages]
        return out


@dataclass(frozen=True)
class BatchMetrics:
    """One batch: its records, how long it took (seconds of wall time; Spark: the whole trigger) and what it
    output."""
    batch: int | str
    records: int
    seconds: float
    outputs: int = 0
    detail: dict = field(default_factory=dict, compare=False)   # runner-specific (Spark: phases, watermark)


@dataclass
class RunResult:
    runner: str
    physical_plan: str                  # how the runner ran the topology (see Runner.describe)
    outputs: list = field(default_factory=list)      # Report or Model records, kept when the sink is a MemorySink
    rejected: list[RejectedRecord] = field(default_factory=list)
    counters: RunCounters = field(default_factory=RunCounters)
    batches: list[BatchMetrics] = field(default_factory=list)
    seconds: float = 0.0                # the whole run, end of input included
    memory_mb: dict = field(default_factory=dict)    # resident memory of the run's processes at its end
    resumed: bool = False               # the run went on from a checkpoint where batches were committed before
    partial: str = ""                   # what a partial topology left unchecked (``Topology.partial``); empty: nothing

    @property
    def reports(self) -> list[Report]:
        return [o for o in self.outputs if isinstance(o, Report)]

    @property
    def models(self) -> list[Model]:
        return [o for o in self.outputs if isinstance(o, Model)]

    @property
    def keys(self) -> set:
        """(subject, time) of every report, or the time of every model."""
        return {o.key for o in self.outputs}


class Sink(Protocol):
    """Receives outputs and rejected records as a run produces them."""

    def emit(self, output: Report | Model) -> None: ...

    def reject(self, record: RejectedRecord) -> None: ...
