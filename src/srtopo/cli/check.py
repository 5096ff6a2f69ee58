"""``srtopo check``: check a timestamped N-Triples (or tuple, or RDF) stream against a DL-Lite TBox."""
from __future__ import annotations

import sys

from srtopo.cli import running
from srtopo.cli.compile import NO_NI, add_topology_arguments, consistency_topology, loader_text
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
    parser.add_argument("--topology", metavar="T.json",
                        help="run this consistency topology (as srtopo compile --format json writes it, or declared "
                             "by hand) instead of choosing one; it must detect every pair of the NI closure of --tbox")
    parser.add_argument("--partial", action="store_true",
                        help="with --topology: run it even if some pairs of the NI closure are checked by no stage "
                             "(the summary says how many)")
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


#: the options that choose a topology, idle when --topology gives one
CHOOSING = ("method", "split", "stages", "balancer", "tasks")


def given_topology(args):
    """(tbox, analysis, topology) of --topology, checked against the NI closure of --tbox
    (``consistency.coverage``)."""
    from srtopo.consistency.coverage import check_coverage
    from srtopo.consistency.nis import analyse
    from srtopo.consistency.owl import load_tbox
    from srtopo.errors import TopologyError
    from srtopo.ir.topology import load_topology
    path = args.topology
    tbox = load_tbox(args.tbox)
    analysis = analyse(tbox)
    try:
        topology = load_topology(path)
        if topology.kind != "consistency":
            raise TopologyError(f"a {topology.kind} topology, not a consistency one",
                                hint="give the JSON of srtopo compile --tbox ... --format json")
        return tbox, analysis, check_coverage(topology.validate(), analysis, partial=args.partial)
    except TopologyError as error:
        if error.file is not None:
            raise
        raise TopologyError(error.message, file=path, hint=error.hint) from None


def run(args) -> int:
    from srtopo.errors import UsageError
    window = running.parse_window(args.window)
    given = getattr(args, "given", {})
    if args.topology:
        idle = [given[dest] for dest in CHOOSING if dest in given]
        if idle:
            raise UsageError(f"{idle[0]} chooses a topology: it does nothing with --topology",
                             hint=f"leave {idle[0]} out, or drop --topology to have one chosen")
        tbox, analysis, topology = given_topology(args)
    elif args.partial:
        raise UsageError("--partial accepts a partial topology given by --topology",
                         hint="add --topology T.json, or leave --partial out")
    else:
        tbox, analysis, topology = consistency_topology(args)
    if args.verbose:
        print(loader_text(tbox, analysis, verbose=True), file=sys.stderr)
    elif not analysis.roots:
        print(f"srtopo: note: {args.tbox} states no disjointness (no NI): {NO_NI}", file=sys.stderr)
    sources = [source_from_spec(spec, args.files_per_batch, args.stream_format if i == 0 else "tnt")
               for i, spec in enumerate([args.stream] + list(args.also_stream))]
    runner, config, sink = running.start(args, window, args.lateness, kind="consistency")
    result = runner.run(topology, sources, config, sink)
    running.finish(sink, args.rejected_out)
    c = result.counters
    print(f"srtopo: {c.records} tuples, {c.outputs} reports, {c.malformed} malformed, {c.late} late, "
          f"{c.irrelevant} irrelevant, {c.batches} batches, topology {topology.label}; {result.physical_plan}"
          + (f"; {result.partial}" if result.partial else ""), file=sys.stderr)
    if running.read_nothing_new(result, args.checkpoint):
        return 0
    if c.records == 0 and not result.resumed:
        raise running.NothingUsable(f"no usable tuple in {args.stream} ({c.malformed} rejected records)",
                                    hint=FORMAT_HINTS[args.stream_format])
    return 0
