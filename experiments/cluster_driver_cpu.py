"""The driver's CPU as a micro-batch grows, on a standalone cluster of two one-core workers: flat if no tuple
passes through the driver. experiments/README.md, "What each benchmark measures"."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from experiments.bench_consistency import ntm_row
from experiments.common import arguments, in_own_process, log, splits, text_table, write_json


def main(argv=None) -> int:
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


if __name__ == "__main__":
    raise SystemExit(main())
