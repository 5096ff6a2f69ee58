"""Consistency-check benchmarks, one workload each: ``plans`` (the default: throughput of the local runner's and
Spark's physical plans, NTM and the least skewed LTM split, on the same files), ``latency`` (report latency on Spark
under a paced feed), ``scaling`` (local[1], local[2], a standalone cluster against one process) and ``driver-cpu``
(the driver's CPU on a standalone cluster as a micro-batch grows). experiments/README.md, "What each benchmark
measures", says how.

    python -m experiments.bench_consistency [WORKLOAD] [flags]      # WORKLOAD --help: its flags
"""
from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from experiments.common import (
    LUBM_TBOX, arguments, chart, command, in_own_process, log, measure, models_digest, out_batches, progress, ratio,
    read_json, splits, stats, text_table, workloads, write_json, write_rows)
from srtopo.concepts import RDF_TYPE
from srtopo.consistency.balance import contiguous_splits
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.io.sinks import MemorySink
from srtopo.io.sources import TntFiles
from srtopo.io.tnt import write_tnt
from srtopo.measure import process_cpu_seconds
from srtopo.runners import LocalOptions, RunConfig, SparkOptions, SparkRunner

DEFAULT_TBOX = LUBM_TBOX        # the TBox srtopo calibrate ships
#: the variants ``--plans`` names: (runner, its physical plan; None: the runner's default)
PLANS = {"local": ("local", None), "local-reference": ("local", "indexed"), "local-columnar": ("local", "columnar"),
         "spark": ("spark", None), "columnar": ("spark", "columnar"), "fused": ("spark", "fused"),
         "staged": ("spark", "staged"), "columnar-executors": ("spark", "columnar"),
         "columnar-driver": ("spark", "columnar")}
#: where a variant's micro-batches close, whatever their size (``SparkOptions.driver_tuples``; else the default)
DRIVER_TUPLES = {"columnar-executors": 0, "columnar-driver": 1 << 62}
#: which limit query bounds a plan (``spark_limits.LIMITS``), by runner and physical plan
LIMIT_OF = {"local": "pyarrow, one process", "spark/columnar": "the columnar plan's read", "spark": "group by subject"}


def load(path: str):
    """The TBox at ``path`` and its NI analysis."""
    from srtopo.consistency.nis import analyse
    from srtopo.consistency.owl import load_tbox
    tbox = load_tbox(path)
    return tbox, analyse(tbox)


def make_stream(analysis, n: int, rate: int, noise: float, n_subjects: int, seed: int):
    """(subject, class, time) tuples in time order with a planted fraction of conflicting assertions."""
    h = analysis.hierarchy
    rng = random.Random(seed)
    named = sorted(c for c in analysis.tbox.concepts if not c.startswith("exists"))
    unsat = set(analysis.unsatisfiable)
    closure = analysis.closure
    disjoint: dict[str, set[str]] = {}
    for a, b in closure:
        disjoint.setdefault(a, set()).add(b)
        disjoint.setdefault(b, set()).add(a)
    homes = [c for c in named if c not in unsat]
    supers = {c: sorted(s for s in h.supers(c) if s in named) or [c] for c in homes}

    def conflicting(home):
        out = set()
        for s in supers[home]:
            for d in disjoint.get(h.rep(s), ()):
                out |= {m for m in named if h.is_sub(m, d)} if d in h.concepts else set()
        return sorted(out)

    conflicts = {c: conflicting(c) for c in homes}
    subject_home = [rng.choice(homes) for _ in range(n_subjects)]
    tuples = []
    for i in range(n):
        s = rng.randrange(n_subjects)
        home = subject_home[s]
        if rng.random() < noise and conflicts[home]:
            concept = rng.choice(conflicts[home])
        else:
            concept = rng.choice(supers[home])
        tuples.append((f"http://bench.example/data/s{s}", concept, i // rate))
    return tuples


def disordered(tuples: list, fraction: float, rate: int, seed: int) -> list:
    """The stream with a fraction of its tuples swapped with one up to ``rate`` positions (about a time unit)
    before: the one moved later is behind its source's latest time, late with a small lateness."""
    if fraction <= 0:
        return tuples
    rng = random.Random(seed + 1)
    out = list(tuples)
    for i in rng.sample(range(1, len(out)), int(fraction * len(out))):
        j = max(0, i - rng.randint(1, rate))
        out[i], out[j] = out[j], out[i]
    return out


def _lateness(text: str) -> int | None:
    return None if text.lower() == "none" else int(text)


def _write(folder, tuples: list, per_file: int) -> list[str]:
    """The (subject, class, time) tuples as .tnt files of ``per_file`` lines in ``folder`` (made anew)."""
    shutil.rmtree(folder, ignore_errors=True)
    return write_tnt(str(folder), ((t, s, RDF_TYPE, c) for s, c, t in tuples), per_file=per_file)


def options(plan: str, args):
    """A ``--plans`` variant's runner options."""
    runner, physical = PLANS[plan]
    if runner == "local":
        return LocalOptions(physical_plan=physical)
    extra = {"driver_tuples": DRIVER_TUPLES[plan]} if plan in DRIVER_TUPLES else {}
    return SparkOptions(master=args.master, shuffle_partitions=args.shuffle_partitions,
                        **({"physical_plan": physical} if physical else {}), **extra)


def run_variant(variant: str, topology, stream_dir: str, args, work: str, warmup: int) -> dict:
    """One run through the runner protocol (``experiments.common.measure``); every variant reads the same files,
    ``--files-per-batch`` a batch."""
    name = PLANS[variant][0]
    run_dir = os.path.join(work, f"run-{variant}-{topology.label}")
    shutil.rmtree(run_dir, ignore_errors=True)
    jvm = _jvm_pid() if name == "spark" else None
    cpu_before = (process_cpu_seconds(), process_cpu_seconds(jvm) if jvm else None)
    row, result = measure(name, options(variant, args), topology,
                          [TntFiles(stream_dir, files_per_batch=args.files_per_batch)], args.window, warmup=warmup,
                          lateness=args.lateness, checkpoint=os.path.join(run_dir, "ck"),
                          out=os.path.join(run_dir, "out"))
    jvm = jvm or (_jvm_pid() if name == "spark" else None)
    cpu = {"python": _minus(process_cpu_seconds(), cpu_before[0]),
           "jvm": _minus(process_cpu_seconds(jvm), cpu_before[1]) if jvm and cpu_before[1] is not None else None}
    batches = result.batches
    phases = [b.detail["phases_s"] for b in batches[warmup:] if b.detail.get("phases_s")]
    return {"engine": name, "plan": variant, "tuples": row.tuples, "wall_s": round(result.seconds, 3),
            "outside_batches_s": round(result.seconds - sum(b.seconds for b in batches), 3),
            "tuples_per_s": round(row["throughput_all_tps"]), "steady_tuples_per_s": round(row.throughput_tps),
            "batch_p50_s": round(row.latency_p50_s, 3), "batch_p95_s": round(row.latency_p95_s, 3),
            "batches": len(batches), "batch_durations_s": [round(b.seconds, 3) for b in batches],
            "phases_s": {k: round(sum(p[k] for p in phases) / len(phases), 3) for k in phases[0]} if phases else {},
            "cached_tuples": sum(s.window_rows or 0 for s in result.counters.stages),
            "memory_mb": result.memory_mb, "cpu_s": cpu, "reports": row.reports,
            "reports_digest": models_digest(sorted(result.keys)),
            "malformed": result.counters.malformed, "late": result.counters.late,
            "physical_plan": result.physical_plan, "stages": [s.to_dict() for s in result.counters.stages]}


def _limit_of(result: dict, limits: list[dict]) -> dict | None:
    """The limit query that bounds a plan (``LIMIT_OF``)."""
    plan = PLANS[result["plan"]]
    physical = result["physical_plan"]
    key = "local" if plan[0] == "local" else ("spark/columnar" if "columnar" in physical else "spark")
    return next((x for x in limits if LIMIT_OF[key] in x["query"]), None)


def _jvm_pid() -> int | None:
    """The pid of the active Spark session's JVM (None before there is one)."""
    from srtopo.runners.spark.session import active_jvm_pid
    return active_jvm_pid()


def _minus(after, before):
    return None if after is None or before is None else round(after - before, 2)


def best_ltm(analysis):
    """The split the paper recommends: the least skewed stage load (max conjunction ops per stage), 2-4 stages."""
    k = len(analysis.groups)
    candidates = [compile_ltm(analysis, split) for stages in range(2, min(4, k) + 1)
                  for split in contiguous_splits(k, stages)]
    return min(candidates, default=None,
               key=lambda t: (max(t.conjunction_counts), sum(t.conjunction_counts), len(t.stages)))


def ntm_row(argv: list[str]) -> dict:
    """The row of ``bench_consistency ARGV`` (NTM, one plan), run in this process: what the workloads scaling and
    driver-cpu run in a process of their own per configuration."""
    with tempfile.TemporaryDirectory() as tmp:
        plans(argv + ["--methods", "ntm", "--out", os.path.join(tmp, "out.json")])
        return read_json(os.path.join(tmp, "out.json"))["results"][0]


def plans(argv=None) -> int:
    """The default workload: the runners' physical plans on one stream."""
    args = arguments(
        __doc__, tbox=(DEFAULT_TBOX, "OWL TBox (default: the LUBM DL-Lite adaptation)"),
        tuples=1_000_000,
        rate=(2000, "tuples per time unit (event time = index // rate)"),
        noise=(0.1, "fraction of conflicting tuples"), subjects=50_000, window=30,
        disorder=(0.0, "fraction of tuples swapped with one up to --rate positions before (late with lateness 0)"),
        seed=1, file_tuples=(50_000, "lines per stream file"), files_per_batch=(5, "files per micro-batch"),
        warmup_batches=(2, "micro-batches left out of the steady rate (JVM JIT and first code generation)"),
        jvm_warmup_tuples=(0, "before measuring, run every variant once on the stream's first N tuples (a warmed-up "
                              "JVM: what a long-running query sees after its first minutes; 0 = from a cold JVM)"),
        plans=("local-reference,local,spark", "variants to measure: " + ", ".join(PLANS)
               + " (local, spark: the runners' default plans; columnar-executors, columnar-driver: every micro-batch "
                 "closed there)"),
        no_limits=(False, "skip Spark's own limits on the stream (scan, parse, one shuffle, self-join: "
                          "experiments/spark_limits.py), measured after the plans on one micro-batch's files"),
        methods="ntm,ltm", master="local[2]", shuffle_partitions=4,
        work=(None, "scratch directory (default: a temporary one, removed)"),
        out=(None, "write the results as JSON here"),
        lateness=(0, "allowed lateness (or 'none': unbounded)", _lateness)).parse_args(argv)
    tbox, analysis = load(args.tbox)
    named = [c for c in tbox.concepts if not c.startswith("exists")]
    ltm = best_ltm(analysis) if "ltm" in args.methods else None
    topologies = ([compile_ntm(analysis)] if "ntm" in args.methods else []) + ([ltm] if ltm is not None else [])
    work = args.work or tempfile.mkdtemp(prefix="srtopo-bench-")
    t0 = time.perf_counter()
    tuples = disordered(make_stream(analysis, args.tuples, args.rate, args.noise, args.subjects, args.seed),
                        args.disorder, args.rate, args.seed)
    stream_dir = os.path.join(work, "stream")
    files = _write(stream_dir, tuples, args.file_tuples)
    gen_s = time.perf_counter() - t0
    setup = {"tbox": args.tbox, "classes": len(named), "nis": len(tbox.nis),
             "ni_closure": len(analysis.closure), "groups": len(analysis.groups), "tuples": args.tuples,
             "rate_per_time_unit": args.rate, "noise": args.noise, "subjects": args.subjects,
             "window": args.window, "lateness": args.lateness, "disorder": args.disorder, "seed": args.seed,
             "files": len(files),
             "batch_tuples": args.file_tuples * args.files_per_batch, "master": args.master, "cpus": os.cpu_count(),
             "load_avg_at_start": os.getloadavg(), "generate_s": round(gen_s, 2),
             "jvm_warmup_tuples": args.jvm_warmup_tuples}
    log(json.dumps(setup))
    jobs = [(topo, plan) for topo in topologies for plan in splits(args.plans)]
    if args.jvm_warmup_tuples > 0:
        warm_dir = os.path.join(work, "warmup-stream")
        _write(warm_dir, tuples[:args.jvm_warmup_tuples], args.file_tuples)
        for topo, plan in jobs:
            run_variant(plan, topo, warm_dir, args, os.path.join(work, "warmup"), args.warmup_batches)
    results = []
    for topo, plan in jobs:
        results.append({**run_variant(plan, topo, stream_dir, args, work, args.warmup_batches),
                        "method": topo.label, "stage_ops": topo.conjunction_counts})
        log(json.dumps({k: v for k, v in results[-1].items() if k != "stages"}))
    limits = None
    if not args.no_limits:
        from experiments.spark_limits import measure_limits
        from srtopo.runners.spark.session import get_session
        batch = files[:args.files_per_batch]
        limits = measure_limits(get_session(args.master), batch, args.file_tuples * len(batch), args.window,
                                topology=topologies[0])
        log(json.dumps({"limits": limits}))
    for r in results:       # each plan against the local runner's default plan and its reference plan
        for plan, name in (("local", "local"), ("local-reference", "reference")):
            base = next((b for b in results if b["method"] == r["method"] and b["plan"] == plan), None)
            if base is not None and base is not r:
                if name == "local":
                    r["over_local"] = round(r["tuples_per_s"] / max(1, base["tuples_per_s"]), 3)
                r[f"steady_over_{name}"] = round(r["steady_tuples_per_s"] / max(1, base["steady_tuples_per_s"]), 3)
                r[f"same_reports_as_{name}"] = r["reports_digest"] == base["reports_digest"]
    print(text_table(["method", "plan", "tuples/s", "steady/s", "p50 s", "p95 s", "batches", "cached", "RSS MB",
                      "reports", "x local", "x reference", "same"],
                     [[r["method"], r["plan"], r["tuples_per_s"], r["steady_tuples_per_s"], r["batch_p50_s"],
                       r["batch_p95_s"], r["batches"], r["cached_tuples"],
                       max((v for v in r["memory_mb"].values() if v is not None), default=None), r["reports"],
                       r.get("steady_over_local"), r.get("steady_over_reference"),
                       r.get("same_reports_as_local", r.get("same_reports_as_reference"))] for r in results]))
    for r in results:
        if r["phases_s"]:
            print(f"{r['method']} {r['plan']}: phases per steady batch (s): "
                  + ", ".join(f"{k} {v}" for k, v in r["phases_s"].items()))
    if limits:
        for r in results:
            bound = _limit_of(r, limits)
            if bound is not None:
                r["limit"] = bound["query"]
                r["over_limit"] = round(r["steady_tuples_per_s"] / max(1, bound["lines_per_s"]), 3)
        print(f"Limits on one micro-batch's files ({limits[0]['lines']:,} lines, best of 3), and each plan's steady "
              f"rate against the limit that bounds it (load {os.getloadavg()[0]:.1f} at the end):")
        print(text_table(["query or plan", "lines or tuples/s", "s", "x its limit"],
                         [[x["query"], x["lines_per_s"], x["best_s"], None] for x in limits]
                         + [[f"plan {r['plan']} ({r['method']}): {r.get('limit', '-')}", r["steady_tuples_per_s"],
                             None, r.get("over_limit")] for r in results]))
    if args.out:
        write_json(args.out, {"setup": setup, "results": results, "limits": limits})
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


# --- latency: report latency on Spark under a paced feed -----------------------------------------------------------

#: files per batch size: for the sustainable rate, then for each paced run
FILES = {100_000: (16, 15), 500_000: (6, 5), 1_000_000: (4, 4)}


def _files(folder: Path, tuples: list, batch: int, n: int, file_tuples: int) -> list[list[Path]]:
    """``n`` micro-batches of ``batch`` tuples, each as files of ``file_tuples`` tuples (a file is read whole, as
    one task: a micro-batch of one file would parse on one core)."""
    per_file = min(batch, file_tuples)
    paths = [Path(p) for p in sorted(_write(folder, tuples[:batch * n], per_file))]
    k = -(-batch // per_file)
    return [paths[i:i + k] for i in range(0, len(paths), k)]


def sustainable(topology, files: list[list[Path]], work: Path, master: str, window: int, batch: int) -> dict:
    """Tuples/s of the same kind of running query with every batch's files fed at once (the Python hand-over
    included), from the end of its 3rd batch to the end of its last: the tuples of the batches in between (a
    listing while files are still being moved in can make a batch smaller) over that time."""
    got = paced(topology, files, work, master, window, 0.0, 1, batch)
    done, tuples = got.pop("_finished"), got.pop("_tuples")
    rate = sum(tuples[3:]) / (done[-1] - done[2]) if len(done) > 3 else batch / got["batch_p50_s"]
    return {"steady_tuples_per_s": round(rate), "sustained_batch_p50_s": got["batch_p50_s"]}


def _publish(work: Path, inbox: Path, files: list[Path]) -> None:
    """Make ``inbox`` (a symbolic link) show exactly ``files``, all at once: a folder of hard links to them,
    then the link moved onto it in one rename. Moving a batch's files in one by one, a listing between two
    moves split the batch over two micro-batches (about one batch in fifteen), which delayed half of its
    reports by a micro-batch."""
    folder = work / f"shown-{len(files):06d}-{time.monotonic_ns()}"
    folder.mkdir()
    for path in files:
        os.link(path, folder / path.name)
    link = work / ".in.next"
    link.unlink(missing_ok=True)
    link.symlink_to(folder, target_is_directory=True)
    os.replace(link, inbox)


def paced(topology, files: list[list[Path]], work: Path, master: str, window: int, period: float, rate: int,
          batch: int) -> dict:
    """Feed one micro-batch's files every ``period`` seconds into a running query (0: all at once); latency of
    every report it writes."""
    inbox, out = work / "in", work / "out"
    work.mkdir(parents=True)
    fed = work / "fed"
    fed.mkdir()
    _publish(work, inbox, [])
    config = RunConfig(window=window, lateness=0, checkpoint=str(work / "ck"), out=str(out),
                       options=SparkOptions(master=master, once=False))
    handle = SparkRunner().start(topology, [TntFiles(str(inbox), files_per_batch=len(files[0]))], config, MemorySink())
    arrivals = []
    try:
        next_at = time.time()
        for group in progress(files, desc=f"feed every {period:.2f} s", leave=False):
            time.sleep(max(0.0, next_at - time.time()))
            for path in group:
                shutil.copy(path, fed / path.name)
            arrivals.append(time.time())        # before the files show: the query may report on them first
            _publish(work, inbox, sorted(fed.iterdir()))
            next_at += period
        # every tuple processed
        deadline = time.time() + 600
        while sum(m["tuples"] for m in list(handle.batch_metrics)) < batch * len(files):
            if handle.query.exception() is not None or time.time() > deadline:
                raise RuntimeError(f"the query stopped or stalled: {handle.query.exception()}")
            time.sleep(0.05)
    finally:
        handle.stop()
    metrics = list(handle.batch_metrics)
    written = {m["batch"]: m["written_at"] for m in metrics}
    per_batch = {}
    for number, reports in sorted(out_batches(out).items()):
        for report in reports if number >= 0 else []:
            last = min(len(files) - 1, ((report["time"] + 1) * rate - 1) // batch)   # the last with tuples of time t
            per_batch.setdefault(number, []).append(written[number] - arrivals[last])
    latencies = [x for values in per_batch.values() for x in values]
    durations = [m["duration_s"] for m in metrics]
    if period == 0:
        return {**stats(durations, "batch_{}_s", ("p50",), digits=3), "_finished": [m["finished_at"] for m in metrics],
                "_tuples": [m["tuples"] for m in metrics]}
    done_tuples, backlog = 0, []      # batches that had arrived but were not processed when a batch finished
    for m in metrics:
        done_tuples += m["tuples"]
        backlog.append(sum(1 for a in arrivals if a <= m["finished_at"]) - done_tuples / batch)
    return {"period_s": round(period, 3), "fed_batches": len(files), "reports": len(latencies),
            **stats(latencies, "latency_{}_s", ("min", "p50", "p95", "max"), digits=3),
            **stats(durations, "batch_{}_s", digits=3),
            "backlog_max_batches": round(max(backlog), 2) if backlog else 0, "batches": len(metrics),
            "batch_durations_s": [round(d, 3) for d in durations],
            "batch_latency_p50_s": {number: stats(v, digits=3)["p50"] for number, v in per_batch.items()}}


def latency(argv=None) -> int:
    """Report latency on Spark under a paced feed, at fractions of the rate the query sustains."""
    args = arguments(__doc__, batch_tuples="100000,500000,1000000",
                     fractions=("0.5,0.8", "fractions of the sustainable rate to feed at"), master="local[2]",
                     rate=(2000, "tuples per time unit"), window=30,
                     file_tuples=(50_000, "tuples per input file (bench_consistency's); a micro-batch is whole files"),
                     out="bench_consistency_latency.json").parse_args(argv)
    sizes, fractions = splits(args.batch_tuples, int), splits(args.fractions, float)
    _, analysis = load(DEFAULT_TBOX)
    topology = compile_ntm(analysis)
    need = max(b * max(FILES.get(b, (4, 4))) for b in sizes)
    tuples = make_stream(analysis, need, args.rate, 0.1, 50_000, 1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="srtopo-latency-") as tmp:
        work = Path(tmp)
        # a JVM whose JIT has compiled Spark's planner and generated code, as a running service's has: the first
        # ~1M tuples through a query of their own (a cold JVM's first batches take 2-3x longer), or as many whole
        # batches of the stream as there are when the batches measured are smaller
        warm_batch = min(100_000, len(tuples) // 10)
        warm = _files(work / "warm", tuples, warm_batch, 10, args.file_tuples)
        sustainable(topology, warm, work / "warm-run", args.master, args.window, warm_batch)
        for batch in sizes:
            n_sus, n_paced = FILES.get(batch, (4, 4))
            files = _files(work / f"files-{batch}", tuples, batch, max(n_sus, n_paced), args.file_tuples)
            sus = sustainable(topology, files[:n_sus], work / f"sus-{batch}", args.master, args.window, batch)
            log(f"{batch} tuples per batch: sustains {sus['steady_tuples_per_s']} tuples/s")
            for fraction in fractions:
                period = batch / (fraction * sus["steady_tuples_per_s"])
                got = paced(topology, files[:n_paced], work / f"paced-{batch}-{fraction}", args.master, args.window,
                            period, args.rate, batch)
                row = {"batch_tuples": batch, "file_tuples": min(batch, args.file_tuples), "fraction": fraction,
                       "master": args.master, **sus, **got}
                log(json.dumps(row))
                rows.append(row)
    columns = ["batch_tuples", "fraction", "steady_tuples_per_s", "period_s", "latency_p50_s", "latency_p95_s",
               "latency_max_s", "batch_p50_s", "backlog_max_batches"]      # backlog: batches waiting
    print(text_table(columns, [[r[c] for c in columns] for r in rows]))
    write_json(args.out, {"rows": rows, "cpus": os.cpu_count()})
    return 0


# --- scaling: local[1], local[2] and a standalone cluster against one process --------------------------------------

#: name -> (cores given to Spark's tasks, bench_consistency --plans, --master; "standalone": a cluster started here)
CONFIGS = {"one process": (1, "local", None), "local[1]": (1, "fused", "local[1]"),
           "local[2]": (2, "fused", "local[2]"), "standalone 2x1": (2, "fused", "standalone")}


def scaling(argv=None) -> int:
    """local[1], local[2] and a standalone cluster against the single-process runner."""
    args = arguments(__doc__, tuples=3_000_000, files_per_batch=(20, "50k-tuple files per micro-batch"),
                     jvm_warmup_tuples=1_000_000, configs=",".join(CONFIGS),
                     out="scaling_consistency.json").parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="srtopo-scaling-") as tmp:
        work = Path(tmp)
        for name in splits(args.configs):
            cores, variant, master = CONFIGS[name]
            log(f"{name} ...")
            argv = ["--tuples", str(args.tuples), "--plans", variant, "--files-per-batch", str(args.files_per_batch),
                    "--jvm-warmup-tuples", str(args.jvm_warmup_tuples)]
            if master == "standalone":
                from srtopo.runners.spark.standalone import standalone_cluster
                with standalone_cluster(workers=2, cores=1, memory="2g", workdir=str(work / "cluster")) as (url, _):
                    r = in_own_process(ntm_row, argv=argv + ["--master", url])
            else:
                r = in_own_process(ntm_row, argv=argv + (["--master", master] if master else []))
            rows.append({"config": name, "cores": cores, **{k: r.get(k, {}) for k in (
                "tuples", "tuples_per_s", "steady_tuples_per_s", "batch_p50_s", "reports", "reports_digest",
                "memory_mb", "phases_s")}})
            log(json.dumps(rows[-1]))
    base = next((r for r in rows if r["config"] == "one process"), None)
    for r in rows:
        r["steady_over_one_process"] = ratio(r["steady_tuples_per_s"], base["steady_tuples_per_s"]) if base else None
        r["same_reports"] = r["reports_digest"] == base["reports_digest"] if base else None
    columns = ["config", "cores", "tuples_per_s", "steady_tuples_per_s", "batch_p50_s", "steady_over_one_process",
               "same_reports"]
    print(text_table(columns, [[r[c] for c in columns] for r in rows]))
    write_rows(args.out, {"rows": rows, "cpus": os.cpu_count(), "tuples": args.tuples,
                          "batch_tuples": 50_000 * args.files_per_batch}, rows, plots={".png": _plot_scaling})
    return 0


def _plot_scaling(rows: list[dict], path: Path) -> None:
    with chart(path, size=(6, 3.5)) as (_fig, axes):
        ax = axes[0][0]
        ax.bar([r["config"] for r in rows], [r["steady_tuples_per_s"] / 1000 for r in rows],
               color=["grey"] + ["tab:blue"] * (len(rows) - 1))
        for i, r in enumerate(rows):
            if r["steady_over_one_process"]:
                ax.text(i, r["steady_tuples_per_s"] / 1000, f"{r['steady_over_one_process']:.2f}x", ha="center",
                        va="bottom")
        ax.set_ylim(0, max(r["steady_tuples_per_s"] for r in rows) / 1000 * 1.15)
        ax.set_ylabel("steady k tuples/s")
        ax.set_title("Consistency check (LUBM, NTM), 1M-tuple batches, 2 cores", fontsize=10)


# --- driver-cpu: the driver's CPU on a standalone cluster ----------------------------------------------------------

def driver_cpu(argv=None) -> int:
    """The driver's CPU per micro-batch on a standalone cluster, as the micro-batch grows."""
    args = arguments(__doc__, files_per_batch=("2,8,32", "files per micro-batch, one run each"),
                     file_tuples=(25_000, "lines per stream file"), batches=(3, "micro-batches per run"),
                     out="cluster_driver_cpu.json").parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="srtopo-cluster-cpu-") as tmp:
        from srtopo.runners.spark.standalone import standalone_cluster
        with standalone_cluster(workers=2, cores=1, memory="2g", workdir=str(Path(tmp) / "cluster")) as (url, _):
            for n in (int(x) for x in splits(args.files_per_batch)):
                load = os.getloadavg()[0]
                r = in_own_process(ntm_row, argv=[
                    "--tuples", str(n * args.file_tuples * args.batches), "--plans", "columnar-executors",
                    "--files-per-batch", str(n), "--file-tuples", str(args.file_tuples), "--warmup-batches", "0",
                    "--jvm-warmup-tuples", str(n * args.file_tuples), "--master", url,
                    "--shuffle-partitions", "2", "--no-limits"])
                cpu = r["cpu_s"]
                driver = (cpu.get("python") or 0) + (cpu.get("jvm") or 0)
                rows.append({"files_per_batch": n, "batch_tuples": n * args.file_tuples, "batches": r["batches"],
                             "driver_python_cpu_s": cpu.get("python"), "driver_jvm_cpu_s": cpu.get("jvm"),
                             "driver_cpu_s_per_batch": round(driver / max(1, r["batches"]), 3),
                             "steady_tuples_per_s": r["steady_tuples_per_s"], "batch_p50_s": r["batch_p50_s"],
                             "reports": r["reports"], "load_at_start": round(load, 1),
                             "physical_plan": r["physical_plan"]})
                log(json.dumps(rows[-1]))
    columns = ["batch_tuples", "batches", "driver_cpu_s_per_batch", "driver_python_cpu_s", "driver_jvm_cpu_s",
               "steady_tuples_per_s", "batch_p50_s", "load_at_start"]
    print(text_table(columns, [[r[c] for c in columns] for r in rows]))
    write_json(args.out, {"rows": rows, "cpus": os.cpu_count(), "file_tuples": args.file_tuples})
    return 0


def main(argv=None) -> int:
    return workloads({"plans": plans, "latency": latency, "scaling": scaling, "driver-cpu": driver_cpu}, argv)


if __name__ == "__main__":
    command(main)
