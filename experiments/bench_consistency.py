"""Consistency-check throughput through the runner protocol: the local runner's and Spark's physical plans, NTM
and the least skewed LTM split, on the same files. experiments/README.md, "What each benchmark measures"."""
from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time

from experiments.common import (
    LUBM_TBOX, arguments, log, measure, models_digest, read_json, splits, text_table, write_json)
from srtopo.concepts import RDF_TYPE
from srtopo.consistency.balance import contiguous_splits
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.io.sources import TntFiles
from srtopo.io.tnt import write_tnt
from srtopo.measure import process_cpu_seconds
from srtopo.runners import LocalOptions, SparkOptions

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
    row, result = measure(name, options(variant, args), topology, [TntFiles(stream_dir, files_per_batch=args.files_per_batch)],
                          args.window, warmup=warmup, lateness=args.lateness,
                          checkpoint=os.path.join(run_dir, "ck"), out=os.path.join(run_dir, "out"))
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
    best = None
    k = len(analysis.groups)
    for stages in range(2, min(4, k) + 1):
        for split in contiguous_splits(k, stages):
            topo = compile_ltm(analysis, split)
            key = (max(topo.conjunction_counts), sum(topo.conjunction_counts), len(split))
            if best is None or key < best[0]:
                best = (key, topo)
    return best[1] if best else None


def ntm_row(argv: list[str]) -> dict:
    """The row of ``bench_consistency ARGV`` (NTM, one plan), run in this process: what scaling_consistency and
    cluster_driver_cpu run in a process of their own per configuration."""
    with tempfile.TemporaryDirectory() as tmp:
        main(argv + ["--methods", "ntm", "--out", os.path.join(tmp, "out.json")])
        return read_json(os.path.join(tmp, "out.json"))["results"][0]


def main(argv=None) -> int:
    parser = arguments(
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
        out=(None, "write the results as JSON here"))
    parser.add_argument("--lateness", type=_lateness, default=0, help="allowed lateness (or 'none': unbounded)")
    args = parser.parse_args(argv)
    tbox, analysis = load(args.tbox)
    named = [c for c in tbox.concepts if not c.startswith("exists")]
    topologies = []
    if "ntm" in args.methods:
        topologies.append(compile_ntm(analysis))
    if "ltm" in args.methods:
        ltm = best_ltm(analysis)
        if ltm is not None:
            topologies.append(ltm)
    work = args.work or tempfile.mkdtemp(prefix="srtopo-bench-")
    t0 = time.perf_counter()
    tuples = disordered(make_stream(analysis, args.tuples, args.rate, args.noise, args.subjects, args.seed),
                        args.disorder, args.rate, args.seed)
    stream_dir = os.path.join(work, "stream")
    shutil.rmtree(stream_dir, ignore_errors=True)
    n_files = len(write_tnt(stream_dir, ((t, s, RDF_TYPE, c) for s, c, t in tuples), per_file=args.file_tuples))
    gen_s = time.perf_counter() - t0
    setup = {"tbox": args.tbox, "classes": len(named), "nis": len(tbox.nis),
             "ni_closure": len(analysis.closure), "groups": len(analysis.groups), "tuples": args.tuples,
             "rate_per_time_unit": args.rate, "noise": args.noise, "subjects": args.subjects,
             "window": args.window, "lateness": args.lateness, "disorder": args.disorder, "seed": args.seed,
             "files": n_files,
             "batch_tuples": args.file_tuples * args.files_per_batch, "master": args.master, "cpus": os.cpu_count(),
             "load_avg_at_start": os.getloadavg(), "generate_s": round(gen_s, 2),
             "jvm_warmup_tuples": args.jvm_warmup_tuples}
    log(json.dumps(setup))
    plans = splits(args.plans)
    if args.jvm_warmup_tuples > 0:
        warm_dir = os.path.join(work, "warmup-stream")
        shutil.rmtree(warm_dir, ignore_errors=True)
        write_tnt(warm_dir, ((t, s, RDF_TYPE, c) for s, c, t in tuples[:args.jvm_warmup_tuples]),
                  per_file=args.file_tuples)
        for topo in topologies:
            for plan in plans:
                run_variant(plan, topo, warm_dir, args, os.path.join(work, "warmup"), args.warmup_batches)
    results = []
    for topo in topologies:
        for plan in plans:
            res = run_variant(plan, topo, stream_dir, args, work, args.warmup_batches)
            res["method"] = topo.label
            res["stage_ops"] = topo.conjunction_counts
            results.append(res)
            log(json.dumps({k: v for k, v in res.items() if k != "stages"}))
    limits = None
    if not args.no_limits:
        from experiments.spark_limits import measure_limits
        from srtopo.runners.spark.session import get_session
        batch_files = [os.path.join(stream_dir, n) for n in sorted(os.listdir(stream_dir))][:args.files_per_batch]
        limits = measure_limits(get_session(args.master), batch_files, args.file_tuples * len(batch_files),
                                args.window, topology=topologies[0])
        log(json.dumps({"limits": limits}))
    for r in results:
        base = next((b for b in results if b["method"] == r["method"] and b["plan"] == "local"), None)
        if r["plan"] != "local" and base:
            r["over_local"] = round(r["tuples_per_s"] / max(1, base["tuples_per_s"]), 3)
            r["steady_over_local"] = round(r["steady_tuples_per_s"] / max(1, base["steady_tuples_per_s"]), 3)
            r["same_reports_as_local"] = r["reports_digest"] == base["reports_digest"]
        reference = next((b for b in results if b["method"] == r["method"] and b["plan"] == "local-reference"), None)
        if reference and r is not reference:
            r["steady_over_reference"] = round(r["steady_tuples_per_s"] / max(1, reference["steady_tuples_per_s"]), 3)
            r["same_reports_as_reference"] = r["reports_digest"] == reference["reports_digest"]
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


if __name__ == "__main__":
    raise SystemExit(main())
