"""``srtopo calibrate``: measure the cost model's constants (``consistency.cost``) on the machine at hand.

A short run: a generated stream of the TBox's classes (every class at the same rate, 1% violating tuples, as in
the paper's experiments) through five plans chosen so that their loads differ (NTM, LTM-0, LTM-2, LTM-4 and a
three-stage split; on Spark with 1, 2 or 4 tasks per stage, so that the per-task cost is told apart from the
per-exchange one), on each target asked for. The stage seconds of the local runner's pipelined plans and the
batch seconds of its columnar plan and of Spark's plans (over files, at two batch sizes) are fitted by
non-negative least squares; the coefficients go to the calibration file the ``cost`` balancer reads
(``consistency.cost.calibration_path``). Every run's reports are checked against the violations the generator
planted, so a calibration is also a smoke test of the runner.
"""
from __future__ import annotations

import os
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace

from srtopo.consistency.compile import compile_split, split_label
from srtopo.consistency.cost import (
    TARGET_FEATURES,
    Coefficients,
    Observation,
    Target,
    batched,
    fit,
    predict_tps,
    target_for,
    write_calibration,
)
from srtopo.errors import SrtopoError
from srtopo.ir.topology import Topology

BUNDLED_TBOX = "lubm-dllite.ttl"       # package data of srtopo.consistency, in data/
TARGET_KEYS = tuple(TARGET_FEATURES)


@dataclass
class Settings:
    """What a calibration measures: which targets, on how many tuples, with which Spark master."""
    targets: tuple[str, ...] = TARGET_KEYS
    tbox: str | None = None
    local_tuples: int = 100_000
    operators_tuples: int = 20_000
    spark_tuples: int = 800_000
    file_tuples: int = 50_000
    master: str | None = None
    window: int = 10
    seed: int = 7
    progress: object = None            # called with a line of text per run


@dataclass
class Calibration:
    coefficients: dict[str, Coefficients] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)
    seconds: float = 0.0


def plans(analysis, tasks: tuple[int, ...]) -> list[Topology]:
    """Plans whose loads differ: every group in one stage, none in the first, a split after two and four groups,
    a three-stage split; ``tasks`` cycles over them (Spark's per-stage slots differ as well)."""
    k = len(analysis.groups)
    splits = [(k,), (0, k), (min(2, k), k - min(2, k)), (min(4, k), k - min(4, k))]
    if k >= 3:
        splits.append((1, (k - 1) // 2, k - 1 - (k - 1) // 2))
    out = []
    for i, split in enumerate(splits):
        p = tasks[i % len(tasks)]
        out.append(compile_split(analysis, split, p, label=split_label(split)))
    return out


def _stream(analysis, tuples: int, seed: int):
    from srtopo.consistency.generate import class_streams, named_classes
    classes = max(1, len(named_classes(analysis)))
    rate = max(1, round(400 / classes))                # ~400 tuples per time point
    points = max(2, tuples // (classes * rate))
    return class_streams(analysis, time_points=points, rate=rate, violation=0.01, seed=seed)


def _check(label: str, planted: set, keys: set) -> None:
    if planted != keys:
        raise SrtopoError(f"calibration run {label}: {len(keys)} reports where the stream planted {len(planted)}",
                          hint="the runner does not give the reference reports: report this as a bug")


def calibrate_local(analysis, plan: str, settings: Settings, result: Calibration) -> Coefficients:
    from srtopo.consistency.generate import uniform_rates
    from srtopo.io.sources import Tuples
    from srtopo.runners import LocalOptions, RunConfig, get_runner
    n = settings.operators_tuples if plan == "operators" else settings.local_tuples
    gen = _stream(analysis, n, settings.seed)
    records = [(t.subject, t.concept, t.time) for t in gen.tuples]
    target, rates, observations, runs = Target("local", plan), uniform_rates(analysis), [], []
    for topology in plans(analysis, (1,)):
        run = get_runner("local").run(topology, [Tuples(records)], RunConfig(
            window=settings.window, lateness=0, options=LocalOptions(physical_plan=plan)))
        _check(f"local/{plan} {topology.label}", gen.planted, run.keys)
        seconds = [s.seconds for s in run.counters.stages]
        for k, sec in enumerate(seconds):
            observations.append(Observation(topology, target, sec / len(records), stage=k, rates=rates))
        runs.append((topology, {"engine": target.key, "plan": topology.label, "tuples": len(records),
                                "stage_seconds": [round(s, 4) for s in seconds],
                                "measured_tuples_s": len(records) / max(seconds) if max(seconds) else None}))
        _say(settings, f"local/{plan} {topology.label}: stage seconds {', '.join(f'{s:.3f}' for s in seconds)}")
    coefficients = fit(observations, source=_source())
    for topology, row in runs:
        row["predicted_tuples_s"] = predict_tps(topology, target, coefficients, rates)
        result.runs.append(row)
    return coefficients


def calibrate_batches(analysis, key: str, settings: Settings, result: Calibration, stream_dir: str,
                      gen) -> Coefficients:
    """A target whose cost is per micro-batch (Spark's plans, the local runner's columnar plan), from its batch
    seconds over the stream's files at two batch sizes."""
    from srtopo.consistency.generate import uniform_rates
    from srtopo.io.sources import TntFiles
    from srtopo.runners import LocalOptions, RunConfig, SparkOptions, get_runner
    runner, plan = key.split("/")
    options = (SparkOptions(master=settings.master, physical_plan=plan) if runner == "spark"
               else LocalOptions(physical_plan=plan))
    target, rates, observations = target_for(runner, options), uniform_rates(analysis), []
    runs = []
    per_batch = max(1, len(os.listdir(stream_dir)) // 4)
    # a first run warms the JVM (its JIT compiles the generated code) or the process's caches: not measured
    get_runner(runner).run(plans(analysis, (2,))[0], [TntFiles(stream_dir, files_per_batch=per_batch)],
                           RunConfig(window=settings.window, lateness=0, options=options))
    for i, topology in enumerate(plans(analysis, (2, 1, 4))):     # tasks below, at and above the cores
        files = per_batch if i % 2 == 0 else 2 * per_batch       # two batch sizes: fixed and per-tuple costs
        run = get_runner(runner).run(topology, [TntFiles(stream_dir, files_per_batch=files)], RunConfig(
            window=settings.window, lateness=0, options=options))
        _check(f"{key} {topology.label}", gen.planted, run.keys)
        steady = run.batches[1:] or run.batches
        for b in steady:
            if b.records:
                observations.append(Observation(topology, target, b.seconds, batch_tuples=b.records, rates=rates))
        tps = sum(b.records for b in steady) / sum(b.seconds for b in steady)
        runs.append((topology, {"engine": target.key, "plan": topology.label, "tuples": len(gen.tuples),
                                "batch_tuples": steady[0].records, "batch_seconds": [round(b.seconds, 3)
                                                                                     for b in run.batches],
                                "measured_tuples_s": tps}))
        _say(settings, f"{key} {topology.label}: {tps:,.0f} tuples/s steady "
                       f"({len(run.batches)} batches of ~{steady[0].records:,})")
    coefficients = fit(observations, source=_source())
    for topology, row in runs:
        sized = replace(target, batch_tuples=row["batch_tuples"])
        row["predicted_tuples_s"] = predict_tps(topology, sized, coefficients, rates)
        result.runs.append(row)
    return coefficients


def _source() -> str:
    return f"srtopo calibrate on {platform.node() or 'this machine'}, {time.strftime('%Y-%m-%d')}"


def _say(settings: Settings, line: str) -> None:
    if settings.progress is not None:
        settings.progress(line)


def calibrate(settings: Settings) -> Calibration:
    """Run the calibration of every target in ``settings.targets``; nothing is written (see :func:`save`)."""
    from srtopo.consistency.nis import analyse
    from srtopo.consistency.owl import load_tbox
    unknown = [e for e in settings.targets if e not in TARGET_KEYS]
    if unknown:
        raise SrtopoError(f"no cost model for {', '.join(unknown)}", hint="choose among " + ", ".join(TARGET_KEYS))
    started = time.perf_counter()
    if settings.tbox:
        analysis = analyse(load_tbox(settings.tbox))
    else:
        from importlib.resources import as_file, files
        with as_file(files("srtopo.consistency") / "data" / BUNDLED_TBOX) as path:
            analysis = analyse(load_tbox(str(path), name="lubm"))
    if not analysis.groups:
        raise SrtopoError("the TBox states no disjointness: its plans have no conjunction op to measure",
                          hint="calibrate on a TBox with disjoint classes (the default, bundled LUBM TBox has 71)")
    result = Calibration()
    batched_keys = [k for k in settings.targets if batched(Target(*k.split("/")))]
    for key in settings.targets:
        if key not in batched_keys:
            result.coefficients[key] = calibrate_local(analysis, key.split("/")[1], settings, result)
    if batched_keys:
        from srtopo.io.tnt import write_tnt
        work = tempfile.mkdtemp(prefix="srtopo-calibrate-")
        try:
            on_spark = any(k.startswith("spark/") for k in batched_keys)
            gen = _stream(analysis, settings.spark_tuples if on_spark else settings.local_tuples, settings.seed)
            file_tuples = settings.file_tuples if on_spark else max(1, settings.local_tuples // 8)
            points_per_file = max(1, file_tuples // max(1, len(gen.tuples) // max(1, gen.time_points)))
            write_tnt(os.path.join(work, "stream"), gen.tuples, time_points_per_file=points_per_file)
            for key in batched_keys:
                result.coefficients[key] = calibrate_batches(analysis, key, settings, result,
                                                             os.path.join(work, "stream"), gen)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    result.seconds = time.perf_counter() - started
    return result


def save(result: Calibration, path: str | None = None) -> str:
    return write_calibration(result.coefficients, path, meta={"runs": result.runs,
                                                              "seconds": round(result.seconds, 1)})

