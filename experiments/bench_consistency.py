"""Consistency-check throughput: local runner vs Spark (staged and fused plans), NTM and the best LTM split.

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python -m experiments.bench_consistency \\
        --tuples 1000000 --noise 0.1 --rate 2000 --window 30 --out bench.json

Stream: every subject has a home class H (a satisfiable named class); a tuple asserts a random superclass
of H (consistent), except a fraction ``--noise`` that asserts a class disjoint with one of H's
superclasses (each such tuple makes the subject inconsistent at that time). Event time = tuple index //
``--rate``. The stream is written as timestamped N-Triples files (``--file-tuples`` lines each, modification
times increasing) that the Spark file source reads ``--files-per-batch`` at a time (the micro-batch size);
the local runner reads the same tuples already parsed (its own parsing is timed separately).

Reported per engine/plan: tuples/s (whole run, first batch included, session already up), steady tuples/s
(batches after ``--warmup-batches``, over Spark's own trigger durations: the batch function plus the trigger's
offsets log, file listing and commit), batch latency p50/p95 (trigger duration of a micro-batch), cached tuples at
the end (window state rows), process RSS (Python driver and, for Spark, the JVM), and the Spark/local
ratio measured in the same run. The report (subject, time) sets of all engines are compared.
``--jvm-warmup-tuples N`` first runs every Spark plan on the stream's first N tuples and throws the result away:
the measured runs then see a JVM whose JIT has compiled Spark's planner and generated code (what a long-running
query sees after its first minutes) instead of paying that one-time cost inside the measurement.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time


DEFAULT_TBOX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tboxes", "lubm-dllite.ttl")


def random_lubm_like(seed: int, n_classes: int = 45, n_nis: int = 80):
    """A random TBox of LUBM's size: a class tree of depth <= 4 and sibling/cousin disjointness."""
    from srtopo.ontology.model import TBox
    rng = random.Random(seed)
    ex = "http://bench.example/onto#"
    classes = [f"{ex}C{i}" for i in range(n_classes)]
    pis = [(classes[i], classes[rng.randrange(max(1, i // 3), i) if i > 3 else 0]) for i in range(1, n_classes)]
    nis = set()
    while len(nis) < n_nis:
        a, b = rng.sample(classes, 2)
        nis.add(tuple(sorted((a, b))))
    return TBox.build(pis, sorted(nis), name=f"random-lubm-{seed}")


def load(args):
    from srtopo.ontology.nis import analyse
    if args.random_tbox:
        tbox = random_lubm_like(args.seed)
    else:
        from srtopo.ontology.owl import load_tbox
        tbox = load_tbox(args.tbox)
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


def write_stream(directory: str, tuples, per_file: int) -> int:
    from srtopo.topology.tnt import RDF_TYPE, format_tnt
    os.makedirs(directory, exist_ok=True)
    files = 0
    for start in range(0, len(tuples), per_file):
        path = os.path.join(directory, f"part-{files:05d}.tnt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(format_tnt(t, s, RDF_TYPE, c) + "\n" for s, c, t in tuples[start:start + per_file])
        stamp = 1_600_000_000 + files   # distinct, increasing modification times: the file source's order
        os.utime(path, (stamp, stamp))
        files += 1
    return files


def rss_mb(pid: int | None = None) -> float | None:
    try:
        with open(f"/proc/{pid or os.getpid()}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def pct(values, q):
    if not values:
        return None
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(q * (len(values) - 1)))))
    return round(values[k], 3)


def digest(keys) -> str:
    return hashlib.sha1("\n".join(f"{s}\t{t}" for s, t in sorted(keys)).encode()).hexdigest()[:12]


def run_local(topology, tuples, window, lateness, batch_tuples):
    from srtopo.topology.runners.local import LocalRunner
    from srtopo.topology.tnt import StreamTuple
    items = [StreamTuple(s, c, t, c) for s, c, t in tuples]
    runner = LocalRunner(topology, window, allowed_lateness=lateness)
    latencies, keys = [], set()
    start = time.perf_counter()
    for i in range(0, len(items), batch_tuples):
        t0 = time.perf_counter()
        for item in items[i:i + batch_tuples]:
            for report in runner.push(item):
                keys.add(report.key)
        latencies.append(time.perf_counter() - t0)
    wall = time.perf_counter() - start
    cached = sum(s.cached_now for s in runner.counters.stages)
    return {"engine": "local", "plan": "-", "tuples": len(items), "wall_s": round(wall, 3),
            "tuples_per_s": round(len(items) / wall), "steady_tuples_per_s": round(len(items) / wall),
            "batch_p50_s": pct(latencies, 0.5), "batch_p95_s": pct(latencies, 0.95), "batches": len(latencies),
            "cached_tuples": cached, "rss_mb": rss_mb(), "reports": len(keys), "reports_digest": digest(keys)}


def run_spark(spark, topology, plan, stream_dir, window, lateness, files_per_batch, work, warmup: int = 2):
    from srtopo.topology.spark import SparkConsistencyRunner, TntSource
    ck, out = os.path.join(work, f"ck-{plan}-{topology.plan}"), os.path.join(work, f"out-{plan}-{topology.plan}")
    shutil.rmtree(ck, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    runner = SparkConsistencyRunner(topology, window, lateness=lateness, plan=plan, spark=spark)
    start = time.perf_counter()
    runner.start([TntSource(stream_dir, max_files_per_trigger=files_per_batch)], out=out, checkpoint=ck, once=True)
    runner.await_query()
    streamed = time.perf_counter() - start
    # per trigger, from Spark: the whole trigger (offsets log, file listing, the batch, commit log), not only the
    # foreachBatch function that the runner's own duration_s measures
    triggers = {int(p["batchId"]): p["durationMs"] for p in runner.query.recentProgress if "addBatch" in p["durationMs"]}
    runner.finish()   # end of input: the reports still open; timed, since a plan may defer closing work to it
    wall = time.perf_counter() - start
    metrics = list(runner.batch_metrics)
    durations = [m["duration_s"] for m in metrics]
    n = sum(m["tuples"] for m in metrics)
    steady = metrics[warmup:] or metrics[-1:]   # JVM warm-up (JIT, first code generation) excluded
    trigger_s = [triggers.get(m["batch"], {}).get("triggerExecution", m["duration_s"] * 1000) / 1000 for m in metrics]
    steady_trigger_s = trigger_s[len(metrics) - len(steady):]
    steady_rate = sum(m["tuples"] for m in steady) / max(1e-9, sum(steady_trigger_s))
    keys = {(r["subject"], r["time"]) for r in runner.reports().select("subject", "time").toLocalIterator()}
    jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    return {"engine": "spark", "plan": plan, "tuples": n, "wall_s": round(wall, 3),
            "finish_s": round(wall - streamed, 3),
            "tuples_per_s": round(n / wall), "steady_tuples_per_s": round(steady_rate),
            "batch_p50_s": pct(trigger_s, 0.5), "batch_p95_s": pct(trigger_s, 0.95), "batches": len(metrics),
            "first_batch_s": durations[0] if durations else None, "batch_durations_s": durations,
            "trigger_durations_s": [round(x, 3) for x in trigger_s],
            "steady_trigger_overhead_s": round(sum(steady_trigger_s) / len(steady_trigger_s)
                                               - sum(m["duration_s"] for m in steady) / len(steady), 3) if steady else None,
            "phases_s": {k: round(sum(m["phases_s"][k] for m in steady) / len(steady), 3) for k in steady[0]["phases_s"]}
            if steady else {},
            "cached_tuples": metrics[-1]["cached_tuples"] if metrics else 0,
            "rss_mb": rss_mb(), "jvm_rss_mb": rss_mb(jvm_pid), "reports": len(keys), "reports_digest": digest(keys),
            "stages": metrics[-1]["stages"] if metrics else {}, "malformed": sum(m["malformed"] for m in metrics),
            "late": sum(m["late"] for m in metrics)}


def best_ltm(analysis):
    """The split the paper recommends: the least skewed stage load (max conjunction ops per stage)."""
    from tests.randomgen import compositions
    from srtopo.topology.compile import compile_ltm
    best = None
    k = len(analysis.groups)
    if k < 2:
        return None
    for split in compositions(k):
        if len(split) < 2 or len(split) > 4:
            continue
        topo = compile_ltm(analysis, split)
        key = (max(topo.conjunction_counts), sum(topo.conjunction_counts), len(split))
        if best is None or key < best[0]:
            best = (key, topo)
    return best[1] if best else None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tbox", default=DEFAULT_TBOX, help="OWL TBox (default: the LUBM DL-Lite adaptation)")
    p.add_argument("--random-tbox", action="store_true", help="a random LUBM-sized TBox (45 classes, 80 NIs)")
    p.add_argument("--tuples", type=int, default=1_000_000)
    p.add_argument("--rate", type=int, default=2000, help="tuples per time unit (event time = index // rate)")
    p.add_argument("--noise", type=float, default=0.1, help="fraction of conflicting tuples")
    p.add_argument("--subjects", type=int, default=50_000)
    p.add_argument("--window", type=int, default=30)
    p.add_argument("--lateness", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--file-tuples", type=int, default=50_000, help="lines per stream file")
    p.add_argument("--files-per-batch", type=int, default=5, help="files per micro-batch")
    p.add_argument("--warmup-batches", type=int, default=2,
                   help="micro-batches left out of the steady rate (JVM JIT and first code generation)")
    p.add_argument("--jvm-warmup-tuples", type=int, default=0,
                   help="before measuring, run every Spark plan once on the stream's first N tuples (a warmed-up "
                        "JVM: what a long-running query sees after its first minutes; 0 = measure from a cold JVM)")
    p.add_argument("--plans", default="local,staged,fused")
    p.add_argument("--methods", default="ntm,ltm")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--shuffle-partitions", type=int, default=4)
    p.add_argument("--work", default=None, help="scratch directory (default: a temporary one, removed)")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    args = p.parse_args(argv)

    from srtopo.topology.compile import compile_ntm
    tbox, analysis = load(args)
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
    tuples = make_stream(analysis, args.tuples, args.rate, args.noise, args.subjects, args.seed)
    stream_dir = os.path.join(work, "stream")
    shutil.rmtree(stream_dir, ignore_errors=True)
    n_files = write_stream(stream_dir, tuples, args.file_tuples)
    gen_s = time.perf_counter() - t0
    batch_tuples = args.file_tuples * args.files_per_batch
    setup = {"tbox": "random" if args.random_tbox else args.tbox, "classes": len(named), "nis": len(tbox.nis),
             "ni_closure": len(analysis.closure), "groups": len(analysis.groups), "tuples": args.tuples,
             "rate_per_time_unit": args.rate, "noise": args.noise, "subjects": args.subjects,
             "window": args.window, "lateness": args.lateness, "seed": args.seed, "files": n_files,
             "batch_tuples": batch_tuples, "master": args.master, "cpus": os.cpu_count(),
             "load_avg_at_start": os.getloadavg(), "generate_s": round(gen_s, 2),
             "jvm_warmup_tuples": args.jvm_warmup_tuples}
    print(json.dumps(setup), file=sys.stderr)
    results = []
    plans = [x.strip() for x in args.plans.split(",") if x.strip()]
    spark = None
    if any(x != "local" for x in plans):
        from srtopo.topology.spark import get_session
        spark = get_session(master=args.master, shuffle_partitions=args.shuffle_partitions, app_name="srtopo-bench")
        # warm the JVM once (first-batch JIT cost is reported separately as first_batch_s)
        spark.range(1000).selectExpr("sum(id)").collect()
        if args.jvm_warmup_tuples > 0:
            warm_dir = os.path.join(work, "warmup-stream")
            shutil.rmtree(warm_dir, ignore_errors=True)
            write_stream(warm_dir, tuples[:args.jvm_warmup_tuples], args.file_tuples)
            for topo in topologies:
                for plan in plans:
                    if plan != "local":
                        run_spark(spark, topo, plan, warm_dir, args.window, args.lateness, args.files_per_batch,
                                  os.path.join(work, "warmup"), args.warmup_batches)
    for topo in topologies:
        for plan in plans:
            if plan == "local":
                res = run_local(topo, tuples, args.window, args.lateness, batch_tuples)
            else:
                res = run_spark(spark, topo, plan, stream_dir, args.window, args.lateness, args.files_per_batch, work,
                                args.warmup_batches)
            res["method"] = topo.plan
            res["stage_ops"] = topo.conjunction_counts
            results.append(res)
            print(json.dumps({k: v for k, v in res.items() if k != "stages"}), file=sys.stderr, flush=True)
    for topo in topologies:
        local = [r for r in results if r["method"] == topo.plan and r["engine"] == "local"]
        for r in results:
            if r["method"] == topo.plan and r["engine"] == "spark" and local:
                r["spark_over_local"] = round(r["tuples_per_s"] / max(1, local[0]["tuples_per_s"]), 3)
                r["steady_spark_over_local"] = round(r["steady_tuples_per_s"] / max(1, local[0]["tuples_per_s"]), 3)
                r["same_reports_as_local"] = r["reports_digest"] == local[0]["reports_digest"]
    header = f"{'method':10} {'engine':6} {'plan':7} {'tuples/s':>9} {'steady/s':>9} {'p50 s':>7} {'p95 s':>7} " \
             f"{'batches':>7} {'cached':>8} {'RSS MB':>8} {'reports':>8} {'x local':>7} same"
    print(header)
    for r in results:
        rss = r.get("jvm_rss_mb") or r.get("rss_mb")
        print(f"{r['method']:10} {r['engine']:6} {r['plan']:7} {r['tuples_per_s']:>9} {r['steady_tuples_per_s']:>9} "
              f"{r['batch_p50_s']!s:>7} {r['batch_p95_s']!s:>7} {r['batches']:>7} {r['cached_tuples']:>8} "
              f"{rss!s:>8} {r['reports']:>8} {r.get('spark_over_local', '-')!s:>7} "
              f"{r.get('same_reports_as_local', '-')}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump({"setup": setup, "results": results}, handle, indent=2)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
