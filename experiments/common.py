"""Shared pieces of the experiment scripts: TBoxes, plans, engines, machine description, result files."""
from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from statistics import median

from srtopo.ontology.model import is_exists
from srtopo.ontology.nis import NIAnalysis, analyse
from srtopo.ontology.owl import load_tbox
from srtopo.topology.compile import compile_ltm, compile_ntm, ltm_n
from srtopo.topology.ir import Topology
from srtopo.topology.runners.local import LocalRunner

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
DATA = os.environ.get("SRTOPO_DATA", os.path.normpath(os.path.join(ROOT, "..", "shared", "data")))
TBOXES = {
    "lubm": os.path.join(HERE, "tboxes", "lubm-dllite.ttl"),
    "npd": os.path.join(DATA, "npd", "npd-v2-ql.owl"),   # read in place, never copied into the project
}
UBA = [os.path.join(DATA, "lubm", "owl-toolkit", f"University0_{i}.owl") for i in (0, 1)]


class ExperimentError(SystemExit):
    """Raised (exit status 1 with a message) when plans disagree or a check fails: fail loudly."""

    def __init__(self, message: str):
        super().__init__(f"experiment check failed: {message}")


_ANALYSES: dict[str, NIAnalysis] = {}


def analysis_for(tbox: str) -> NIAnalysis:
    if tbox not in _ANALYSES:
        path = TBOXES[tbox]
        if not os.path.exists(path):
            raise SystemExit(f"{path}: TBox not found (set SRTOPO_DATA to the shared data directory)")
        _ANALYSES[tbox] = analyse(load_tbox(path, name=tbox))
    return _ANALYSES[tbox]


def tbox_stats(tbox: str) -> dict:
    a = analysis_for(tbox)
    report = a.tbox.report
    named = sum(1 for x, y in a.closure if not is_exists(x) and not is_exists(y))
    return {
        "tbox": tbox, "source": os.path.relpath(TBOXES[tbox], ROOT) if TBOXES[tbox].startswith(ROOT)
        else TBOXES[tbox],
        "classes": report.classes, "properties": report.properties,
        "pis": sum(v for _, v in report.pi_counts), "pi_kinds": dict(report.pi_counts),
        "nis": sum(v for _, v in report.ni_counts), "ni_kinds": dict(report.ni_counts),
        "skipped": len(report.skipped), "skipped_kinds": report.skipped_by_kind(),
        "basic_concepts": len(a.tbox.concepts),
        "ni_closure": len(a.closure), "ni_closure_named": named,
        "ni_roots": len(a.roots), "ni_groups": len(a.groups), "group_sizes": [len(g) for g in a.groups],
        "unsatisfiable": len(a.unsatisfiable), "relevant_concepts": len(a.relevant_concepts()),
    }


# --- plans ---------------------------------------------------------------------------------------------

def stage_partitions(tasks: int, stages: int) -> list[int]:
    """The paper's budget: ``tasks`` tasks in all, shared evenly by the stages (at least one each)."""
    base, extra = divmod(max(tasks, stages), stages)
    return [base + (1 if i < extra else 0) for i in range(stages)]


def fig5_plans(a: NIAnalysis, tasks: int) -> list[Topology]:
    k = len(a.groups)
    plans = [compile_ntm(a, parallelism=tasks)]
    for n in range(k + 1):
        plans.append(ltm_n(a, n, parallelism=stage_partitions(tasks, 2)))
    return plans


def named_ops(topology: Topology) -> list[int]:
    return [sum(1 for op in s.conjunction_ops if not is_exists(op.left) and not is_exists(op.right))
            for s in topology.stages]


def multi_stage(a: NIAnalysis, stages: int, split, tasks_per_stage: int = 1) -> Topology:
    topo = compile_ltm(a, split, parallelism=tasks_per_stage)
    return topo


# --- the local engine ------------------------------------------------------------------------------

class TimedLocalRunner(LocalRunner):
    """The reference runner with the CPU time spent in each stage (for the pipeline model)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stage_seconds = [0.0] * len(self.topology.stages)

    def _stage(self, index, plan, subject, time_, frontier, out):
        started = time.perf_counter()
        try:
            return super()._stage(index, plan, subject, time_, frontier, out)
        finally:
            self.stage_seconds[index] += time.perf_counter() - started


def percentile(values, q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))
    return ordered[index]


def run_local(topology: Topology, tuples, window: int) -> dict:
    """Run the reference runner time point by time point; throughput, latency per time point, counters."""
    runner = TimedLocalRunner(topology, window=window, allowed_lateness=0)
    reports = []
    latencies = []
    started = time.perf_counter()
    batch: list = []
    current = None

    def flush():
        t0 = time.perf_counter()
        for item in batch:
            reports.extend(runner.push(item))
        latencies.append(time.perf_counter() - t0)

    for item in tuples:
        if item.time != current and batch:
            flush()
            batch = []
        current = item.time
        batch.append(item)
    if batch:
        flush()
    elapsed = time.perf_counter() - started
    n = len(tuples)
    parts = [s.parallelism for s in topology.stages]
    other = max(0.0, elapsed - sum(runner.stage_seconds))   # source: parsing-free, alias lookup, bookkeeping
    bottleneck = max([other] + [sec / p for sec, p in zip(runner.stage_seconds, parts)])
    return {
        "engine": "local",
        "throughput_tps": n / elapsed if elapsed else 0.0,
        "model_tps": n / bottleneck if bottleneck else 0.0,
        "latency_p50_s": percentile(latencies, 0.5), "latency_p95_s": percentile(latencies, 0.95),
        "cached_tuples": runner.counters.cached_peak_total,
        "cached_per_stage": [s.cached_peak for s in runner.counters.stages],
        "ops_evaluated": [s.ops_evaluated for s in runner.counters.stages],
        "stage_seconds": [round(x, 4) for x in runner.stage_seconds],
        "elapsed_s": elapsed, "tuples": n,
        "report_keys": {(r.subject, r.time) for r in reports},
    }


# --- the Spark engine ------------------------------------------------------------------------------

_SPARK = None


def spark_session(master: str = "local[2]"):
    global _SPARK
    if _SPARK is None:
        from srtopo.topology.runners.spark import get_session
        _SPARK = get_session(master=master, app_name="srtopo-experiments", shuffle_partitions=2,
                             conf={"spark.default.parallelism": "2"})
    return _SPARK


def run_spark(topology: Topology, stream_dir: str, work_dir: str, window: int, plan: str = "staged",
              master: str = "local[2]", tuples: int | None = None) -> dict:
    """One ``availableNow`` run over the stream files (one file per micro-batch)."""
    import shutil
    import uuid
    from srtopo.topology.runners.spark import SparkRunner, TntSource
    spark = spark_session(master)
    run_dir = os.path.join(work_dir, "spark-" + uuid.uuid4().hex[:8])
    runner = SparkRunner(topology, window=window, lateness=0, plan=plan, spark=spark)
    started = time.perf_counter()
    try:
        df = runner.run_once([TntSource(stream_dir, max_files_per_trigger=1)], out=os.path.join(run_dir, "out"),
                             checkpoint=os.path.join(run_dir, "ckpt"))
        keys = {(r["subject"], int(r["time"])) for r in df.select("subject", "time").collect()}
    finally:
        runner.stop()
    elapsed = time.perf_counter() - started
    metrics = list(runner.batch_metrics)
    shutil.rmtree(run_dir, ignore_errors=True)
    durations = [m["duration_s"] for m in metrics]
    counts = [m.get("tuples", 0) for m in metrics]
    steady = metrics[1:] if len(metrics) > 1 else metrics   # the first batch pays Spark's warm-up
    steady_time = sum(m["duration_s"] for m in steady)
    steady_tuples = sum(m.get("tuples", 0) for m in steady)
    total = tuples if tuples is not None else sum(counts)
    return {
        "engine": "spark", "spark_plan": plan,
        "throughput_tps": steady_tuples / steady_time if steady_time else 0.0,
        "throughput_all_tps": total / elapsed if elapsed else 0.0,
        "latency_p50_s": median(durations) if durations else 0.0,
        "latency_p95_s": percentile(durations, 0.95),
        "cached_tuples": max((m.get("cached_tuples", 0) for m in metrics), default=0),
        "cached_per_stage": _per_stage_peak(metrics, topology),
        "batches": len(metrics), "elapsed_s": elapsed, "tuples": total,
        "report_keys": keys,
    }


def _per_stage_peak(metrics, topology) -> list[int]:
    out = []
    for stage in topology.stages:
        out.append(max((m["stages"].get(stage.id, {}).get("state_rows", 0) for m in metrics), default=0))
    return out


# --- machine and files -------------------------------------------------------------------------------

def machine() -> dict:
    info = {"nproc": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal"):
                    info["ram_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
        info["loadavg_at_start"] = os.getloadavg()[0]
    except OSError:
        pass
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
        info["java"] = (java.stderr or java.stdout).splitlines()[0]
    except Exception:   # noqa: BLE001 - description only
        info["java"] = "unknown"
    try:
        from importlib.metadata import version
        info["spark"] = version("pyspark")   # metadata only: pyspark is imported by the runner alone
    except Exception:   # noqa: BLE001
        info["spark"] = "not installed"
    try:
        import rdflib
        info["rdflib"] = rdflib.__version__
    except Exception:   # noqa: BLE001
        pass
    try:
        info["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                        cwd=ROOT, timeout=10).stdout.strip()
    except Exception:   # noqa: BLE001
        pass
    return info


def clean_row(row: dict) -> dict:
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items() if k != "report_keys"}


def write_results(name: str, rows: list[dict], meta: dict, markdown: str, out_dir: str = RESULTS) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    rows = [clean_row(r) for r in rows]
    base = os.path.join(out_dir, name)
    with open(base + ".json", "w", encoding="utf-8") as handle:
        json.dump({"experiment": name, "machine": machine(), **meta, "rows": rows}, handle, indent=1)
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(base + ".csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})
    with open(base + ".md", "w", encoding="utf-8") as handle:
        handle.write(markdown.rstrip() + "\n")
    return [base + ext for ext in (".json", ".csv", ".md")]


def md_table(headers: list[str], rows: list[list]) -> str:
    def fmt(v):
        if isinstance(v, float):
            return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass
class Stream:
    tbox: str
    tuples: list
    planted: set
    directory: str | None
    params: dict


def check_same(name: str, expected: set, got: set, what: str) -> None:
    if expected != got:
        missing = sorted(expected - got)[:3]
        extra = sorted(got - expected)[:3]
        raise ExperimentError(f"{name}: {what} gives {len(got)} reports, expected {len(expected)} "
                              f"(missing e.g. {missing}, extra e.g. {extra})")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
