"""What the experiments share: where things are, the TBoxes, the plans of the paper, the typed result row and the
result files, and one way to measure a topology: through the runner protocol, the same for every runner."""
from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
from dataclasses import asdict, dataclass, field, fields
from importlib.resources import files

from srtopo.concepts import is_exists
from srtopo.consistency.balance import even_tasks
from srtopo.consistency.compile import compile_ntm, ltm_n
from srtopo.consistency.nis import NIAnalysis, analyse
from srtopo.consistency.owl import load_tbox
from srtopo.errors import SrtopoError
from srtopo.ir.topology import Topology
from srtopo.measure import percentile
from srtopo.runners import RunConfig, RunResult, get_runner

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
LUBM_TBOX = str(files("srtopo.consistency") / "data" / "lubm-dllite.ttl")     # shipped: srtopo calibrate uses it
DATA = os.environ.get("SRTOPO_DATA", os.path.normpath(os.path.join(ROOT, "..", "shared", "data")))
TBOXES = {
    "lubm": LUBM_TBOX,
    "npd": os.path.join(DATA, "npd", "npd-v2-ql.owl"),   # read in place, never copied into the project
}
UBA = [os.path.join(DATA, "lubm", "owl-toolkit", f"University0_{i}.owl") for i in (0, 1)]


class ExperimentError(SrtopoError):
    """A check of an experiment failed (plans disagree, a planted violation was not reported): fail loudly."""

    def __init__(self, message: str):
        super().__init__(f"experiment check failed: {message}")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def progress(iterable, **kwargs):
    from tqdm import tqdm
    return tqdm(iterable, file=sys.stderr, dynamic_ncols=True, **kwargs)


# --- TBoxes and plans ------------------------------------------------------------------------------------

_ANALYSES: dict[str, NIAnalysis] = {}


def analysis_for(tbox: str) -> NIAnalysis:
    if tbox not in _ANALYSES:
        path = TBOXES[tbox]
        if not os.path.exists(path):
            raise ExperimentError(f"{path}: TBox not found (set SRTOPO_DATA to the shared data directory)")
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


def fig5_plans(a: NIAnalysis, tasks: int) -> list[Topology]:
    """NTM with ``tasks`` tasks and the two-stage LTM-0 .. LTM-k sharing them."""
    plans = [compile_ntm(a, parallelism=tasks)]
    for n in range(len(a.groups) + 1):
        plans.append(ltm_n(a, n, parallelism=even_tasks(tasks, 2)))
    return plans


def named_ops(topology: Topology) -> list[int]:
    return [sum(1 for op in s.conjunction_ops if not is_exists(op.left) and not is_exists(op.right))
            for s in topology.stages]


def describe_plan(topology: Topology) -> dict:
    return {"conjunction_ops": topology.conjunction_counts, "conjunction_ops_named": named_ops(topology),
            "inference_ops": [len(s.inference_ops) for s in topology.stages],
            "partitions": [s.parallelism for s in topology.stages]}


@dataclass
class Stream:
    tbox: str
    tuples: list
    planted: set
    directory: str | None
    params: dict


# --- the typed row -----------------------------------------------------------------------------------------

@dataclass
class Row:
    """One measurement or check. The common fields are typed; what only some experiments have is in ``detail``
    and is written flat next to them."""
    experiment: str
    tbox: str = ""
    topology: str = ""              # the topology's label (ntm, ltm-2, ...) or the other system measured
    engine: str = ""                # the runner (local, spark) or another system (rdflib)
    tasks: int | None = None
    tuples: int | None = None
    reports: int | None = None
    throughput_tps: float | None = None
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    cached_tuples: int | None = None
    detail: dict = field(default_factory=dict)

    def __getitem__(self, key):
        if key in self.__dataclass_fields__:
            return getattr(self, key)
        return self.detail[key]

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def to_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k != "detail"}
        out.update(self.detail)
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in out.items()}

    @staticmethod
    def from_dict(data: dict) -> "Row":
        names = {f.name for f in fields(Row)} - {"detail"}
        return Row(**{k: v for k, v in data.items() if k in names},
                   detail={k: v for k, v in data.items() if k not in names})


# --- measuring through the runner protocol ------------------------------------------------------------------

def measure(engine: str, options, topology: Topology, sources, window: int, tuples: int | None = None, *,
            warmup: int = 1, lateness: int = 0, checkpoint: str | None = None, out: str | None = None
            ) -> tuple[Row, RunResult]:
    """Run ``topology`` on the runner ``engine`` (its ``options``); a Row of what was measured, and the run's
    result. The same rules for every runner: throughput over the batches after the first ``warmup`` (the last
    batch if there are no more), latency = batch durations, cached tuples = peak window rows."""
    result: RunResult = get_runner(engine).run(topology, sources, RunConfig(
        window=window, lateness=lateness, checkpoint=checkpoint, out=out, options=options))
    batches = result.batches
    steady = batches[warmup:] or batches[-1:]
    steady_s = sum(b.seconds for b in steady)
    durations = [b.seconds for b in batches]
    n = result.counters.records if tuples is None else tuples
    stage_seconds = [s.seconds for s in result.counters.stages]
    detail = {"batches": len(batches), "elapsed_s": result.seconds,
              "throughput_all_tps": n / result.seconds if result.seconds else 0.0,
              "cached_per_stage": [s.window_peak for s in result.counters.stages],
              "ops_evaluated": [s.ops_evaluated for s in result.counters.stages],
              "physical_plan": result.physical_plan}
    if all(s is not None for s in stage_seconds):
        detail["stage_seconds"] = [round(s, 4) for s in stage_seconds]
    row = Row("", topology=topology.label, engine=engine, tuples=n, reports=len(result.keys),
              throughput_tps=sum(b.records for b in steady) / steady_s if steady_s else 0.0,
              latency_p50_s=percentile(durations, 0.5), latency_p95_s=percentile(durations, 0.95),
              cached_tuples=result.counters.window_peak_total, detail=detail)
    return row, result


def model_tps(row: Row, topology: Topology, tuples: int) -> float | None:
    """The paper's pipeline model where a runner measures its stages: each stage's time shared by its tasks,
    stages running concurrently, the slowest bounding the throughput (the source assumed fast enough, as the
    paper tunes its generator to the system's capacity)."""
    seconds = row.detail.get("stage_seconds")
    if not seconds:
        return None
    bottleneck = max(sec / s.parallelism for sec, s in zip(seconds, topology.stages))
    return tuples / bottleneck if bottleneck else 0.0


def check_same(name: str, expected: set, got: set, what: str) -> None:
    if expected != got:
        missing = sorted(expected - got)[:3]
        extra = sorted(got - expected)[:3]
        raise ExperimentError(f"{name}: {what} gives {len(got)} reports, expected {len(expected)} "
                              f"(missing e.g. {missing}, extra e.g. {extra})")


# --- machine and files -------------------------------------------------------------------------------------

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
    except (OSError, subprocess.SubprocessError, IndexError):
        info["java"] = "unknown"
    from importlib.metadata import PackageNotFoundError, version
    for package in ("pyspark", "rdflib", "clingo"):
        try:
            info[package] = version(package)    # metadata only: pyspark is imported by the Spark runner alone
        except PackageNotFoundError:
            info[package] = "not installed"
    try:
        info["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                        cwd=ROOT, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def write_results(name: str, rows: list[Row], meta: dict, markdown: str, out_dir: str = RESULTS,
                  plain=None) -> list[str]:
    """name.json (the machine, ``meta`` and the rows; or, with ``plain``, only the list ``plain(rows)``), name.csv
    and name.md."""
    os.makedirs(out_dir, exist_ok=True)
    flat = [r.to_dict() for r in rows]
    base = os.path.join(out_dir, name)
    with open(base + ".json", "w", encoding="utf-8") as handle:
        if plain is not None:
            json.dump(plain(rows), handle, indent=1)
        else:
            json.dump({"experiment": name, "machine": machine(), **meta, "rows": flat}, handle, indent=1)
    keys: list[str] = []
    for r in flat:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(base + ".csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        for r in flat:
            writer.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})
    with open(base + ".md", "w", encoding="utf-8") as handle:
        handle.write(markdown.rstrip() + "\n")
    return [base + ext for ext in (".json", ".csv", ".md")]


def read_rows(name: str, out_dir: str = RESULTS) -> list[Row] | None:
    """The rows of an earlier run of experiment ``name`` in ``out_dir`` (None if there is none)."""
    path = os.path.join(out_dir, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return [Row.from_dict(r) for r in (data if isinstance(data, list) else data["rows"])]


def md_table(headers: list[str], rows: list[list]) -> str:
    def fmt(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def first_log(path) -> str:
    """A log file, or the first ``.log`` file (by name) of a directory of them (an ICLP2021 input's Log)."""
    path = str(path)
    if os.path.isdir(path):
        return os.path.join(path, sorted(n for n in os.listdir(path) if n.endswith(".log"))[0])
    return path


def models_digest(models: list) -> str:
    """A digest of a run's models that two processes agree on (``hash`` of a string is salted per process)."""
    import hashlib
    return hashlib.sha256(json.dumps(models, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def run_worker(module: str, args: list[str]) -> dict | None:
    """Run ``python -m module --worker ARGS`` in a process of its own (its own Spark session and master) and
    return the JSON object it prints last; None (its stderr shown) if it failed."""
    env = dict(os.environ, PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", sys.executable))
    proc = subprocess.run([sys.executable, "-m", module, "--worker", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT)     # experiments is a package of the checkout, imported from its root
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])
