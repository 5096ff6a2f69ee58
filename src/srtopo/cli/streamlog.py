"""``srtopo streamlog``: run a Streamlog program (Datalog over timestamped streams) with clingo, one JSON line per
timestamp that has derived facts."""
from __future__ import annotations

import sys

from srtopo import interrupt
from srtopo.cli import engines
from srtopo.cli.engines import NothingUsable
from srtopo.errors import TopologyError
from srtopo.io.sinks import JsonLinesSink, open_text
from srtopo.streamlog import UNIONS, Streamlog, explain, load_program, run_streams


def register(subparsers, parents=()) -> None:
    parser = subparsers.add_parser("streamlog", help="run a Streamlog program over timestamped streams (clingo)",
                                   description=" ".join(__doc__.split()), allow_abbrev=False, parents=list(parents))
    parser.add_argument("--program", required=True, help="Streamlog program (ASP syntax, timestamps first)")
    parser.add_argument("--stream", default=None,
                        help="fact lines 'msg(3,red).' and '#punctuation 7.': a file, a directory of files, '-' "
                             "for stdin, or tcp://host:port")
    parser.add_argument("--also-stream", action="append", default=[], metavar="STREAM",
                        help="another stream, merged with --stream by the union (repeatable)")
    parser.add_argument("--union", choices=UNIONS, default="synchronized",
                        help="how several streams merge: synchronized (default: a timestamp is evaluated once "
                             "every stream passed it by a fact or punctuation), sort-merge (by facts only), plain "
                             "(once one stream passed it; later facts of slower streams are rejected as late)")
    parser.add_argument("--idle", type=_seconds, default=None, metavar="SECONDS",
                        help="punctuate a stream silent for this long at the largest timestamp another stream "
                             "reached (live streams: a quiet sensor does not hold the output back)")
    parser.add_argument("--retain", type=int, default=None, metavar="N",
                        help="keep only the last N timestamps of facts (bounded state for long runs; rules that "
                             "look further back then see less)")
    parser.add_argument("--out", default="-", help="JSON lines {\"time\": t, \"atoms\": [...]}: '-' (default) or "
                                                   "a file")
    parser.add_argument("--rejected-out", default=None,
                        help="rejected lines as JSON lines to this file (default: shown on stderr)")
    parser.add_argument("--explain", action="store_true",
                        help="print the classification of every rule and predicate and the bistate program (to "
                             "stdout without --stream, else to stderr)")
    engines.add_strict_argument(parser)
    parser.set_defaults(handler=run)


def _seconds(text: str) -> float:
    import argparse
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def run(args) -> int:
    program = load_program(args.program)
    if args.explain:
        print(explain(program), file=sys.stderr if args.stream else sys.stdout)
    program.check()
    if args.stream is None:
        if args.explain:
            return 0
        raise TopologyError("give the stream: --stream FILE|DIR|-|tcp://host:port")
    out, out_owned = open_text(args.out, "--out")
    rejected, rejected_owned = open_text(args.rejected_out, "--rejected-out") if args.rejected_out \
        else (None, False)
    specs = [args.stream] + list(args.also_stream)
    sink = JsonLinesSink(out, rejected=rejected, echo=None if rejected else sys.stderr, echo_limit=20,
                         flush=not out_owned, strict=args.fail_on_bad_input)
    engine = Streamlog(program, specs, args.union, args.retain, on_reject=sink.reject)
    try:
        with interrupt.deferred():
            run_streams(engine, specs, sink.emit, idle=args.idle)
    except interrupt.Interrupted as stop:
        c = engine.counters
        stop.note = (f"{c.timestamps} timestamps evaluated, {c.written} written; a Streamlog run keeps no "
                     "checkpoint: run again to start over")
        raise
    finally:
        for handle, owned in ((out, out_owned), (rejected, rejected_owned)):
            if owned:
                handle.close()
    engines.finish(sink, args.rejected_out)
    c = engine.counters
    unused = f" ({', '.join(sorted(c.unused_predicates)[:5])})" if c.unused else ""
    print(f"srtopo: {c.facts} facts, {c.punctuations} punctuations, {c.rejected} rejected, {c.unused} facts of "
          f"predicates the program does not read{unused}; {c.timestamps} timestamps evaluated, {c.written} written",
          file=sys.stderr)
    if c.facts == 0:
        raise NothingUsable(f"no usable fact in {', '.join(specs)} ({c.rejected} rejected lines)",
                            hint="a stream line is a ground fact with its timestamp first: msg(3,red).")
    return 0
