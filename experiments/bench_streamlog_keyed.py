"""A keyed Streamlog program on the local runner, Spark local[1] and Spark local[2], in one run: per-sensor
moving sums over a stream of readings from thousands of sensors, evaluated on Spark in key partitions (one task
per partition and micro-batch, ``runners/spark/streamlog.py``).

Every sensor reads a value at every timestamp; the program keeps, per sensor, the sum of its last ``--window``
readings and flags the sensors whose sum is high or whose reading is a new maximum of the window, so each
timestamp costs grounding ``sensors x window`` readings. The stream is a directory of files of ``--ts-per-file``
timestamps; Spark reads ``--files-per-batch`` files per micro-batch. Each configuration runs in its own child
process (a SparkSession's master is fixed for its process). All three must write the same models, or the run
fails.

Reported per configuration: throughput (timestamps/s and facts/s, over the whole run and over the batches after
the first), batch latency p50/p95, resident memory; and the ratios local[2]/local[1] and Spark/local, with the
machine's load average when the run started and ended. Results: experiments/results/bench_streamlog_keyed.json.

    python -m experiments.bench_streamlog_keyed --sensors 3000 --timestamps 300
"""
from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

from experiments.bench_streamlog_spark import figures, run_streamlog
from experiments.common import (
    ExperimentError, arguments, command, in_own_process, log, steady_rate, text_table, write_json, write_parts)

CONFIGS = ("local", "local[1]", "local[2]")


def program_text(window: int, threshold: int) -> str:
    return (f"total(T,S,A) :- reading(T,S,_), A = #sum{{ V,T0 : reading(T0,S,V), T - {window} < T0, T0 <= T }}.\n"
            f"high(T,S,A) :- total(T,S,A), A > {threshold}.\n"
            f"peak(T,S,V) :- reading(T,S,V), V > 90, "
            f"#count{{ T0 : reading(T0,S,V0), T - {window} < T0, T0 < T, V0 >= V }} = 0.\n"
            "#show high/3.\n#show peak/3.\n")


def write_stream(folder: Path, sensors: int, timestamps: int, per_file: int, seed: int) -> int:
    """A reading per sensor and timestamp, ``per_file`` timestamps a file (listed in order); returns the files."""
    rng = random.Random(seed)
    return len(write_parts(folder, ([f"reading({t},s{s},{rng.randint(0, 99)})."
                                     for t in range(start, min(start + per_file, timestamps + 1))
                                     for s in range(sensors)] for start in range(1, timestamps + 1, per_file))))


def child(config: str, work: str, params: dict) -> dict:
    """One configuration, in a process of its own (a SparkSession's master is fixed for its process)."""
    from srtopo.streamlog import parse_program
    from srtopo.streamlog.compile import compile_program
    topology = compile_program(parse_program(program_text(params["window"], params["threshold"]), "sensors.sl"),
                               retain=params["window"])
    master = None if config == "local" else config
    result, batches = run_streamlog(topology, Path(work, "in"), master, params["files_per_batch"],
                                    Path(work, f"ck-{config}"))
    def timestamps(batch) -> int:
        return batch.detail.get("extra", {}).get("timestamps", 0)
    row = figures(result, batches, params["timestamps"], None if master is None else timestamps)
    row.update(facts_per_s=round(params["sensors"] * params["timestamps"] / result.seconds),
               atoms=sum(len(m.atoms) for m in result.models))
    if master is not None:
        facts = steady_rate(batches, lambda b: timestamps(b) * params["sensors"])
        row.update(tasks=result.counters.stages[0].tasks, steady_facts_per_s=round(facts) if facts else None)
    return row


COLUMNS = ["config", "timestamps_per_s", "facts_per_s", "steady_timestamps_per_s", "batch_p50_s", "batch_p95_s",
           "tasks", "load_after", "memory_mb"]


def main(argv=None) -> int:
    args = arguments(__doc__, sensors=3000, timestamps=300, window=8, threshold=700, ts_per_file=5, files_per_batch=4,
                     seed=1, out="bench_streamlog_keyed.json").parse_args(argv)
    params = {k: v for k, v in vars(args).items() if k != "out"}
    work = tempfile.mkdtemp(prefix="srtopo-bench-streamlog-keyed-")
    files = write_stream(Path(work, "in"), args.sensors, args.timestamps, args.ts_per_file, args.seed)
    load_before = os.getloadavg()
    started = time.perf_counter()
    rows = {}
    for config in CONFIGS:
        rows[config] = dict(in_own_process(child, config=config, work=work, params=params),
                            load_after=round(os.getloadavg()[0], 2))
        log(f"{config}: {rows[config]['seconds']} s")
    if len({r["digest"] for r in rows.values()}) != 1:
        raise ExperimentError("the configurations wrote different models: " +
                              ", ".join(f"{k} {r['models']} models {r['digest'][:12]}" for k, r in rows.items()))

    def ratio(a, b, field):
        return round(rows[a][field] / rows[b][field], 3) if rows[a].get(field) and rows[b].get(field) else None
    ratios = {"local2_over_local1": ratio("local[2]", "local[1]", "timestamps_per_s"),
              "local2_over_local1_steady": ratio("local[2]", "local[1]", "steady_timestamps_per_s"),
              "local1_over_local": ratio("local[1]", "local", "timestamps_per_s"),
              "local2_over_local": ratio("local[2]", "local", "timestamps_per_s")}
    report = {"params": vars(args), "files": files, "facts": args.sensors * args.timestamps, "cpus": os.cpu_count(),
              "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
              "rows": rows, "ratios": ratios, "same_models": True, "wall_s": round(time.perf_counter() - started, 1)}
    write_json(args.out, report)
    print(text_table(COLUMNS, [[name] + [r.get(c) for c in COLUMNS[1:]] for name, r in rows.items()]))
    log(f"ratios {ratios}; load {report['load_before'][0]} before, {report['load_after'][0]} after; same models; "
        f"written to {args.out}")
    return 0


if __name__ == "__main__":
    command(main)
