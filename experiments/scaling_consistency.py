"""Scaling of the consistency check on Spark: local[1], local[2] and a standalone cluster of two one-core workers,
against the single-process runner, in one run on the same stream (``bench_consistency``'s, NTM, fused plan).

    .venv/bin/python -m experiments.scaling_consistency                  # ~8 min on 2 cores
    .venv/bin/python -m experiments.scaling_consistency --tuples 2000000

Every configuration runs ``bench_consistency`` in a process of its own (a fresh JVM each, warmed on the stream's
first ``--jvm-warmup-tuples``), so one configuration's JIT or caches never help another. Results:
``results/scaling_consistency.json`` and a plot of steady tuples/s per configuration (``.png``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from experiments.common import ROOT, log

RESULTS = Path(__file__).parent / "results"
#: name -> (cores given to Spark's tasks, bench_consistency --plans, --master; "standalone": a cluster started here)
CONFIGS = {"one process": (1, "local", None), "local[1]": (1, "fused", "local[1]"),
           "local[2]": (2, "fused", "local[2]"), "standalone 2x1": (2, "fused", "standalone")}


def _bench(plans: str, master: str | None, args, work: Path) -> dict:
    out = work / f"bench-{plans}-{(master or 'none').replace('/', '_').replace(':', '_')}.json"
    cmd = [sys.executable, "-m", "experiments.bench_consistency", "--tuples", str(args.tuples),
           "--plans", plans, "--methods", "ntm", "--files-per-batch", str(args.files_per_batch),
           "--jvm-warmup-tuples", str(args.jvm_warmup_tuples), "--out", str(out)]
    if master:
        cmd += ["--master", master]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return json.loads(out.read_text(encoding="utf-8"))["results"][0]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tuples", type=int, default=3_000_000)
    p.add_argument("--files-per-batch", type=int, default=20, help="50k-tuple files per micro-batch")
    p.add_argument("--jvm-warmup-tuples", type=int, default=1_000_000)
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--out", default=str(RESULTS / "scaling_consistency.json"))
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="srtopo-scaling-") as tmp:
        work = Path(tmp)
        for name in [c.strip() for c in args.configs.split(",") if c.strip()]:
            cores, plans, master = CONFIGS[name]
            log(f"{name} ...")
            if master == "standalone":
                from srtopo.runners.spark.standalone import standalone_cluster
                with standalone_cluster(workers=2, cores=1, memory="2g", workdir=str(work / "cluster")) as (url, _):
                    r = _bench(plans, url, args, work)
            else:
                r = _bench(plans, master, args, work)
            rows.append({"config": name, "cores": cores, "tuples": r["tuples"], "tuples_per_s": r["tuples_per_s"],
                         "steady_tuples_per_s": r["steady_tuples_per_s"], "batch_p50_s": r["batch_p50_s"],
                         "reports": r["reports"], "reports_digest": r["reports_digest"], "memory_mb": r["memory_mb"],
                         "phases_s": r.get("phases_s", {})})
            log(json.dumps(rows[-1]))
    base = next((r for r in rows if r["config"] == "one process"), None)
    for r in rows:
        r["steady_over_one_process"] = round(r["steady_tuples_per_s"] / base["steady_tuples_per_s"], 3) if base else None
        r["same_reports"] = r["reports_digest"] == base["reports_digest"] if base else None
    print(f"{'config':16} {'cores':>5} {'tuples/s':>9} {'steady/s':>9} {'batch p50':>9} {'x one process':>13} same")
    for r in rows:
        print(f"{r['config']:16} {r['cores']:>5} {r['tuples_per_s']:>9} {r['steady_tuples_per_s']:>9} "
              f"{r['batch_p50_s']:>9} {r['steady_over_one_process']!s:>13} {r['same_reports']}")
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "cpus": os.cpu_count(), "tuples": args.tuples,
                                              "batch_tuples": 50_000 * args.files_per_batch}, indent=2), encoding="utf-8")
        _plot(rows, Path(args.out).with_suffix(".png"))
    return 0


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.5))
    names = [r["config"] for r in rows]
    ax.bar(names, [r["steady_tuples_per_s"] / 1000 for r in rows], color=["grey"] + ["tab:blue"] * (len(rows) - 1))
    for i, r in enumerate(rows):
        if r["steady_over_one_process"]:
            ax.text(i, r["steady_tuples_per_s"] / 1000, f"{r['steady_over_one_process']:.2f}x", ha="center", va="bottom")
    ax.set_ylim(0, max(r["steady_tuples_per_s"] for r in rows) / 1000 * 1.15)
    ax.set_ylabel("steady k tuples/s")
    ax.set_title("Consistency check (LUBM, NTM), 1M-tuple batches, 2 cores", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
