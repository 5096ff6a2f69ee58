"""What the experiments share: where things are, the TBoxes, the plans of the paper, the typed result row, one way
to measure a topology (through the runner protocol, the same for every runner), and the benchmarks' harness: their
command line, a process of its own for a run, JVM warm-up, timing, memory, and the results (JSON with the
machine's description, CSV, tables, plots)."""
from __future__ import annotations

import argparse
import csv
import datetime as _dt
import glob
import hashlib
import json
import os
import platform
import re
import resource
import statistics
import string
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from importlib.resources import files
from pathlib import Path

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
EXAMPLES = Path(ROOT, "examples")


class ExperimentError(SrtopoError):
    """A check of an experiment failed (plans disagree, a planted violation was not reported): fail loudly."""

    def __init__(self, message: str):
        super().__init__(f"experiment check failed: {message}")


def program(name: str, **values) -> str:
    """A program of ``experiments/programs`` (programs are data), its ``%`` comment lines left out (a run prints
    and stores the program it ran) and its ``$name`` placeholders filled from ``values``."""
    with open(os.path.join(HERE, "programs", name), encoding="utf-8") as handle:
        text = "".join(line for line in handle if not line.startswith("%"))
    return string.Template(text).substitute(values) if values else text


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


# --- the benchmark harness: command line, processes, measuring, results --------------------------------------

class _Help(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The module's docstring as it is written, and every flag's default."""


#: what the flags that every benchmark names alike mean
COMMON_FLAGS = {"master": "Spark's master", "out": "where the results go (by default under experiments/results)",
                "seed": "the generators' seed", "partitions": "Spark's partitions (tasks) per stage"}


def arguments(doc: str, **flags) -> argparse.ArgumentParser:
    """A benchmark's command line: its docstring as the help, and a flag ``--name`` for each keyword, typed by its
    default (``False``: a switch; ``(default, help)`` gives a help, ``(default, help, kind)`` its type, or its
    choices where ``kind`` is a list). The flags benchmarks share are named alike (``COMMON_FLAGS``); the default
    of ``out`` is taken relative to ``experiments/results``."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=_Help)
    for name, spec in flags.items():
        default, text, *kind = spec if isinstance(spec, tuple) else (spec, COMMON_FLAGS.get(name))
        option = "--" + name.replace("_", "-")
        if default is False:
            parser.add_argument(option, action="store_true", help=text)
            continue
        if name == "out" and default is not None:
            default = os.path.normpath(os.path.join(RESULTS, default))
        kind = kind[0] if kind else str if default is None else type(default)
        parser.add_argument(option, default=default, help=text,
                            **({"choices": kind} if isinstance(kind, list) else {"type": kind}))
    return parser


def splits(text: str, kind=str) -> list:
    """The items of a comma-separated flag (none for an empty one)."""
    return [kind(x.strip()) for x in text.split(",") if x.strip()]


def in_own_process(function, /, quiet: bool = True, **kwargs):
    """``function(**kwargs)`` (a module-level function of the experiments) in a Python process of its own, and what
    it returns, through JSON: its own Spark session and master, its own peak memory, a JVM no earlier run warmed.
    ``quiet``: its stderr (Spark's log) is kept back and shown only if it fails, else passed through."""
    module = function.__module__
    if module == "__main__":            # the benchmark run as ``python -m experiments.<name>``
        module = sys.modules["__main__"].__spec__.name
    call = json.dumps({"module": module, "function": function.__qualname__, "kwargs": kwargs})
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)   # experiments: the checkout's
    proc = subprocess.run([sys.executable, "-m", "experiments.common", call], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE if quiet else None, text=True, env=cli_env(PYTHONPATH=path))
    if proc.returncode != 0:
        raise ExperimentError(f"{module}.{function.__qualname__} failed in its own process (exit status "
                              f"{proc.returncode}){(chr(10) + proc.stderr[-3000:]) if quiet else ''}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cli_env(**extra) -> dict:
    """The environment of a child process: Spark's Python workers run this interpreter (the venv's)."""
    return dict(os.environ, PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON") or sys.executable, **extra)


def srtopo(args: list[str], timeout: float = 900, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """``srtopo ARGS`` (the command line) in a process of its own; with ``check``, a failure raises RuntimeError
    with the end of its error output."""
    done = subprocess.run([sys.executable, "-m", "srtopo", *args], env=kwargs.pop("env", None) or cli_env(),
                          capture_output=True, text=True, timeout=timeout, cwd=kwargs.pop("cwd", ROOT), **kwargs)
    if check and done.returncode != 0:
        raise RuntimeError(f"srtopo {' '.join(args[:3])} failed: {done.stderr[-2000:]}")
    return done


def warm_jvm(runner, topology, sources, config: RunConfig) -> None:
    """One run thrown away, its checkpoint in a scratch directory: the measured runs then find the JVM's JIT done
    with Spark's planner and the generated code, and the Python workers up, as a service that has run for a while
    (a new JVM's first micro-batches take 2-3 times longer)."""
    with tempfile.TemporaryDirectory(prefix="srtopo-warm-") as tmp:
        runner.run(topology, sources, replace(config, checkpoint=os.path.join(tmp, "ck"), out=None))


def timed(function, *args, **kwargs) -> tuple:
    """(what ``function(*args, **kwargs)`` returns, the seconds it took)."""
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


_STATS = {"min": min, "p50": 0.5, "median": 0.5, "p95": 0.95, "max": max, "mean": statistics.fmean}


def stats(values, key: str = "{}", which=("p50", "p95"), scale: float = 1.0, digits: int | None = None) -> dict:
    """Summaries of ``values`` x ``scale`` (nearest-rank percentiles, min, max, mean), each under
    ``key.format(name)``: ``stats(seconds, "latency_{}_s")`` gives latency_p50_s and latency_p95_s (None where
    there are no values)."""
    scaled = [v * scale for v in values]
    out = {}
    for name in which:
        how = _STATS[name]
        value = (percentile(scaled, how) if isinstance(how, float) else how(scaled)) if scaled else None
        out[key.format(name)] = round(value, digits) if value is not None and digits is not None else value
    return out


def steady_rate(batches, count, skip: int = 1) -> float | None:
    """Units per second over the micro-batches after the first ``skip`` (all of them if there are no more), a
    batch's units counted by ``count(batch)`` (None without time)."""
    steady = batches[skip:] or batches
    seconds = sum(b.seconds for b in steady)
    return sum(count(b) for b in steady) / seconds if seconds else None


def ratio(a, b, digits: int = 3) -> float | None:
    """A figure against its base, rounded (None where either is missing or the base is 0)."""
    return round(a / b, digits) if a is not None and b else None


def peak_rss_mb() -> float:
    """The peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (a Spark session's JVM is a child of this process, its Python workers the JVM's)."""
    parents: dict = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parents.setdefault(int(handle.read().rsplit(")", 1)[1].split()[1]), []).append(int(entry))
            except OSError:
                continue
    found, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def command_of(pid: int) -> str:
    """A process's command line, its arguments separated by NUL ("" once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


class TimedSink:
    """Keeps what a run emits and when each output arrived (``time.perf_counter()``; ``seen``: the first arrival per
    time point); ``done`` is set once ``expected`` time points have been seen."""

    def __init__(self, expected: int | None = None):
        self.outputs: list = []
        self.rejected: list = []
        self.at: list[float] = []
        self.seen: dict[int, float] = {}
        self.expected = expected
        self.done = threading.Event()

    def emit(self, output) -> None:
        self.at.append(time.perf_counter())
        self.outputs.append(output)
        self.seen.setdefault(output.time, self.at[-1])
        if self.expected is not None and len(self.seen) >= self.expected:
            self.done.set()

    def reject(self, record) -> None:
        self.rejected.append(record)


def write_parts(folder, parts, first: int = 0) -> list[str]:
    """One file per part (a list of lines) in ``folder``, numbered from ``first``, named and modification-timed in
    order: Spark's file source reads new files by modification time, and every runner reads them in that order."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for n, lines in enumerate(parts, start=first):
        paths.append(os.path.join(folder, f"part-{n:05d}.txt"))
        with open(paths[-1], "w", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))
        os.utime(paths[-1], (1_600_000_000 + n, 1_600_000_000 + n))
    return paths


def load_average() -> list[float]:
    """The machine's load averages (1, 5, 15 minutes), rounded: a run records them beside its figures."""
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict:
    """The machine a run measured on, and the versions that matter."""
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


def write_json(path, data, *, describe: bool = True) -> str:
    """``data`` as JSON at ``path`` (its folder made); a dict after the date and the machine's description
    (``describe``), unless it has its own."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if describe and isinstance(data, dict):
        data = {"date": time.strftime("%Y-%m-%d"), "machine": machine(), **data}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
        handle.write("\n")
    return str(path)


def read_json(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write_csv(path, rows: list[dict], fields: list[str] | None = None) -> str:
    """The rows as CSV: ``fields`` (default: every key, in the order met) as columns, lists and dicts as JSON."""
    fields = fields or list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})
    return str(path)


def write_rows(path, data: dict, rows: list[dict], columns: list[str] | None = None, plots: dict | None = None):
    """A benchmark's results side by side: ``data`` as JSON at ``path``, ``rows`` as CSV at its ``.csv`` (the
    ``columns``; none without them), and each plot of ``plots`` (an ending -> ``plot(rows, path)``) at the path
    with that ending instead of ``.json``."""
    path = Path(path)
    write_json(path, data)
    if columns:
        write_csv(path.with_suffix(".csv"), rows, columns)
    for ending, plot in (plots or {}).items():
        plot(rows, path.with_name(path.stem + ending))


def finish(failures: list[str]) -> int:
    """A benchmark's exit status: each failed check on a line of its own (``FAILED: ...``), 1 if there was one."""
    for line in failures:
        print("FAILED: " + line, file=sys.stderr)
    return 1 if failures else 0


@contextmanager
def chart(path, rows: int = 1, cols: int = 1, size: tuple = (6, 4), dpi: int = 120, **kwargs):
    """A matplotlib figure of ``rows`` x ``cols`` panels (``axes[row][col]``), saved to ``path`` when the block ends."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False, **kwargs)
    try:
        yield fig, axes
        fig.tight_layout()
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)


def write_results(name: str, rows: list[Row], meta: dict, markdown: str, out_dir: str = RESULTS,
                  plain=None) -> list[str]:
    """name.json (the machine, ``meta`` and the rows; or, with ``plain``, only the list ``plain(rows)``), name.csv
    and name.md."""
    base = os.path.join(out_dir, name)
    flat = [r.to_dict() for r in rows]
    write_json(base + ".json", plain(rows) if plain is not None else {"experiment": name, **meta, "rows": flat})
    write_csv(base + ".csv", flat)
    with open(base + ".md", "w", encoding="utf-8") as handle:
        handle.write(markdown.rstrip() + "\n")
    return [base + ext for ext in (".json", ".csv", ".md")]


def read_rows(name: str, out_dir: str = RESULTS) -> list[Row] | None:
    """The rows of an earlier run of experiment ``name`` in ``out_dir`` (None if there is none)."""
    path = os.path.join(out_dir, name + ".json")
    if not os.path.exists(path):
        return None
    data = read_json(path)
    return [Row.from_dict(r) for r in (data if isinstance(data, list) else data["rows"])]


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def md_table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def text_table(headers: list[str], rows: list[list]) -> str:
    """The rows as aligned text for a terminal, values shown as in ``md_table``."""
    cells = [list(headers)] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(c[k]) for c in cells) for k in range(len(headers))]
    text = [all(isinstance(row[k], str) or row[k] is None for row in rows) for k in range(len(headers))]
    lines = ["  ".join(c.ljust(w) if left else c.rjust(w) for c, w, left in zip(row, widths, text)) for row in cells]
    return "\n".join(lines[:1] + ["  ".join("-" * w for w in widths)] + lines[1:])


def out_batches(out) -> dict:
    """The rows a run's out directory holds, by micro-batch: {batch number: [row, ...]} (``batch=final`` as -1)."""
    found: dict = {}
    for folder in glob.glob(os.path.join(out, "batch=*")):
        name = os.path.basename(folder).split("=", 1)[1]
        batch = int(name) if re.fullmatch(r"[0-9]+", name) else -1
        rows = found.setdefault(batch, [])
        for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
            with open(path, encoding="utf-8") as handle:
                rows += [json.loads(x) for x in handle if x.strip()]
    return found


def first_log(path) -> str:
    """A log file, or the first ``.log`` file (by name) of a directory of them (an ICLP2021 input's Log)."""
    path = str(path)
    if os.path.isdir(path):
        return os.path.join(path, sorted(n for n in os.listdir(path) if n.endswith(".log"))[0])
    return path


def models_digest(models: list) -> str:
    """A digest of a run's models that two processes agree on (``hash`` of a string is salted per process)."""
    return hashlib.sha256(json.dumps(models, sort_keys=True).encode("utf-8")).hexdigest()[:16]


# --- the ICLP 2021 inputs of the I-DLV-sr paper (in ../shared/data, read in place) --------------------------------

ICLP = os.path.join(DATA, "idlvsr", "ICLP2021-Experiments")
_CC, _HJ, _PV = ("ContentCaching/events_variation_test/I-DLV-sr", "HeavyJoin/I-DLV-sr", "Photo-voltaicSystem/I-DLV-sr")
PV_SIZES = {"20x20": "G20x20S15n11970", "22x22": "G22x22S15n17532", "24x24": "G24x24S15n24840",
            "26x26": "G26x26S15n34222", "28x28": "G28x28S15n46040", "30x30": "G30x30S15n60682"}


def _iclp_inputs() -> dict[str, tuple[str, str]]:
    """name -> (program, log) of every ICLP2021 input, relative to ``ICLP`` (a log may be a directory of logs)."""
    out = {}
    for n in range(50, 501, 50):
        out[f"cc-{n}"] = (f"{_CC}/{n}/Program/cat_w05.idlvsr", f"{_CC}/{n}/Log/tp60etp{n}ce1.log")
    window = "ContentCaching/window_variation_test/I-DLV-sr/T3"      # its programs are in Encoding/
    for program in sorted(glob.glob(os.path.join(ICLP, window, "Encoding", "*.idlvsr"))):
        name = os.path.basename(program)
        out[f"cc-window-{name[:-7]}"] = (f"{window}/Encoding/{name}", f"{window}/Log/tp60HLH.log")
    for n in range(50, 501, 50):
        for w in (2, 20):
            out[f"hj-{n}-w{w}"] = (f"{_HJ}/{n}/Program/encoding_w{w}.idlvsr", f"{_HJ}/{n}/Log/tp30etp{n // 2}ce1.log")
    for size, folder in PV_SIZES.items():
        out[f"pv-{size}"] = (f"{_PV}/{folder}/Program/{folder}.idlvsr", f"{_PV}/{folder}/Log")
    return out


ICLP_INPUTS = _iclp_inputs()


def iclp_input(name: str) -> tuple[str, list[str]]:
    """(program path, the log's time points: its non-blank lines) of an ICLP2021 input."""
    program, log = ICLP_INPUTS[name]
    return os.path.join(ICLP, program), log_lines(os.path.join(ICLP, log))


def log_lines(path) -> list[str]:
    """The time points of a log: its non-blank lines (a directory: its first ``.log`` file by name)."""
    with open(first_log(path), encoding="utf-8") as handle:
        return [line for line in handle.read().splitlines() if line.strip()]


def iclp_names(text: str, parser: argparse.ArgumentParser, extra=()) -> list[str]:
    """The inputs a flag names (``all``: every one, and ``extra``); an unknown or absent one is a usage error."""
    names = list(ICLP_INPUTS) + list(extra) if text == "all" else splits(text)
    missing = [n for n in names if n not in extra
               and (n not in ICLP_INPUTS or not os.path.exists(os.path.join(ICLP, ICLP_INPUTS[n][0])))]
    if missing:
        parser.error(f"unknown or absent inputs: {', '.join(missing)} (the ICLP2021 data is read in place from "
                     f"{ICLP}; SRTOPO_DATA names the shared data directory)")
    return names


def workloads(table: dict, argv=None) -> int:
    """``[WORKLOAD] [flags]``: the workload of ``table`` named first (its first where none is) run with its flags; a
    module that measures one thing on several inputs or runners has one command, not one module each."""
    argv = list(sys.argv[1:] if argv is None else argv)
    name = argv.pop(0) if argv and argv[0] in table else next(iter(table))
    return table[name](argv)


def command(main) -> None:
    """Run a benchmark's ``main`` as a command: its exit status; a failed check is one line and status 1."""
    try:
        sys.exit(main())
    except ExperimentError as error:
        print(error, file=sys.stderr)
        sys.exit(1)


def main(call: str) -> None:
    """The other end of ``in_own_process``: call the function it names and print what it returns as JSON."""
    import importlib
    call = json.loads(call)
    function = getattr(importlib.import_module(call["module"]), call["function"])
    print(json.dumps(function(**call["kwargs"])))


if __name__ == "__main__":
    main(sys.argv[1])
