"""``srtopo check``: check a timestamped N-Triples (or tuple, or RDF) stream against a DL-Lite TBox."""
from __future__ import annotations

import sys

from srtopo.cli import running
from srtopo.cli.compile import add_topology_arguments, consistency_topology
from srtopo.io.sources import STREAM_FORMATS, source_from_spec
from srtopo.runners.protocol import positive


def register(subparsers, parents=()) -> None:
    parser = subparsers.add_parser("check", help="check a timestamped N-Triples stream against a TBox",
                                   description=__doc__.splitlines()[0], allow_abbrev=False, parents=list(parents))
    add_topology_arguments(parser)
    parser.add_argument("--stream", required=True, help=".tnt file, directory of .tnt files, '-' for standard input "
                                                        "(local), or tcp://HOST:PORT (or see --stream-format, "
                                                        "--also-stream)")
    parser.add_argument("--stream-format", choices=STREAM_FORMATS, default="tnt",
                        help="--stream holds timestamped N-Triples (default), tab-separated tuples, or RDF files "
                             "(any rdflib format, one timestamped graph per file)")
    parser.add_argument("--also-stream", action="append", default=[], metavar="SPEC",
                        help="another source merged by event time (repeatable): DIR, tnt:DIR, tsv:DIR, rdf:DIR, "
                             "rdf[turtle]:DIR, tcp://HOST:PORT")
    parser.add_argument("--files-per-batch", type=positive, default=None,
                        help="at most this many new files per micro-batch (the batch size)")
    parser.add_argument("--window", required=True, help="window size in time units, or 'unbounded'")
    parser.add_argument("--lateness", type=int, default=None,
                        help="allowed lateness in time units: a tuple more than this behind the latest of its own "
                             "source, or below its '# watermark T', is rejected as late (default: unbounded, exact "
                             "on any order; a streaming spark query uses 0)")
    running.add_runner_arguments(parser, "consistency")
    parser.set_defaults(handler=run)


FORMAT_HINTS = {"tnt": "is it timestamped N-Triples: '<time><TAB><s> <p> <o> .' per line?",
                "tsv": "is it tab-separated tuples: '<time><TAB><subject><TAB><concept>' per line?",
                "rdf": "is it RDF files, each a graph with a time (prov:generatedAtTime or a number in its name)?"}


def run(args) -> int:
    window = running.parse_window(args.window)
    _tbox, _analysis, topology = consistency_topology(args)
    sources = [source_from_spec(spec, args.files_per_batch, args.stream_format if i == 0 else "tnt")
               for i, spec in enumerate([args.stream] + list(args.also_stream))]
    runner, config, sink = running.start(args, window, args.lateness, kind="consistency")
    result = runner.run(topology, sources, config, sink)
    running.finish(sink, args.rejected_out)
    c = result.counters
    print(f"srtopo: {c.records} tuples, {c.outputs} reports, {c.malformed} malformed, {c.late} late, "
          f"{c.irrelevant} irrelevant, {c.batches} batches, topology {topology.label}; {result.physical_plan}",
          file=sys.stderr)
    if running.read_nothing_new(result, args.checkpoint):
        return 0
    if c.records == 0 and not result.resumed:
        raise running.NothingUsable(f"no usable tuple in {args.stream} ({c.malformed} rejected records)",
                                    hint=FORMAT_HINTS[args.stream_format])
    return 0
