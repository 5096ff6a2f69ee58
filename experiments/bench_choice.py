"""Programs with a choice part: what the solver keeps between time points, as in "Managing caching strategies for
stream reasoning with reinforcement learning" (section 4): ``python -m experiments.bench_choice [reasoner|spark]
[flags]``. experiments/README.md, "What each benchmark measures", says how."""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from experiments.common import (
    ExperimentError, TimedSink, arguments, chart, command, command_of, descendants, finish, in_own_process,
    load_average, log, out_batches, percentile, progress, ratio, splits, srtopo, stats, workloads, write_parts,
    write_rows)
from experiments.reconfig.validate import committed, pairs, program_of, validate
from srtopo.io.sources import AtomLog
from srtopo.measure import rss_mb
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalOptions, LocalRunner, RunConfig, SparkOptions, SparkRunner

STRATEGIES = ("restart", "incremental", "forget", "forget-lemmas", "forget-signs", "forget-scores", "progress",
              "auto", "rl", "rl:lambda=1")


def stream_of(problem: str, size: int, steps: int, seed: int, alpha: float | None):
    """(program text, log lines, per step a function that lists what is wrong with an answer's atoms)."""
    from experiments.reconfig import pup, queens
    if problem == "qc":
        given = queens.qc_stream(size, steps=steps, seed=seed, alpha=alpha or 1.35)
        checks = [lambda atoms, g=g: queens.check(size, g, pairs(atoms, "queen")) for g in given]
        return queens.program(size), queens.log_lines(given), checks
    instance = pup.double_instance(size)
    off = pup.pup_stream(size, steps=steps, seed=seed, alpha=alpha or 2.2)
    checks = [lambda atoms, o=o: pup.check(instance, o, pairs(atoms, "zone2unit"), pairs(atoms, "sensor2unit"))
              for o in off]
    return pup.program(size), pup.log_lines(off), checks


def run_strategy(program: str, lines: list[str], checks, strategy: str, budget: float | None = None) -> dict:
    """One strategy over the stream in this process: per-step seconds, validity, satisfiability."""
    from srtopo.rules.evaluate import Reasoner
    from srtopo.rules.log import line_kind, parse_line
    reasoner = Reasoner(parse_program(program, "bench.lp"), strategy=strategy)
    points = [parse_line(line, line_kind(line, "log"))[3] for line in lines]
    seconds, verdicts, invalid = [], [], 0
    rss_at: dict = {}
    started = time.perf_counter()
    solver = reasoner.subprograms[-1].solver
    for step, atoms in enumerate(points):
        t0 = time.perf_counter()
        result = reasoner.step(atoms)
        seconds.append(time.perf_counter() - t0)
        verdicts.append(result.satisfiable)
        if result.satisfiable and checks is not None and checks[step](result.atoms):
            invalid += 1
        if step + 1 in (1000, len(points)):
            rss_at[step + 1] = _rss(solver)
        if budget is not None and time.perf_counter() - started > budget:
            break
    stats = solver.stats
    row = {"strategy": strategy, "steps": len(seconds), "seconds": seconds, "satisfiable": verdicts,
           "invalid": invalid, "ground_s": round(stats.get("ground_s", 0.0), 4),
           "search_s": round(stats.get("search_s", 0.0), 4), "groundings": stats.get("groundings", 0),
           "rss_mb": _rss(solver), "rss_at": rss_at}
    if "incumbent" in stats:
        row["incumbent"], row["pulls"] = stats["incumbent"], stats["pulls"]
    if hasattr(solver, "close"):
        solver.close()
    return row


def _rss(solver) -> float | None:
    """This process's RSS, plus the probe process's for ``auto`` (part of what it costs)."""
    own, pid = rss_mb(), getattr(solver, "probe_pid", None)
    probe = rss_mb(pid) if pid else None
    return own if own is None or probe is None else round(own + probe, 1)


def summary(row: dict) -> dict:
    return stats(row["seconds"], "{}_ms", ("median", "p95", "max", "mean"), scale=1000, digits=3)


def families(rows: list[dict]) -> list[dict]:
    """Per problem, the best fixed strategy over the family's sizes, and ``auto`` against it: each strategy's
    geometric mean over the sizes of its median step time (every size counts alike, however slow), over the
    sizes where every strategy ran."""
    out = []
    for problem in sorted({r["problem"] for r in rows}):
        mine = [r for r in rows if r["problem"] == problem]
        strategies = sorted({r["strategy"] for r in mine})
        sizes = [n for n in sorted({r["size"] for r in mine})
                 if all(any(r["size"] == n and r["strategy"] == s for r in mine) for s in strategies)]
        if "auto" not in strategies or len(strategies) < 2 or not sizes:
            continue
        mean = {s: math.exp(sum(math.log(max(r["median_ms"], 1e-6)) for r in mine
                                if r["strategy"] == s and r["size"] in sizes) / len(sizes)) for s in strategies}
        best = min((s for s in strategies if s != "auto"), key=mean.get)
        out.append({"problem": problem, "sizes": sizes, "best": best, "best_geomean_ms": round(mean[best], 3),
                    "auto_geomean_ms": round(mean["auto"], 3),
                    "auto_over_best": round(mean["auto"] / mean[best], 3),
                    "geomean_ms": {s: round(v, 3) for s, v in mean.items()}})
    return out


def long_stream(problem: str, size: int, steps: int, seed: int, strategy: str) -> dict:
    """A long stream in a process of its own: its RSS is the strategy's alone."""
    program, lines, _checks = stream_of(problem, size, steps, seed, None)
    row = run_strategy(program, lines, None, strategy)
    return {k: v for k, v in row.items() if k not in ("seconds", "satisfiable")} | summary(row)


def reasoner(argv=None) -> int:
    """The default workload: every strategy on the local runner's ``Reasoner``, step by step."""
    args = arguments(
        __doc__, qc=("14,18,22,26,30", "board sizes ('' for none)"), pup=("6,8,10,12", "row lengths ('' for none)"),
        steps=256, seed=1, strategies=",".join(STRATEGIES),
        budget=(120.0, "seconds per strategy and instance at most"),
        long_steps=(0, "also RSS over a stream this long (QC n=14)"),
        quick=(False, "QC 8 and 12, PUP 4, 32 steps"), out="bench_choice.json").parse_args(argv)
    if args.quick:
        args.qc, args.pup, args.steps = "8,12", "4", 32
    strategies = splits(args.strategies)
    jobs = [("qc", n) for n in splits(args.qc, int)] + [("pup", n) for n in splits(args.pup, int)]
    rows, failures = [], []
    for problem, size in progress(jobs, desc="instances"):
        program, lines, checks = stream_of(problem, size, args.steps, args.seed, None)
        results = [run_strategy(program, lines, checks, s, args.budget) for s in strategies]
        common = min(r["steps"] for r in results)
        base = next((r for r in results if r["strategy"] == "restart"), None)
        for r in results:
            if r["invalid"]:
                failures.append(f"{problem} {size} {r['strategy']}: {r['invalid']} invalid answers")
            if r["satisfiable"][:common] != results[0]["satisfiable"][:common]:
                failures.append(f"{problem} {size} {r['strategy']}: satisfiability differs from "
                                f"{results[0]['strategy']}")
            row = {"problem": problem, "size": size, **{k: v for k, v in r.items() if k != "satisfiable"},
                   **summary(r), "unsatisfiable_steps": r["satisfiable"].count(False)}
            if base is not None:
                b, mine = base["seconds"][:common], r["seconds"][:common]
                row["restart_over_this_median"] = round(percentile(b, 0.5) / max(percentile(mine, 0.5), 1e-9), 2)
            rows.append(row)
            log(f"{problem} {size:3} {r['strategy']:14} median {row['median_ms']:8.2f} ms  p95 "
                f"{row['p95_ms']:8.2f} ms  x{row.get('restart_over_this_median', 0):7.2f}  steps {r['steps']}")
    family_rows = families(rows)
    for f in family_rows:
        log(f"{f['problem']}: best fixed strategy {f['best']} (geometric mean of medians {f['best_geomean_ms']} "
            f"ms), auto {f['auto_geomean_ms']} ms: auto / best {f['auto_over_best']}")
    long_rows = [in_own_process(long_stream, problem="qc", size=14, steps=args.long_steps, seed=args.seed,
                                strategy=strategy)
                 for strategy in (progress(strategies, desc=f"{args.long_steps} steps") if args.long_steps else [])]
    write_rows(args.out, {"args": vars(args), "families": family_rows, "long": long_rows, "failures": failures,
                          "rows": [r | {"seconds": [round(x, 5) for x in r["seconds"]]} for r in rows]}, rows,
               ["problem", "size", "strategy", "steps", "median_ms", "p95_ms", "max_ms", "mean_ms",
                "restart_over_this_median", "ground_s", "search_s", "groundings", "unsatisfiable_steps", "rss_mb"],
               {".png": _plot})
    return finish(failures)


def _plot(rows: list[dict], path: Path) -> None:
    """Box plots of the step latencies, a panel per problem and size, as the paper's Figures 2-4."""
    def draw(ax, problem, size, mine):
        ax.boxplot([[1000 * s for s in r["seconds"]] for r in mine], showfliers=True)
        ax.set_xticks(range(1, len(mine) + 1), [r["strategy"] for r in mine], rotation=60, fontsize=7)
        ax.set(yscale="log", ylabel="step latency (ms)")
        ax.set_title(f"{problem.upper()} {size}", fontsize=9)
    _panels(rows, path, 3.2, draw)


def _panels(rows: list[dict], path: Path, width: float, draw) -> None:
    """A panel per problem and size, ``draw(ax, problem, size, its rows)`` in each."""
    groups = sorted({(r["problem"], r["size"]) for r in rows})
    if groups:
        with chart(path, 1, len(groups), size=(width * len(groups), 4), dpi=110) as (_fig, axes):
            for ax, (problem, size) in zip(axes[0], groups):
                draw(ax, problem, size, [r for r in rows if (r["problem"], r["size"]) == (problem, size)])


# --- the local runner against Spark ---------------------------------------------------------------------------

SPARK_STRATEGIES = ("restart", "incremental", "forget-lemmas", "progress", "rl", "auto")
#: batches compared on either side of a restart
AROUND = 5
SPARK_CSV = ["problem", "size", "strategy", "runner", "points", "tps", "steady_tps", "spark_over_local",
             "latency_p50_ms", "latency_p95_ms", "batch_p50_s", "batch_p95_s", "per_point_p50_ms", "per_point_p95_ms",
             "rss_mb", "driver_mb", "jvm_mb", "workers_mb", "unsatisfiable", "invalid", "load"]


def write_files(folder: Path, lines: list[str], per_file: int, first: int = 0) -> list[str]:
    """``per_file`` lines a file, numbered from ``first`` (``write_parts``)."""
    return write_parts(folder, [lines[k:k + per_file] for k in range(0, len(lines), per_file)], first)


def _lines(folder: str) -> list[str]:
    """The log lines of a stream directory, file after file."""
    return [x for f in sorted(os.listdir(folder)) for x in Path(folder, f).read_text().splitlines()]


@contextmanager
def peak_memory():
    """The peak resident memory of this process's JVM child and of the Python processes under it (Spark's
    workers), sampled every half second while the block runs."""
    peak, stop = {"jvm": 0.0, "workers": 0.0}, threading.Event()

    def sample():
        while not stop.wait(0.5):
            now = dict.fromkeys(peak, 0.0)
            for pid in descendants(os.getpid()):
                command = command_of(pid)
                kind = "jvm" if "java" in command.split("\0")[0] else "workers" if "python" in command else None
                if kind:
                    now[kind] += rss_mb(pid) or 0.0
            peak.update({k: max(peak[k], round(v, 1)) for k, v in now.items()})
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        stop.set()
        thread.join()


def _topology(problem: str, size: int):
    return compile_program(parse_program(program_of(problem, size), f"{problem}.lp"))


def _answers(models) -> list[dict]:
    return [{"time": m.time, "atoms": list(m.atoms), **({} if m.satisfiable else {"unsatisfiable": True})}
            for m in models]


def local_worker(problem: str, size: int, strategies: list[str], folder: str, half: str, restarts: list[str],
                 **_) -> list[dict]:
    """Local runs over the directory, one per strategy (and, for ``restarts``, a new runner over the second half
    of the stream, the directory ``half``)."""
    lines, rows = _lines(folder), []

    def run(strategy: str, where: str):
        sink = TimedSink()
        started = time.perf_counter()
        result = LocalRunner().run(_topology(problem, size), [AtomLog(where)],
                                   RunConfig(lateness=0, options=LocalOptions(strategy=strategy)), sink=sink)
        return result, sink, [b - a for a, b in zip([started] + sink.at, sink.at)]
    for strategy in strategies:
        load_before = load_average()
        result, sink, seconds = run(strategy, folder)
        problems = validate(problem, size, lines, _answers(sink.outputs))
        row = {"runner": "local", "points": len(sink.outputs), "seconds": round(result.seconds, 4),
               "tps": round(len(sink.outputs) / result.seconds, 2),
               **stats(seconds, "latency_{}_ms", scale=1000, digits=3),
               "latency_ms": [round(1000 * s, 3) for s in seconds], "rss_mb": rss_mb(), "problems": problems[:10],
               "invalid": len(problems), "unsatisfiable": sum(1 for m in sink.outputs if not m.satisfiable)}
        if strategy in restarts:
            _r, half_sink, after = run(strategy, half)
            first = len(lines) - len(half_sink.outputs)
            # a new run numbers its time points from its own first line
            zero = min((m.time for m in half_sink.outputs), default=0)
            shifted = [dict(a, time=a["time"] - zero) for a in _answers(half_sink.outputs)]
            row.update(restart_problems=validate(problem, size, lines[first:], shifted)[:10], restart_at=first,
                       after_restart_ms=[round(1000 * s, 3) for s in after])
        rows.append(dict(row, strategy=strategy, load_before=load_before, load_after=load_average()))
    return rows


def spark_worker(problem: str, size: int, strategies: list[str], folder: str, work: str, master: str,
                 partitions: int, per_file: int, **_) -> list[dict]:
    """Spark runs of ``strategies`` over the directory, one after the other on this process's session."""
    lines, rows = _lines(folder), []
    runner = SparkRunner()
    for strategy in strategies:
        ck, out = Path(work, f"ck-{strategy}"), Path(work, f"out-{strategy}")
        shutil.rmtree(ck, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        load_before = load_average()
        with peak_memory() as peak:
            result = runner.run(_topology(problem, size), [AtomLog(folder, files_per_batch=1)],
                                RunConfig(lateness=0, checkpoint=str(ck), out=str(out),
                                          options=SparkOptions(master=master, once=True, partitions=partitions,
                                                               strategy=strategy)))
        answers = [r for rs in out_batches(str(out)).values() for r in rs]
        problems = validate(problem, size, lines, answers)
        returned = validate(problem, size, lines, _answers(result.models))
        if returned != problems:
            problems += [f"the run's result: {p}" for p in returned[:5]] or ["the result differs from the out dir"]
        batches = [b.seconds for b in result.batches if b.batch != "final"]
        steady = batches[1:] or batches
        rows.append({"runner": "spark", "strategy": strategy, "points": len(answers),
                     "seconds": round(result.seconds, 3), "tps": round(len(answers) / result.seconds, 2),
                     "steady_tps": round(per_file * len(steady) / sum(steady), 2) if sum(steady) else None,
                     "batches": len(batches), "batch_s": [round(b, 4) for b in batches],
                     **stats(batches, "batch_{}_s", digits=4),
                     **stats(batches, "per_point_{}_ms", scale=1000 / per_file, digits=3),
                     "memory_mb": {**result.memory_mb, "jvm_peak": peak["jvm"], "workers_peak": peak["workers"]},
                     "problems": problems[:10], "invalid": len(problems),
                     "unsatisfiable": sum(1 for a in answers if a.get("unsatisfiable")),
                     "load_before": load_before, "load_after": load_average()})
    return rows


def restart_case(problem: str, size: int, strategy: str, lines: list[str], per_file: int, work: Path,
                 master: str, partitions: int) -> dict:
    """The first half of the files with a checkpoint, then all of them on it in a new process."""
    folder = work / f"restart-{strategy}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "p.lp").write_text(program_of(problem, size), encoding="utf-8")
    half = (len(lines) // per_file // 2) * per_file
    write_files(folder / "in", lines[:half], per_file)
    ck, out = folder / "ck", folder / "out"
    base = ["reason", "--engine", "spark", "--program", str(folder / "p.lp"), "--stream", str(folder / "in"),
            "--strategy", strategy, "--once", "--files-per-batch", "1", "--master", master,
            "--partitions", str(partitions), "--checkpoint", str(ck), "--out", str(out)]
    load_before = load_average()
    srtopo(base + ["--metrics-out", str(folder / "before.jsonl")])
    before_batches = committed(str(ck))
    written = out_batches(str(out))
    kept = {b: sorted(json.dumps(r, sort_keys=True) for r in written.get(b, [])) for b in before_batches}
    write_files(folder / "in", lines[half:], per_file, first=half // per_file)
    srtopo(base + ["--metrics-out", str(folder / "after.jsonl")])
    written = out_batches(str(out))
    changed = [b for b in before_batches
               if not kept[b] or sorted(json.dumps(r, sort_keys=True) for r in written.get(b, [])) != kept[b]]
    problems = validate(problem, size, lines, [r for rs in written.values() for r in rs])

    def seconds(name):
        rows = [json.loads(x) for x in (folder / name).read_text().splitlines() if x.strip()]
        return [r.get("trigger_s", r["duration_s"]) for r in rows if isinstance(r.get("batch"), int)]
    before, after = seconds("before.jsonl"), seconds("after.jsonl")
    last, first = before[-AROUND:], after[:AROUND]
    return {"problem": problem, "size": size, "strategy": strategy, "restart_at_point": half,
            "batches_before": len(before), "batches_after": len(after),
            "last_before_s": [round(x, 4) for x in last], "first_after_s": [round(x, 4) for x in first],
            **stats(last, "last_before_{}_s", ("p50",), digits=4),
            **stats(first, "first_after_{}_s", ("p50",), digits=4),
            "first_after_batch_s": round(after[0], 4) if after else None,
            # the first run's first batch starts as cold as the restart's (a new JVM, new Python workers)
            "first_before_batch_s": round(before[0], 4) if before else None,
            "committed_before": len(before_batches), "committed_changed": changed, "problems": problems[:10],
            "invalid": len(problems), "load_before": load_before, "load_after": load_average()}


def spark(argv=None) -> int:
    """The local runner against Spark, every strategy, with restarts from a checkpoint."""
    args = arguments(
        __doc__, qc=(20, "board size (0: no QC)"), pup=(8, "row length of the double instance (0: no PUP)"),
        points=(200, "time points of each stream"), per_file=(20, "time points a file (a micro-batch on Spark)"),
        strategies=",".join(SPARK_STRATEGIES), restart=("incremental,rl", "strategies of the restart runs ('' none)"),
        restart_per_file=(10, "time points a file in the restart runs (a batch's time on either side of the restart)"),
        runners=("local,spark", "the runners to measure"), master="local[2]", partitions=2, seed=1,
        spark_processes=("one", "one: the Spark runs of a problem in one process (one session; its workers' memory "
                                "then adds up over the strategies run before); each: each in a process of its own"),
        quick=(False, "QC 8 and PUP 4, 8 time points, 4 a file, incremental and rl"),
        out="bench_choice_spark.json").parse_args(argv)
    if args.quick:
        args.qc, args.pup, args.points, args.per_file = 8, 4, 8, 4
        args.strategies, args.restart = "incremental,rl", ""
    strategies, restarts, runners = splits(args.strategies), splits(args.restart), splits(args.runners)
    rows, restart_rows, failures = [], [], []
    started = time.perf_counter()

    def write() -> None:
        """The results so far (after each problem and each restart run: a stopped run leaves them behind)."""
        memory = {"driver_mb": "driver_python", "jvm_mb": "jvm_peak", "workers_mb": "workers_peak"}
        write_rows(args.out, {"date": time.strftime("%Y-%m-%d %H:%M"), "args": vars(args), "cpus": os.cpu_count(),
                              "rows": rows, "restart": restart_rows, "failures": failures,
                              "wall_s": round(time.perf_counter() - started, 1)},
                   [{**r, **{k: r.get("memory_mb", {}).get(v) for k, v in memory.items()},
                     "load": " ".join(map(str, r["load_after"]))} for r in rows], SPARK_CSV, {".png": _plot_spark})
    with tempfile.TemporaryDirectory(prefix="srtopo-bench-choice-spark-") as tmp:
        for problem, size in [(p, n) for p, n in (("qc", args.qc), ("pup", args.pup)) if n]:
            lines = stream_of(problem, size, args.points, args.seed, None)[1]
            folder, half = Path(tmp, problem, "in"), Path(tmp, problem, "half")
            write_files(folder, lines, args.per_file)
            restart_at = (len(lines) // args.restart_per_file // 2) * args.restart_per_file
            write_files(half, lines[restart_at:], args.per_file)
            # each local run in a process of its own; the Spark runs of a problem in one (--spark-processes)
            groups = [strategies] if args.spark_processes == "one" and strategies else [[s] for s in strategies]
            runs = [("local", local_worker, [s]) for s in strategies if "local" in runners] + \
                [("spark", spark_worker, group) for group in groups if "spark" in runners]
            by_runner: dict = {"local": {}, "spark": {}}
            for runner, worker, group in progress(runs, desc=f"{problem} {size}"):
                try:
                    for r in in_own_process(worker, problem=problem, size=size, strategies=group, folder=str(folder),
                                            half=str(half), restarts=restarts, work=str(Path(tmp, problem)),
                                            master=args.master, partitions=args.partitions, per_file=args.per_file):
                        by_runner[r["runner"]][r["strategy"]] = r
                except ExperimentError as error:
                    failures.append(f"{problem} {size} {','.join(group)} {runner}: {error}")
            local = by_runner["local"]
            for strategy in strategies:
                for r in (local.get(strategy), by_runner["spark"].get(strategy)):
                    if r is None:
                        continue
                    row = {"problem": problem, "size": size, "per_file": args.per_file, **r}
                    if r["invalid"] or r.get("restart_problems"):
                        failures.append(f"{problem} {size} {strategy} {r['runner']}: "
                                        f"{(r['problems'] or r['restart_problems'])[:3]}")
                    if r["runner"] == "spark" and strategy in local:
                        row["spark_over_local"] = ratio(r["steady_tps"], local[strategy]["tps"], 4)
                        row["spark_over_local_whole_run"] = round(r["tps"] / local[strategy]["tps"], 4)
                    rows.append(row)
                    _print(row)
            write()
            for strategy in progress(restarts if "spark" in runners else [], desc=f"{problem} {size} restart"):
                try:
                    r = restart_case(problem, size, strategy, lines, args.restart_per_file, Path(tmp, problem),
                                     args.master, args.partitions)
                except RuntimeError as error:
                    failures.append(f"{problem} {size} {strategy} restart: {error}")
                    continue
                if strategy in local and "after_restart_ms" in local[strategy]:
                    lat = local[strategy]["latency_ms"]
                    before = lat[restart_at - AROUND * args.restart_per_file:restart_at]
                    after = local[strategy]["after_restart_ms"][:AROUND * args.restart_per_file]
                    r.update(**stats(before, "local_last_before_{}_ms", ("p50",), digits=3),
                             **stats(after, "local_first_after_{}_ms", ("p50",), digits=3),
                             local_first_after_point_ms=after[0] if after else None)
                if r["invalid"] or r["committed_changed"]:
                    failures.append(f"{problem} {size} {strategy} restart: {r['problems'][:3]}, committed batches "
                                    f"changed: {r['committed_changed']}")
                restart_rows.append(r)
                write()
                log(f"{problem} {size} {strategy:13} restart: last {AROUND} batches before p50 "
                    f"{r['last_before_p50_s']} s, first {AROUND} after p50 {r['first_after_p50_s']} s (first "
                    f"{r['first_after_batch_s']} s); local p50 {r.get('local_last_before_p50_ms')} -> "
                    f"{r.get('local_first_after_p50_ms')} ms; committed unchanged "
                    f"{r['committed_before'] - len(r['committed_changed'])}/{r['committed_before']}; load "
                    f"{r['load_after']}")
    write()
    return finish(failures)


def _print(r: dict) -> None:
    if r["runner"] == "local":
        log(f"{r['problem']} {r['size']} {r['strategy']:13} local  {r['tps']:9.1f} tp/s  latency p50 "
            f"{r['latency_p50_ms']} ms p95 {r['latency_p95_ms']} ms  RSS {r['rss_mb']} MB  invalid {r['invalid']}  "
            f"load {r['load_after']}")
    else:
        m = r["memory_mb"]
        log(f"{r['problem']} {r['size']} {r['strategy']:13} spark  {r['steady_tps']:9.1f} tp/s (whole run "
            f"{r['tps']})  batch p50 {r['batch_p50_s']} s p95 {r['batch_p95_s']} s  x{r.get('spark_over_local')}  "
            f"driver {m.get('driver_python')} jvm {m.get('jvm_peak')} workers {m.get('workers_peak')} MB  "
            f"invalid {r['invalid']}  load {r['load_after']}")


def _plot_spark(rows: list[dict], path: Path) -> None:
    """Time points per second of every strategy, local and Spark side by side, a panel per problem and size."""
    def draw(ax, problem, size, mine):
        strategies = list(dict.fromkeys(r["strategy"] for r in mine))
        for offset, runner, key in ((-0.2, "local", "tps"), (0.2, "spark", "steady_tps")):
            values = [next((r[key] or 0 for r in mine if r["strategy"] == s and r["runner"] == runner), 0)
                      for s in strategies]
            ax.bar([i + offset for i in range(len(strategies))], values, width=0.4, label=runner)
        ax.set_xticks(range(len(strategies)), strategies, rotation=30, fontsize=8)
        ax.set(yscale="log", ylabel="time points / s")
        ax.set_title(f"{problem.upper()} {size}: local vs Spark", fontsize=9)
        ax.legend(fontsize=8)
    _panels(rows, path, 5.5, draw)


def main(argv=None) -> int:
    return workloads({"reasoner": reasoner, "spark": spark}, argv)


if __name__ == "__main__":
    command(main)
