"""Every ICLP2021 input on Spark against the local runner: the differential campaign too long for the test suite
(the suite runs a slice of it: Content Caching 50, Heavy Join 50 and Photo-voltaic 20x20).

    python -m experiments.check_rules_iclp                    # every input, Spark local[2]
    python -m experiments.check_rules_iclp --inputs hj-500-w20,pv-30x30 --master local[1]

Each input's log is read whole by both runners (Spark: one micro-batch of one file, ``--once``), and the models
of every time point must be equal; the script exits non-zero on the first difference. Results:
``results/check_rules_iclp.json`` (per input: time points, atoms out, seconds per runner, equal or not).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from experiments.bench_rules_paced import DATA, INPUTS
from experiments.common import first_log, log, models_digest, progress


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", default="all", help="comma-separated: " + ", ".join(INPUTS) + " or all")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "check_rules_iclp.json"))
    args = parser.parse_args(argv)
    from srtopo.io.sources import AtomLog
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner
    from srtopo.runners.spark.session import get_session
    names = list(INPUTS) if args.inputs == "all" else args.inputs.split(",")
    missing = [n for n in names if n not in INPUTS or not (DATA / INPUTS[n][0]).exists()]
    if missing:
        log(f"unknown or absent inputs: {', '.join(missing)} (the ICLP2021 data lives in ../shared/data)")
        return 2
    runner = SparkRunner(get_session(master=args.master, shuffle_partitions=args.partitions))
    rows, failed = [], []
    for name in progress(names, desc="ICLP2021 inputs"):
        topology = compile_program(parse_file(str(DATA / INPUTS[name][0])))
        source = AtomLog(first_log(DATA / INPUTS[name][1]))
        started = time.perf_counter()
        local = [m.to_dict() for m in LocalRunner().run(topology, [source], RunConfig(lateness=0)).models]
        local_s = time.perf_counter() - started
        started = time.perf_counter()
        spark = [m.to_dict() for m in runner.run(topology, [source], RunConfig(
            lateness=0, options=SparkOptions(partitions=args.partitions))).models]
        spark_s = time.perf_counter() - started
        equal = spark == local
        rows.append({"input": name, "time_points": len(local), "atoms_out": sum(len(m["atoms"]) for m in local),
                     "keyed_stages": sum(1 for s in topology.stages if s.key.keyed), "stages": len(topology.stages),
                     "local_s": round(local_s, 3), "spark_s": round(spark_s, 3), "equal": equal,
                     "digest": models_digest(local)})
        if not equal:
            failed.append(name)
            log(f"{name}: Spark's models differ from the local runner's")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump({"date": time.strftime("%Y-%m-%d"), "master": args.master, "partitions": args.partitions,
                   "rows": rows}, handle, indent=1)
    for r in rows:
        print(f"{r['input']:22} {r['time_points']:4d} tps {r['atoms_out']:8d} atoms  local {r['local_s']:7.2f} s  "
              f"spark {r['spark_s']:7.2f} s  {'equal' if r['equal'] else 'DIFFERENT'}")
    print(f"{len(rows) - len(failed)} of {len(rows)} inputs equal")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
