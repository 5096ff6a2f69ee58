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

import os
import sys
import tempfile
import time
from pathlib import Path

from experiments.bench_streamlog import arc_lines, make_stream, program_text
from experiments.common import (
    ExperimentError, arguments, command, log, models_digest, stats, steady_rate, text_table, write_json, write_parts)


def write_stream(folder: Path, lines: list[list[str]], per_file: int) -> int:
    """The arcs' lines, ``per_file`` timestamps a file, each file ending with punctuation past its last one."""
    parts = [[line for ts in lines[start:start + per_file] for line in ts]
             + [f"#punctuation {min(start + per_file, len(lines)) + 1}."] for start in range(0, len(lines), per_file)]
    return len(write_parts(folder, parts))


def run_streamlog(topology, folder, master: str | None = None, files_per_batch: int = 1, checkpoint=None):
    """The topology over the stream files of ``folder``: on the local runner (no ``master``), which reads the lines
    as they come, or on Spark (``--once``, ``files_per_batch`` files a micro-batch); the run's result and its
    micro-batches (the final one left out)."""
    from srtopo.io.sources import FactLines
    from srtopo.runners import RunConfig, SparkOptions, get_runner
    if master is None:
        result = get_runner("local").run(topology, [FactLines(str(folder))], RunConfig())
    else:
        result = get_runner("spark").run(topology, [FactLines(str(folder), files_per_batch=files_per_batch)],
                                         RunConfig(checkpoint=str(checkpoint),
                                                   options=SparkOptions(master=master, once=True)))
    return result, [b for b in result.batches if b.batch != "final"]


def figures(result, batches, timestamps: int, steady_count=None) -> dict:
    """What a run's table shows: its seconds and timestamps/s, and on Spark (``steady_count``: the timestamps of a
    micro-batch) the rate over the batches after the first and the batches' p50 / p95."""
    row = {"seconds": round(result.seconds, 3), "timestamps_per_s": round(timestamps / result.seconds, 1),
           "memory_mb": result.memory_mb, "models": len(result.models),
           "digest": models_digest([(m.time, list(m.atoms)) for m in result.models])}
    if steady_count is not None:
        steady = steady_rate(batches, steady_count)
        row.update(steady_timestamps_per_s=round(steady, 1) if steady else None, batches=len(batches),
                   **stats([b.seconds for b in batches], "batch_{}_s", digits=3))
    return row


COLUMNS = ["runner", "timestamps_per_s", "steady_timestamps_per_s", "batch_p50_s", "batch_p95_s", "memory_mb",
           "models"]


def main(argv=None) -> int:
    args = arguments(__doc__, nodes=300, timestamps=400, arcs_per_ts=3, max_weight=5, bound=20, ts_per_file=10,
                     files_per_batch=2, master="local[2]", seed=1, out="bench_streamlog_spark.json").parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from srtopo.streamlog import parse_program
    from srtopo.streamlog.compile import compile_program

    work = Path(tempfile.mkdtemp(prefix="srtopo-bench-streamlog-spark-"))
    files = write_stream(work / "in", arc_lines(make_stream(args.nodes, args.timestamps, args.arcs_per_ts,
                                                             args.max_weight, args.seed)), args.ts_per_file)
    topology = compile_program(parse_program(program_text("pruned", args.bound), "shortest-paths.sl"))
    started = time.perf_counter()
    rows = {"local": figures(*run_streamlog(topology, work / "in"), args.timestamps),
            "spark": figures(*run_streamlog(topology, work / "in", args.master, args.files_per_batch, work / "ck"),
                             args.timestamps, lambda _b: args.ts_per_file * args.files_per_batch)}
    if rows["spark"]["digest"] != rows["local"]["digest"]:
        raise ExperimentError("Spark's models differ from the local runner's")
    ratio = rows["spark"]["timestamps_per_s"] / rows["local"]["timestamps_per_s"]
    write_json(args.out, {"params": vars(args), "files": files, "rows": rows, "spark_over_local": round(ratio, 3),
                          "same_models": True, "wall_s": round(time.perf_counter() - started, 1)})
    print(text_table(COLUMNS, [[name] + [r.get(c) for c in COLUMNS[1:]] for name, r in rows.items()]))
    log(f"spark / local: {ratio:.2f}x; same models; written to {args.out}")
    return 0


if __name__ == "__main__":
    command(main)
