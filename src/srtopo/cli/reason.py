"""``srtopo reason``: run an I-DLV-sr program over a stream with clingo, one JSON line per time point (with
--tbox, over what a DL-Lite TBox keeps and entails of an RDF stream: ``cli.chain``)."""
from __future__ import annotations

import sys

from srtopo.cli import chain, running
from srtopo.cli.compile import add_graph_argument, add_program_arguments, refuse_idle_strategy, rules_topology
from srtopo.cli.parsing import Refused
from srtopo.errors import UsageError
from srtopo.io.sources import AtomLog
from srtopo.ir.run import MAX_GAP
from srtopo.runners.protocol import max_gap, positive


def register(subparsers, parents=()) -> None:
    parser = subparsers.add_parser("reason", help="run an I-DLV-sr program over a stream (clingo)",
                                   description=__doc__.splitlines()[0], allow_abbrev=False, parents=list(parents))
    parser.add_argument("--program", required=True, help="I-DLV-sr program (.idlvsr)")
    parser.add_argument("--stream", "--log", dest="stream", default=None,
                        help="I-DLV-sr log or JSON lines: a file, a directory of such files (spark), '-' for stdin "
                             "(local), or tcp://HOST:PORT")
    parser.add_argument("--port-number", "--port", dest="port", type=int, default=None,
                        help="read the stream from a socket on this port (as I-DLV-sr; same as --stream "
                             "tcp://HOSTNAME:PORT)")
    parser.add_argument("--hostname", default="localhost", help="the socket's host with --port-number "
                                                                  "(default localhost)")
    parser.add_argument("--print-empty", action="store_true",
                        help="also print the time points no record reached (their model is evaluated either way: "
                             "windows count them)")
    parser.add_argument("--also-stream", action="append", default=[], metavar="STREAM",
                        help="another stream, merged with --stream by event time (repeatable)")
    parser.add_argument("--lateness", type=int, default=0,
                        help="allowed lateness in time points: a record more than this behind the latest time point "
                             "of its own stream is rejected as late (default 0: a log line is evaluated on arrival, "
                             "as in I-DLV-sr, and one behind its stream's latest is late)")
    parser.add_argument("--max-gap", type=max_gap, default=MAX_GAP, metavar="N|none",
                        help=f"reject a record more than N time points after the latest of its stream, as a mistyped "
                             f"timestamp would be (default {MAX_GAP}: a day of seconds; 'none' accepts any gap)")
    parser.add_argument("--t-duplicate", dest="duplicates", action="store_true",
                        help="as I-DLV-sr: several log lines may make one time point; it is complete when a line "
                             "ends it with '@end;' or a later time point arrives (default: a line is a time point)")
    parser.add_argument("--files-per-batch", type=positive, default=None,
                        help="spark: at most this many new files of a directory stream per micro-batch")
    add_program_arguments(parser)
    add_graph_argument(parser)
    parser.add_argument("--stream-format", default="detect", choices=("detect", "log", "jsonl", "tnt"),
                        help="log lines, JSON lines, timestamped N-Triples, or detect per line (default)")
    parser.add_argument("--explain", "--print-rewriting", dest="explain", action="store_true",
                        help="print the rules topology (processing order, tau, flat rules per stage: the rewritten "
                             "program) to stderr")
    parser.add_argument("--stats", "--print-reasoning-info", "--print-operators-info", dest="stats",
                        action="store_true",
                        help="after the run, one line per stage on stderr: time points, solver calls, groundings, "
                             "seconds, window rows (I-DLV-sr's reasoning and operators information)")
    parser.add_argument("--print-extended-log", action=Refused,
                        instead="every time point's atoms are one JSON line already; --print-empty adds the time "
                                "points no record reached, --stats the per-stage statistics")
    running.add_runner_arguments(parser, "rules")
    parser.add_argument("--parallelism", dest="partitions", type=positive, default=None,
                        help="as I-DLV-sr: the same as --partitions (spark)")
    chain.add_arguments(parser)
    parser.set_defaults(handler=run)


def _measured(stage) -> str:
    """What the runner measured of a stage (the local runner counts clingo's work, Spark the atoms per stage)."""
    parts = []
    if stage.records_in or stage.outputs:
        parts += [f"{stage.records_in} atoms in", f"{stage.outputs} derived"]
    if stage.solves or stage.groundings:
        parts += [f"{stage.solves} solver calls", f"{stage.groundings} groundings"]
    if stage.window_peak:
        parts.append(f"window rows at most {stage.window_peak}")
    parts.append(f"{stage.tasks} task(s)")
    return ", ".join(parts)


def run(args) -> int:
    if args.stream is None and args.port is None:
        raise UsageError("give the stream: --stream FILE|DIR|-|tcp://HOST:PORT (or --log FILE, or --port-number N)")
    if args.stream is None:
        args.stream = f"tcp://{args.hostname}:{args.port}"
    if args.lateness < 0:
        raise UsageError(f"--lateness must be >= 0, got {args.lateness}")
    if args.tbox:
        return chain.run(args)
    chain.refuse_without_tbox(args)
    topology = rules_topology(args)
    refuse_idle_strategy(args, topology)
    if args.explain:
        print(topology.to_text(), file=sys.stderr)
    runner, config, sink = running.start(args, lateness=args.lateness,
                                         print_empty=args.print_empty, max_gap=args.max_gap, kind="rules")
    sources = [AtomLog(spec, args.stream_format, args.files_per_batch, args.duplicates)
               for spec in [args.stream] + args.also_stream]
    result = runner.run(topology, sources, config, sink)
    running.finish(sink, args.rejected_out)
    c = result.counters
    print(f"srtopo: {c.outputs} models written, {c.records} atoms read, {sink.rejected} rejected records ({c.late} "
          f"late), {c.batches} batches; {result.physical_plan}", file=sys.stderr)
    if args.stats:
        for stage in c.stages:
            print(f"srtopo: stage {stage.stage}: {_measured(stage)}", file=sys.stderr)
    if running.read_nothing_new(result, args.checkpoint):
        return 0
    if not result.counters.outputs and not result.resumed:
        raise running.NothingUsable(f"no usable record in {args.stream} ({sink.rejected} rejected)",
                                    hint="lines are '<timestamp> atom; atom; ...', {\"time\": t, \"atoms\": [...]} or "
                                         "'<time><TAB><s> <p> <o> .'")
    return 0
