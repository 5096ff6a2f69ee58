"""Streamlog on Spark against the local runner, in one run: continuous shortest paths over a stream of arcs
(``bench_streamlog``'s pruned program and random graph), written as files of ``--ts-per-file`` timestamps with
punctuation, read by both runners through the runner protocol.

* local: the local runner reads the directory (its lines as they come); throughput in timestamps/s;
* spark: ``--files-per-batch`` files per micro-batch on ``--master``; per-batch latency (Spark's trigger), the
  throughput over the batches after the first, and the JVM's memory.

Both must write the same models, or the run fails. Results: experiments/results/bench_streamlog_spark.json and
a table on stdout.

    python -m experiments.bench_streamlog_spark --nodes 300 --timestamps 400
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from experiments.bench_streamlog import arc_lines, make_stream, program_text
from experiments.common import RESULTS, ExperimentError, log


def write_stream(folder: Path, lines: list[list[str]], per_file: int) -> int:
    """The arcs' lines, ``per_file`` timestamps a file, each file ending with punctuation past its last one."""
    folder.mkdir(parents=True)
    files = 0
    for start in range(0, len(lines), per_file):
        chunk = lines[start:start + per_file]
        path = folder / f"part-{files:05d}.txt"
        path.write_text("".join(line + "\n" for ts in chunk for line in ts)
                        + f"#punctuation {start + len(chunk) + 1}.\n", encoding="utf-8")
        os.utime(path, (1_600_000_000 + files, 1_600_000_000 + files))
        files += 1
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--timestamps", type=int, default=400)
    parser.add_argument("--arcs-per-ts", type=int, default=3)
    parser.add_argument("--max-weight", type=int, default=5)
    parser.add_argument("--bound", type=int, default=20)
    parser.add_argument("--ts-per-file", type=int, default=10)
    parser.add_argument("--files-per-batch", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(RESULTS, "bench_streamlog_spark.json"))
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from srtopo.io.sources import FactLines
    from srtopo.measure import percentile
    from srtopo.runners import RunConfig, SparkOptions, get_runner
    from srtopo.streamlog import parse_program
    from srtopo.streamlog.compile import compile_program

    stream = make_stream(args.nodes, args.timestamps, args.arcs_per_ts, args.max_weight, args.seed)
    lines = arc_lines(stream)
    work = Path(tempfile.mkdtemp(prefix="srtopo-bench-streamlog-spark-"))
    files = write_stream(work / "in", lines, args.ts_per_file)
    text = program_text("pruned", args.bound)
    topology = compile_program(parse_program(text, "shortest-paths.sl"))
    rows = {}
    started = time.perf_counter()
    local = get_runner("local").run(topology, [FactLines(str(work / "in"))], RunConfig())
    rows["local"] = {"seconds": round(local.seconds, 3), "timestamps_per_s": round(args.timestamps / local.seconds, 1),
                     "memory_mb": local.memory_mb, "models": len(local.models)}
    spark = get_runner("spark").run(topology, [FactLines(str(work / "in"), files_per_batch=args.files_per_batch)],
                                    RunConfig(checkpoint=str(work / "ck"),
                                              options=SparkOptions(master=args.master, once=True)))
    batches = [b for b in spark.batches if b.batch != "final"]
    steady = batches[1:] or batches
    steady_s = sum(b.seconds for b in steady)
    steady_ts = len(steady) * args.ts_per_file * args.files_per_batch
    rows["spark"] = {"seconds": round(spark.seconds, 3), "timestamps_per_s": round(args.timestamps / spark.seconds, 1),
                     "steady_timestamps_per_s": round(steady_ts / steady_s, 1) if steady_s else None,
                     "batch_p50_s": round(percentile([b.seconds for b in batches], 0.5), 3),
                     "batch_p95_s": round(percentile([b.seconds for b in batches], 0.95), 3),
                     "batches": len(batches), "memory_mb": spark.memory_mb, "models": len(spark.models)}
    if [(m.time, m.atoms) for m in spark.models] != [(m.time, m.atoms) for m in local.models]:
        raise ExperimentError("Spark's models differ from the local runner's")
    ratio = rows["spark"]["timestamps_per_s"] / rows["local"]["timestamps_per_s"]
    report = {"date": time.strftime("%Y-%m-%d"), "params": vars(args), "files": files, "rows": rows,
              "spark_over_local": round(ratio, 3), "same_models": True,
              "wall_s": round(time.perf_counter() - started, 1)}
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"{'runner':8} {'ts/s':>8} {'steady ts/s':>12} {'batch p50 s':>12} {'p95 s':>7} {'MB':>14} models")
    for name, r in rows.items():
        print(f"{name:8} {r['timestamps_per_s']:8} {str(r.get('steady_timestamps_per_s', '-')):>12} "
              f"{str(r.get('batch_p50_s', '-')):>12} {str(r.get('batch_p95_s', '-')):>7} "
              f"{json.dumps(r['memory_mb']):>14} {r['models']}")
    log(f"spark / local: {ratio:.2f}x; same models; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
