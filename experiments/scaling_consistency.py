"""Scaling of the consistency check: local[1], local[2] and a standalone cluster against the single-process
runner, on one stream. experiments/README.md, "What each benchmark measures"."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from experiments.bench_consistency import ntm_row
from experiments.common import arguments, chart, in_own_process, log, splits, text_table, write_json

#: name -> (cores given to Spark's tasks, bench_consistency --plans, --master; "standalone": a cluster started here)
CONFIGS = {"one process": (1, "local", None), "local[1]": (1, "fused", "local[1]"),
           "local[2]": (2, "fused", "local[2]"), "standalone 2x1": (2, "fused", "standalone")}


def main(argv=None) -> int:
    args = arguments(__doc__, tuples=3_000_000, files_per_batch=(20, "50k-tuple files per micro-batch"),
                     jvm_warmup_tuples=1_000_000, configs=",".join(CONFIGS),
                     out="scaling_consistency.json").parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="srtopo-scaling-") as tmp:
        work = Path(tmp)
        for name in splits(args.configs):
            cores, plans, master = CONFIGS[name]
            log(f"{name} ...")
            argv = ["--tuples", str(args.tuples), "--plans", plans, "--files-per-batch", str(args.files_per_batch),
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
        r["steady_over_one_process"] = round(r["steady_tuples_per_s"] / base["steady_tuples_per_s"], 3) if base else None
        r["same_reports"] = r["reports_digest"] == base["reports_digest"] if base else None
    columns = ["config", "cores", "tuples_per_s", "steady_tuples_per_s", "batch_p50_s", "steady_over_one_process",
               "same_reports"]
    print(text_table(columns, [[r[c] for c in columns] for r in rows]))
    write_json(args.out, {"rows": rows, "cpus": os.cpu_count(), "tuples": args.tuples,
                          "batch_tuples": 50_000 * args.files_per_batch})
    _plot(rows, Path(args.out).with_suffix(".png"))
    return 0


def _plot(rows: list[dict], path: Path) -> None:
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


if __name__ == "__main__":
    raise SystemExit(main())
