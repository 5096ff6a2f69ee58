"""``srtopo reason``: run an I-DLV-sr program over a stream with clingo, one JSON line per time point."""
from __future__ import annotations

import sys

from srtopo.cli import engines
from srtopo.cli.compile import add_program_arguments, rules_topology
from srtopo.topology.sources import AtomLog


def register(subparsers) -> None:
    parser = subparsers.add_parser("reason", help="run an I-DLV-sr program over a stream (clingo)",
                                   description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--program", required=True, help="I-DLV-sr program (.idlvsr)")
    parser.add_argument("--stream", required=True,
                        help="I-DLV-sr log or JSON lines: a file, '-' for stdin, or tcp://host:port")
    add_program_arguments(parser)
    parser.add_argument("--stream-format", default="detect", choices=("detect", "log", "jsonl"),
                        help="log lines, JSON lines, or detect per line (default)")
    parser.add_argument("--explain", action="store_true",
                        help="print the rules topology (processing order, tau, flat rules per stage) to stderr")
    engines.add_engine_arguments(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    topology = rules_topology(args)
    if args.explain:
        print(topology.to_text(), file=sys.stderr)
    runner, config, sink = engines.start(args, echo_every_rejected=True)   # a log's rejected lines are all shown
    result = runner.run(topology, [AtomLog(args.stream, args.stream_format)], config, sink)
    engines.finish(sink)
    if sink.rejected:
        print(f"srtopo: {sink.rejected} stream record(s) rejected", file=sys.stderr)
    if not result.counters.outputs:
        raise engines.NothingUsable(f"no usable record in {args.stream} ({sink.rejected} rejected)",
                                    hint="lines are '<timestamp> atom; atom; ...' or {\"time\": t, \"atoms\": [...]}")
    return 0
