"""Every ICLP2021 input on Spark against the local runner: the differential campaign too long for the test suite
(the suite runs a slice of it: Content Caching 50, Heavy Join 50 and Photo-voltaic 20x20).

    python -m experiments.check_rules_iclp                    # every input, Spark local[2]
    python -m experiments.check_rules_iclp --inputs hj-500-w20,pv-30x30 --master local[1]

Each input's log is read whole by both runners (Spark: one micro-batch of one file, ``--once``), and the models
of every time point must be equal; the script exits non-zero on the first difference. Results:
``results/check_rules_iclp.json`` (per input: time points, atoms out, seconds per runner, equal or not).
"""
from __future__ import annotations

from experiments.common import (
    ICLP, ICLP_INPUTS, arguments, first_log, iclp_names, log, models_digest, progress, timed, write_json)


def main(argv=None) -> int:
    parser = arguments(__doc__, inputs=("all", "comma-separated: " + ", ".join(ICLP_INPUTS) + " or all"),
                       master="local[2]", partitions=2, out="check_rules_iclp.json")
    args = parser.parse_args(argv)
    from srtopo.io.sources import AtomLog
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner
    from srtopo.runners.spark.session import get_session
    names = iclp_names(args.inputs, parser)
    runner = SparkRunner(get_session(master=args.master, shuffle_partitions=args.partitions))
    rows, failed = [], []
    for name in progress(names, desc="ICLP2021 inputs"):
        program, stream = (f"{ICLP}/{path}" for path in ICLP_INPUTS[name])
        topology = compile_program(parse_file(program))
        source = AtomLog(first_log(stream))
        local, local_s = timed(LocalRunner().run, topology, [source], RunConfig(lateness=0))
        spark, spark_s = timed(runner.run, topology, [source],
                               RunConfig(lateness=0, options=SparkOptions(partitions=args.partitions)))
        local, spark = [m.to_dict() for m in local.models], [m.to_dict() for m in spark.models]
        rows.append({"input": name, "time_points": len(local), "atoms_out": sum(len(m["atoms"]) for m in local),
                     "keyed_stages": sum(1 for s in topology.stages if s.key.keyed), "stages": len(topology.stages),
                     "local_s": round(local_s, 3), "spark_s": round(spark_s, 3), "equal": spark == local,
                     "digest": models_digest(local)})
        if spark != local:
            failed.append(name)
            log(f"{name}: Spark's models differ from the local runner's")
    write_json(args.out, {"master": args.master, "partitions": args.partitions, "rows": rows})
    for r in rows:
        print(f"{r['input']:22} {r['time_points']:4d} tps {r['atoms_out']:8d} atoms  local {r['local_s']:7.2f} s  "
              f"spark {r['spark_s']:7.2f} s  {'equal' if r['equal'] else 'DIFFERENT'}")
    print(f"{len(rows) - len(failed)} of {len(rows)} inputs equal")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
