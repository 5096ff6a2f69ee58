"""A runner-aware cost model of consistency topologies: a plan's throughput predicted from what its routing
says each stage does, with constants measured on the machine at hand (``srtopo calibrate``).

"Distributed Stream Consistency Checking" balances by conjunction operations per bolt, its cost unit:
every operation of a bolt meets every tuple. The runners here differ: the local runner's ``indexed`` plan finds
a tuple's conflict partners by hash lookup (its cost does not grow with the closure), its ``operators`` plan
is the paper's bolt, and Spark pays per tuple parsed, per row routed into a stage and per exchange and batch.
So the model is one set of *loads* per stage, read off the IR (``Topology.route_counts``, per stream tuple,
weighted by the concepts' rates), and one set of *coefficients* per *target* (a runner and its physical plan):

  * ``arrivals``: tuples that reach the stage; ``concepts``: the concepts they are there as (a tuple inferred
    to two superclasses is two); ``cached``: those the stage's window keeps; ``passed``: forwarded or inferred
    to the next stage; ``met``: conjunction ops of the stage times concepts, what the ``operators`` plan
    evaluates. The ``indexed`` plan has no load that grows with the conjunction ops: a tuple meets the subject's
    cached tuples, one hash probe each, whatever the closure (a load of "ops touching the tuple's concept",
    fitted on the bundled LUBM TBox, took noise that NPD's 100x larger closure turned into a wrong pick).
  * local runner (a pipeline, the paper's model): a stage's seconds per stream tuple are the coefficients times
    its loads, shared by its tasks; the slowest stage bounds the throughput.
  * columnar plans (the local runner's ``columnar`` and Spark's: a micro-batch at a time, each stage's rows sorted
    and swept one stage after another) are modelled as Spark's micro-batches are; the local plan has one core, no
    exchange and no task.
  * Spark (micro-batches; stages run one after the other inside a batch): a batch of B tuples takes
    ``per_batch + per_exchange * exchanges + per_task * tasks + B * per_tuple / cores + sum_k B * (coefficients
    . loads_k) / min(tasks_k, cores)`` seconds, where ``fused`` has one exchange shared by every stage and
    ``staged`` one per stage with the stage's own tasks. ``per_task`` is what each task of a micro-batch costs
    whatever its rows (scheduling it, and the state files it writes and the next batch reads): tasks beyond the
    cores buy no parallelism and still cost it, so where the cores are known (``Target.cores_known``) the
    ``cost`` balancer gives no stage more tasks than cores.

The window's contents (how many cached tuples a subject has) and the reports are not in the model: they depend on
the stream, not on the plan. Coefficients are fitted by non-negative least squares (:func:`fit`) to measured
stage seconds (local) or batch seconds (Spark); ``DEFAULTS`` were measured on the 2-core machine the project was
built on, and a calibration file, when there is one, takes their place.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

from srtopo.errors import TopologyError
from srtopo.ir.topology import Topology

FEATURES = ("arrivals", "concepts", "cached", "passed", "met")
#: the loads each target's coefficients are fitted on (the others are left at zero)
TARGET_FEATURES = {
    "local/indexed": ("arrivals", "cached", "passed"),
    "local/operators": ("arrivals", "cached", "passed", "met"),
    "local/columnar": ("concepts", "cached"),
    "spark/columnar": ("concepts", "cached"),
    "spark/fused": ("cached",),
    "spark/staged": ("concepts", "cached"),
}
CALIBRATION_ENV = "SRTOPO_CALIBRATION"
DEFAULT_BATCH_TUPLES = 500_000


@dataclass(frozen=True)
class Target:
    """What a plan's cost depends on besides the topology: the runner and its physical plan, the cores its
    tasks share, and (Spark) the micro-batch size and the shuffle partitions of the fused plan. ``cores_known``:
    ``cores`` are the target's own task slots (a ``local[N]`` master, a cluster of known size), not this
    machine's cores standing in for a cluster elsewhere."""
    runner: str = "local"
    physical_plan: str = "indexed"
    cores: int = 1
    batch_tuples: int = DEFAULT_BATCH_TUPLES
    partitions: int | None = None
    cores_known: bool = False

    @property
    def key(self) -> str:
        return f"{self.runner}/{self.physical_plan}"

    def __post_init__(self):
        if self.key not in TARGET_FEATURES:
            raise TopologyError(f"no cost model for the {self.runner} runner's {self.physical_plan!r} plan",
                                hint="one of " + ", ".join(TARGET_FEATURES))


def cores_of_master(master: str | None) -> int:
    """Task slots a Spark master gives on this machine: local[N] -> N, local / local[*] / a cluster -> the
    machine's cores (a cluster elsewhere is not known from its URL)."""
    text = (master or "local[*]").strip()
    if text == "local":
        return 1
    if text.startswith("local[") and text.endswith("]"):
        inner = text[6:-1].split(",")[0]
        if inner.isdigit():
            return max(1, int(inner))
    return os.cpu_count() or 1


def target_for(runner: str, options=None) -> Target:
    """The cost model's view of a runner and its options (``LocalOptions``, ``SparkOptions`` or None)."""
    if runner == "local":
        from srtopo.consistency.local import DEFAULT_PLAN
        return Target("local", getattr(options, "physical_plan", None) or DEFAULT_PLAN, 1)
    if runner == "spark":
        master = getattr(options, "master", None)
        return Target("spark", getattr(options, "physical_plan", None) or "columnar", cores_of_master(master),
                      partitions=getattr(options, "shuffle_partitions", None),
                      cores_known=(master or "local[*]").strip().startswith("local"))
    raise TopologyError(f"no cost model for the runner {runner!r}", hint="use local or spark")


@dataclass(frozen=True)
class Coefficients:
    """Seconds per unit of each load (per stream tuple), and Spark's per-tuple, per-batch, per-exchange and
    per-task seconds; ``source`` says where they come from (defaults measured here, or a calibration run)."""
    per_load: Mapping[str, float]
    per_tuple: float = 0.0
    per_batch: float = 0.0
    per_exchange: float = 0.0
    source: str = "defaults"
    per_task: float = 0.0

    def to_dict(self) -> dict:
        out = asdict(self)
        out["per_load"] = dict(self.per_load)
        return out

    @staticmethod
    def from_dict(data: dict) -> "Coefficients":
        unknown = set(data.get("per_load", {})) - set(FEATURES)
        if unknown:
            raise TopologyError(f"cost coefficients name unknown loads {sorted(unknown)}",
                                hint="run srtopo calibrate again")
        found = Coefficients({k: float(v) for k, v in data.get("per_load", {}).items()},
                             float(data.get("per_tuple", 0.0)), float(data.get("per_batch", 0.0)),
                             float(data.get("per_exchange", 0.0)), str(data.get("source", "calibration")),
                             float(data.get("per_task", 0.0)))       # absent from files of earlier versions
        values = [*found.per_load.values(), found.per_tuple, found.per_batch, found.per_exchange, found.per_task]
        if not all(math.isfinite(v) and v >= 0 for v in values) or not any(values):
            raise TopologyError("cost coefficients must be finite seconds >= 0, not all zero",
                                hint="run srtopo calibrate again")
        return found


#: measured on the project's 2-core machine (``srtopo calibrate --engines all``, 2026-11-25, local[2]; spark/staged
#: from the calibration of the LUBM/NPD study's run, the first with ``per_task``; local/indexed the median of three
#: calibrations of 2026-11-26): a calibration file takes their place
DEFAULTS: dict[str, Coefficients] = {
    "local/indexed": Coefficients({"arrivals": 3.39e-07, "cached": 8.30e-07, "passed": 0.0}),
    "local/operators": Coefficients({"arrivals": 0.0, "cached": 6.01e-06, "passed": 0.0, "met": 3.44e-08}),
    # the columnar plans: calibrated 2026-11-28 with other work on the machine (load average 17-19 on 2 cores)
    "local/columnar": Coefficients({"concepts": 0.0, "cached": 7.67e-06}),
    "spark/columnar": Coefficients({"concepts": 0.0, "cached": 0.0}, per_tuple=2.48e-05, per_batch=0.972),
    "spark/fused": Coefficients({"cached": 0.0}, per_tuple=1.11e-05, per_batch=1.31, per_exchange=0.0),
    "spark/staged": Coefficients({"concepts": 1.14e-06, "cached": 0.0}, per_tuple=6.81e-06, per_batch=0.575,
                                 per_exchange=0.0943, per_task=0.120),
}


# --- loads ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StageLoad:
    """A stage's loads per stream tuple (``FEATURES``) and its tasks."""
    loads: Mapping[str, float]
    tasks: int


def stage_loads(topology: Topology, rates: Mapping[str, float] | None = None) -> tuple[StageLoad, ...]:
    """Per stage, the loads of one stream tuple on average, the asserted concepts weighted by ``rates``
    (default: every concept the source accepts at the same rate)."""
    if rates is None:
        rates = {c: 1.0 for c in topology.source.concepts}
    total = sum(float(r) for r in rates.values())
    sums = [dict.fromkeys(FEATURES, 0.0) for _ in topology.stages]
    ops = [len(s.conjunction_ops) for s in topology.stages]
    for asserted, rate in rates.items():
        rate = float(rate)
        for k, (n_in, n_cached, n_fwd, n_inf, _ops) in enumerate(topology.route_counts(asserted)):
            load = sums[k]
            load["arrivals"] += rate
            load["concepts"] += rate * n_in
            load["cached"] += rate * n_cached
            load["passed"] += rate * (n_fwd + n_inf)
            load["met"] += rate * n_in * ops[k]
    return tuple(StageLoad({f: (v / total if total else 0.0) for f, v in s.items()}, st.parallelism)
                 for s, st in zip(sums, topology.stages))


def _work(loads: Mapping[str, float], coefficients: Coefficients) -> float:
    return sum(coefficients.per_load.get(f, 0.0) * v for f, v in loads.items())


def batched(target: Target) -> bool:
    """Whether the target's cost is a micro-batch's seconds (every stage in turn), else a pipeline's slowest stage."""
    return target.runner == "spark" or target.physical_plan == "columnar"


def exchanges(topology: Topology, target: Target) -> int:
    if target.runner == "local":
        return 0
    return len(topology.stages) if target.physical_plan == "staged" else 1


def tasks_per_batch(topology: Topology, target: Target) -> int:
    """Spark tasks of a micro-batch that scale with the plan: each stage's own (staged) or the shared shuffle
    partitions (fused)."""
    if target.runner == "local":
        return 0
    if target.physical_plan == "staged":
        return sum(s.parallelism for s in topology.stages)
    return target.partitions or 2 * target.cores


def stage_slots(topology: Topology, target: Target) -> list[int]:
    """How many tasks each stage's per-row work runs on at once."""
    if target.runner == "local":
        return [1 if batched(target) else s.parallelism for s in topology.stages]
    if target.physical_plan == "staged":
        return [min(s.parallelism, target.cores) for s in topology.stages]
    shared = target.partitions or 2 * target.cores
    return [min(shared, target.cores)] * len(topology.stages)


def predict_tps(topology: Topology, target: Target, coefficients: Coefficients | None = None,
                rates: Mapping[str, float] | None = None) -> float:
    """Predicted steady tuples/s of ``topology`` on ``target`` (see the module docstring)."""
    c = coefficients or coefficients_for(target)
    loads = stage_loads(topology, rates)
    slots = stage_slots(topology, target)
    if not batched(target):
        bottleneck = max((_work(s.loads, c) / n for s, n in zip(loads, slots)), default=0.0)
        return 1.0 / bottleneck if bottleneck > 0 else float("inf")
    b = target.batch_tuples
    seconds = (c.per_batch + c.per_exchange * exchanges(topology, target)
               + c.per_task * tasks_per_batch(topology, target) + b * c.per_tuple / max(1, target.cores)
               + sum(b * _work(s.loads, c) / n for s, n in zip(loads, slots)))
    return b / seconds if seconds > 0 else float("inf")


# --- calibration files ----------------------------------------------------------------------------------------

def calibration_path() -> str:
    """Where ``srtopo calibrate`` writes and the balancer reads: $SRTOPO_CALIBRATION, else
    ~/.cache/srtopo/calibration.json."""
    given = os.environ.get(CALIBRATION_ENV)
    if given:
        return given
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "srtopo", "calibration.json")


def read_calibration(path: str | None = None) -> dict[str, Coefficients]:
    """The coefficients of a calibration file (empty when there is none); a file that cannot be read is an
    error that names it."""
    path = path or calibration_path()
    if not os.path.exists(path):
        return {}
    try:
        return {key: Coefficients.from_dict(value) for key, value in _target_entries(path)}
    except TopologyError as error:
        raise TopologyError(error.message, file=path, hint=error.hint) from None
    except (OSError, ValueError, AttributeError, TypeError) as error:
        raise TopologyError(f"not a calibration file ({error})", file=path,
                            hint=f"run srtopo calibrate again, or remove the file (or unset {CALIBRATION_ENV})") \
            from None


def _target_entries(path: str) -> list[tuple[str, object]]:
    """A calibration file's entries for the targets this version models, under its key ``engines`` (the file's
    format since the first calibration; a byte-order mark from an editor is fine)."""
    with open(path, encoding="utf-8-sig") as handle:
        data = json.load(handle)
    return [(key, value) for key, value in data.get("engines", {}).items() if key in TARGET_FEATURES]


def write_calibration(found: Mapping[str, Coefficients], path: str | None = None, meta: dict | None = None) -> str:
    """Merge ``found`` into the calibration file (other targets' entries are kept, where they are still valid: a
    file that cannot be read, or an entry of an earlier model, is what calibrating again replaces); written aside
    and renamed."""
    path = path or calibration_path()
    targets = {}
    try:
        for key, value in _target_entries(path):
            try:
                targets[key] = Coefficients.from_dict(value).to_dict()
            except (TopologyError, AttributeError, TypeError, ValueError):
                pass
    except (OSError, ValueError, AttributeError):
        pass
    targets.update({k: v.to_dict() for k, v in found.items()})
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"engines": targets, **(meta or {})}, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(tmp, path)
    return path


def coefficients_for(target: Target, path: str | None = None) -> Coefficients:
    """The calibrated coefficients of ``target`` where a calibration file has them, else the defaults."""
    return read_calibration(path).get(target.key) or DEFAULTS[target.key]


# --- fitting ----------------------------------------------------------------------------------------------------

def nnls(rows: Sequence[Sequence[float]], targets: Sequence[float]) -> list[float]:
    """Non-negative least squares (Lawson and Hanson's active set method) on a few columns."""
    import numpy as np
    a = np.asarray(rows, dtype=float)
    b = np.asarray(targets, dtype=float)
    n = a.shape[1]
    scale = np.where(np.abs(a).max(axis=0) > 0, np.abs(a).max(axis=0), 1.0)   # columns of very different sizes
    a = a / scale
    x = np.zeros(n)
    passive: list[int] = []
    for _ in range(3 * n + 10):
        gradient = a.T @ (b - a @ x)
        free = [j for j in range(n) if j not in passive and gradient[j] > 1e-12]
        if not free:
            break
        passive.append(max(free, key=lambda j: gradient[j]))
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if all(z[j] > 0 for j in passive):
                x = z
                break
            ratios = [x[j] / (x[j] - z[j]) for j in passive if z[j] <= 0 and x[j] - z[j] != 0]
            alpha = min(ratios) if ratios else 0.0
            x = x + alpha * (z - x)
            passive = [j for j in passive if x[j] > 1e-15]
            if not passive:
                break
    return list(x / scale)


@dataclass
class Observation:
    """One measurement to fit: a local stage's seconds per stream tuple, or a Spark batch's seconds."""
    topology: Topology
    target: Target
    seconds: float
    stage: int | None = None          # local: which stage
    batch_tuples: int = 0             # spark: the batch's tuples
    rates: Mapping[str, float] | None = field(default=None, repr=False)


def _spark_columns(o: Observation, names: Sequence[str]) -> list[float]:
    loads = stage_loads(o.topology, o.rates)
    slots = stage_slots(o.topology, o.target)
    b = o.batch_tuples
    return ([1.0, float(exchanges(o.topology, o.target)), float(tasks_per_batch(o.topology, o.target)),
             b / max(1, o.target.cores)]
            + [sum(b * s.loads[f] / n for s, n in zip(loads, slots)) for f in names])


def fit(observations: Sequence[Observation], source: str = "calibration") -> Coefficients:
    """Coefficients of one target (every observation's target has the same key) by non-negative least squares."""
    if not observations:
        raise TopologyError("nothing to fit the cost model on")
    key = observations[0].target.key
    if any(o.target.key != key for o in observations):
        raise TopologyError("observations of several targets cannot be fitted together")
    names = TARGET_FEATURES[key]
    if not batched(observations[0].target):
        rows = [[stage_loads(o.topology, o.rates)[o.stage].loads[f] for f in names] for o in observations]
        x = nnls(rows, [o.seconds for o in observations])
        return Coefficients(dict(zip(names, x)), source=source)
    x = nnls([_spark_columns(o, names) for o in observations], [o.seconds for o in observations])
    return Coefficients(dict(zip(names, x[4:])), per_tuple=x[3], per_batch=x[0], per_exchange=x[1], source=source,
                        per_task=x[2])
