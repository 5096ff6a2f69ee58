"""``srtopo streamlog``: run a Streamlog program (Datalog over timestamped streams) with clingo, one JSON line per
timestamp that has derived facts."""
from __future__ import annotations

import sys

from srtopo.cli import running
from srtopo.cli.running import NothingUsable
from srtopo.errors import UsageError
from srtopo.io.sources import FactLines
from srtopo.ir.run import MAX_GAP
from srtopo.runners.protocol import max_gap, positive
from srtopo.streamlog import UNIONS, explain, load_program
from srtopo.streamlog.compile import compile_program


def register(subparsers, parents=()) -> None:
    parser = subparsers.add_parser("streamlog", help="run a Streamlog program over timestamped streams (clingo)",
                                   description=" ".join(__doc__.split()), allow_abbrev=False, parents=list(parents))
    parser.add_argument("--program", required=True, help="Streamlog program (ASP syntax, timestamps first)")
    parser.add_argument("--stream", default=None,
                        help="fact lines 'msg(3,red).' and '#punctuation 7.': a file, a directory of files, '-' "
                             "for stdin, or tcp://HOST:PORT")
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
    parser.add_argument("--max-gap", type=max_gap, default=MAX_GAP, metavar="N|none",
                        help=f"reject a fact more than N timestamps after the latest of its stream, as a mistyped "
                             f"timestamp would be (default {MAX_GAP}; 'none' accepts any gap)")
    parser.add_argument("--files-per-batch", type=positive, default=None,
                        help="spark: at most this many new files of a directory per micro-batch (the batch size)")
    parser.add_argument("--explain", action="store_true",
                        help="print the classification of every rule and predicate and the bistate program (to "
                             "stdout without --stream, else to stderr)")
    running.add_runner_arguments(parser, "streamlog")
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


def _program(path: str):
    """The Streamlog program at ``path``; an I-DLV-sr program (by its ``.idlvsr`` suffix, or a file of the rules
    kind's suffixes that Streamlog cannot parse) is refused saying which command runs it."""
    from srtopo.errors import ProgramError
    from srtopo.kinds import KINDS
    lowered = path.lower()
    rules = KINDS["rules"]
    refused = UsageError(f"{path} is an I-DLV-sr program, not a Streamlog one",
                         hint="run it with srtopo reason --program; srtopo compile --program prints its topology")
    if lowered.endswith(rules.program_suffixes[0]):
        raise refused
    try:
        return load_program(path)
    except ProgramError:
        if any(lowered.endswith(s) for s in rules.program_suffixes) and _reads_as_idlvsr(path):
            raise refused from None
        raise


def _reads_as_idlvsr(path: str) -> bool:
    from srtopo.errors import SrtopoError
    from srtopo.rules.parse import parse_file
    try:
        parse_file(path)
    except SrtopoError:
        return False
    return True


def run(args) -> int:
    program = _program(args.program)
    if args.explain:
        print(explain(program), file=sys.stderr if args.stream else sys.stdout)
    program.check()
    if args.stream is None:
        if args.explain:
            return 0
        raise UsageError("give the stream: --stream FILE|DIR|-|tcp://HOST:PORT")
    topology = compile_program(program, union=args.union, retain=args.retain)
    runner, config, sink = running.start(args, max_gap=args.max_gap, kind="streamlog")
    specs = [args.stream] + list(args.also_stream)
    result = runner.run(topology, [FactLines(spec, args.idle, args.files_per_batch) for spec in specs], config, sink)
    running.finish(sink, args.rejected_out)
    c = result.counters
    unread = c.extra.get("unused_predicates", [])
    unused = f" ({', '.join(unread[:5])})" if unread else ""
    print(f"srtopo: {c.records} facts, {c.extra.get('punctuations', 0)} punctuations, {c.malformed} rejected, "
          f"{c.irrelevant} facts of predicates the program does not read{unused}; "
          f"{c.extra.get('timestamps', 0)} timestamps evaluated, "
          f"{c.outputs} written", file=sys.stderr)
    if running.read_nothing_new(result, args.checkpoint):
        return 0
    if c.records == 0 and not result.resumed:
        raise NothingUsable(f"no usable fact in {', '.join(specs)} ({c.malformed} rejected lines)",
                            hint="a stream line is a ground fact with its timestamp first: msg(3,red).")
    return 0
