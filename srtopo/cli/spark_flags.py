"""`srtopo check --engine spark`: the Spark engine's flags and entry point.

Wired by ``topology.cli_consistency``: ``add_arguments(parser)`` at parser build time and
``run(args, topology)`` after the topology is compiled. The common flags (--tbox --stream --window
--method --split --stages --balancer --tasks --out --lateness --rejected-out) belong to that module.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile


def add_arguments(parser) -> None:
    g = parser.add_argument_group("spark engine")
    g.add_argument("--master", default=None,
                   help="Spark master URL: local[N] (default local[*]), spark://HOST:PORT, yarn, k8s://...")
    g.add_argument("--checkpoint", default=None,
                   help="checkpoint directory (exactly-once across restarts); default: a temporary one")
    g.add_argument("--once", action="store_true",
                   help="process the input that is there now, close all report times, and stop")
    g.add_argument("--plan", choices=["fused", "staged"], default="fused",
                   help="fused (default): every stage in one keyed pass; staged: one keyed exchange per stage")
    g.add_argument("--out-format", choices=["json", "parquet"], default="json",
                   help="sink format for --out DIR (JSON lines by default)")
    g.add_argument("--trigger", type=float, default=None, help="micro-batch interval in seconds (default: asap)")
    g.add_argument("--max-files-per-trigger", type=int, default=None,
                   help="at most this many new files per micro-batch")
    g.add_argument("--stream-format", choices=["tnt", "tsv", "rdf"], default="tnt",
                   help="--stream holds timestamped N-Triples (default), tab-separated tuples, or RDF files "
                        "(any rdflib format, one timestamped graph per file)")
    g.add_argument("--also-stream", action="append", default=[], metavar="SPEC",
                   help="another source merged by event time (repeatable): DIR, tnt:DIR, tsv:DIR, rdf:DIR, "
                        "rdf[turtle]:DIR, socket:HOST:PORT")
    g.add_argument("--metrics-out", default=None, help="append per-batch metrics here as JSON lines")
    g.add_argument("--shuffle-partitions", type=int, default=None,
                   help="spark.sql.shuffle.partitions (default 4 on a fresh session)")


def _sources(args):
    from srtopo.topology.spark.sources import source_from_spec
    spec = args.stream
    if ":" not in spec.split("/", 1)[0] or spec.startswith("/"):
        spec = {"tnt": "", "tsv": "tsv:", "rdf": "rdf:"}[args.stream_format] + spec
    specs = [spec] + list(args.also_stream or [])
    return [source_from_spec(s, args.max_files_per_trigger) for s in specs]


def run(args, topology) -> int:
    from srtopo.cli.consistency import parse_window
    from srtopo.topology.spark.runner import SparkConsistencyRunner, print_json_lines
    from srtopo.topology.spark.session import get_session

    window = parse_window(args.window)
    lateness = args.lateness
    if lateness is None and not args.once:
        lateness = 0
        print("srtopo: streaming without --lateness: using 0 (out-of-order tuples behind the watermark are "
              "rejected as late)", file=sys.stderr)
    for spec in [args.stream]:
        if ":" not in spec.split("/", 1)[0] and not os.path.exists(spec):
            from srtopo.errors import StreamInputError
            raise StreamInputError(f"stream not found: {spec}", hint="give a file or a directory of .tnt files")
    spark = get_session(master=args.master, shuffle_partitions=args.shuffle_partitions)
    runner = SparkConsistencyRunner(topology, window, lateness=lateness, plan=args.plan, spark=spark)
    to_stdout = args.out in (None, "", "-")
    temp_dirs = []
    checkpoint = args.checkpoint
    if checkpoint is None:
        checkpoint = tempfile.mkdtemp(prefix="srtopo-ckpt-")
        temp_dirs.append(checkpoint)
    out = None if to_stdout else args.out
    if to_stdout and args.once:
        out = os.path.join(checkpoint, "stdout-sink") if "://" not in checkpoint else checkpoint + "/stdout-sink"
    sources = _sources(args)
    try:
        runner.start(sources, out=out, out_format=args.out_format, checkpoint=checkpoint,
                     rejected_out=args.rejected_out, trigger=args.trigger, once=args.once,
                     console=to_stdout and not args.once)
        try:
            runner.await_query()
        except KeyboardInterrupt:
            runner.stop()
        if args.once:
            runner.finish()
        if args.metrics_out:
            with open(args.metrics_out, "a", encoding="utf-8") as handle:
                for record in runner.batch_metrics:
                    handle.write(json.dumps(record) + "\n")
        reports = None
        if args.once and to_stdout:
            reports = print_json_lines(runner.iter_reports())
        elif out:
            reports = runner.reports().count()
        totals = runner.summary()
        if not args.rejected_out and totals["malformed"] + totals["late"]:
            for row in runner.rejected().limit(20).collect():
                print(f"srtopo: rejected {row['source']}:{row['line']}: {row['reason']}", file=sys.stderr)
        print(f"srtopo: {totals['tuples']} tuples, {reports if reports is not None else '?'} reports, "
              f"{totals['malformed']} malformed, {totals['late']} late, {totals['batches']} batches, "
              f"plan {topology.plan} ({args.plan}), master {spark.sparkContext.master}", file=sys.stderr)
        return 0
    finally:
        runner.stop()
        for d in temp_dirs:
            shutil.rmtree(d, ignore_errors=True)
