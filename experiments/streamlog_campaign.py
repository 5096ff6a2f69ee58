"""Streamlog on every runner against the whole-stream oracle: random sequential programs and the slides' examples,
on the local runner and on Spark. experiments/README.md, "What each benchmark measures", says how."""
from __future__ import annotations

import os
import sys
import time

from experiments.common import ROOT, arguments, log, progress, write_json


def main(argv=None) -> int:
    args = arguments(__doc__, programs=(120, "random programs (seeds 0..N-1)"), master="local[2]",
                     out="streamlog_campaign.json").parse_args(argv)
    sys.path.insert(0, ROOT)        # the oracle and the generator are the test suite's
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from srtopo.runners import SparkOptions, get_runner
    from srtopo.runners.local import LocalOptions
    from srtopo.runners.spark.session import get_session
    from srtopo.streamlog import parse_program
    from srtopo.streamlog.compile import compile_program
    from srtopo.streamlog.partition import keyed
    from srtopo.testing import run_topology
    from tests.runners.test_streamlog import per_source
    from tests.streamlog.test_differential import EXAMPLES, first_difference, oracle, random_case

    get_session(master=args.master, app_name="srtopo-streamlog-campaign", shuffle_partitions=2)
    runners = {"local": (get_runner("local"), LocalOptions()), "spark": (get_runner("spark"), SparkOptions())}
    #: a keyed case runs on Spark in two and in three key partitions (one run each, in place of the default)
    keyed_runners = {"local": runners["local"], "spark[2]": (get_runner("spark"), SparkOptions(partitions=2)),
                     "spark[3]": (get_runner("spark"), SparkOptions(partitions=3))}
    cases = []
    for seed in range(args.programs):
        text, _features, feeds = random_case(seed)
        for nsources, feed in enumerate(feeds, start=1):
            cases.append((f"seed {seed}, {nsources} source(s)", text, None, feed, nsources, 1 + seed % 3))
    for name, (text, oracle_text, make_feed, nsources) in EXAMPLES.items():
        for seed in range(3):
            cases.append((f"{name}, seed {seed}", text, oracle_text, make_feed(seed), nsources, 2))
    failures, seconds = [], {name: 0.0 for name in {**runners, **keyed_runners}}
    counts = {"keyed": 0, "unkeyed": 0, "runs": 0}
    started = time.perf_counter()
    for where, text, oracle_text, feed, nsources, batches in progress(cases, desc="streamlog cases"):
        expected = oracle(oracle_text or text, [x for _s, _n, x in feed if not x.startswith("#")])
        program = parse_program(text, "case.sl")
        topology = compile_program(program)
        split = keyed(program, topology.stages[0].key, topology.source.union, None)
        counts["keyed" if split else "unkeyed"] += 1
        for name, (runner, options) in (keyed_runners if split else runners).items():
            counts["runs"] += 1
            t0 = time.perf_counter()
            result = run_topology(runner, topology, per_source(feed, nsources, batches), options=options)
            seconds[name] += time.perf_counter() - t0
            got = [(m.time, m.atoms) for m in result.models]
            if name != "local" and split and result.counters.stages[0].tasks != options.partitions:
                failures.append({"case": where, "runner": name, "difference": "not run in key partitions"})
            if got != expected or result.rejected:
                failures.append({"case": where, "runner": name, "difference": first_difference(got, expected),
                                 "rejected": [str(r) for r in result.rejected][:5]})
                log(f"FAILED {where} on {name}: {failures[-1]['difference']}")
    report = {"master": args.master, "programs": args.programs,
              "cases": len(cases), "keyed_cases": counts["keyed"], "unkeyed_cases": counts["unkeyed"],
              "runs": counts["runs"], "failures": failures,
              "seconds": {k: round(v, 1) for k, v in seconds.items()},
              "wall_s": round(time.perf_counter() - started, 1)}
    write_json(args.out, report)
    log(f"{len(cases)} cases ({counts['keyed']} keyed: on Spark in 2 and in 3 key partitions; {counts['unkeyed']} "
        f"not split: on Spark in one), {counts['runs']} runs: {len(failures)} differences from the oracle "
        f"({', '.join(f'{k} {v:.0f} s' for k, v in seconds.items())}); written to {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
