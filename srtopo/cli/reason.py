"""``srtopo reason``: run an I-DLV-sr program over a stream with clingo, JSON lines out."""
from __future__ import annotations

import sys
from contextlib import ExitStack

from srtopo.errors import StreamInputError


def register(subparsers) -> None:
    parser = subparsers.add_parser("reason", help="run an I-DLV-sr program over a stream (clingo)",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("--program", required=True, help="I-DLV-sr program (.idlvsr)")
    parser.add_argument("--stream", required=True,
                        help="I-DLV-sr log or JSON lines: a file, '-' for stdin, or tcp://host:port")
    parser.add_argument("--unit", default="sec", help="time unit of a time point (ms, sec, min, hour)")
    parser.add_argument("--strategy", default="auto", choices=("auto", "incremental", "restart"),
                        help="clingo strategy (default auto: incremental where the input domain settles)")
    parser.add_argument("--format", default="auto", choices=("auto", "log", "jsonl"), dest="stream_format")
    parser.add_argument("--out", default="-", help="output JSON lines file ('-' = stdout)")
    parser.add_argument("--rejected", default=None, help="write rejected stream records here (JSON lines)")
    parser.add_argument("--explain", action="store_true",
                        help="print the flat program P', tau and the processing order to stderr")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from srtopo.rules.evaluate import Reasoner
    from srtopo.rules.parse import parse_file
    from srtopo.rules.stream import Rejects, open_lines, output_line, read_records, time_points

    program = parse_file(args.program)
    reasoner = Reasoner(program, strategy=args.strategy, unit=args.unit)
    if args.explain:
        print(reasoner.analysis.describe(), file=sys.stderr)
        print("flat program P':\n" + str(reasoner.rewriting), file=sys.stderr)
        print("tau:\n" + reasoner.rewriting.tau_text(), file=sys.stderr)
    with ExitStack() as stack:
        out = sys.stdout if args.out in (None, "-") else _open(stack, args.out)
        sink = _open(stack, args.rejected) if args.rejected else None
        rejects = Rejects(sink=sink, echo=sys.stderr)
        records = read_records(open_lines(args.stream), unit=args.unit, fmt=args.stream_format,
                               rejects=rejects)
        for time, stamp, atoms in time_points(records, rejects):
            result = reasoner.step(atoms)
            out.write(output_line(time, reasoner.shown(result), stamp) + "\n")
            out.flush() if out is sys.stdout else None
    if rejects.count:
        print(f"srtopo: {rejects.count} stream record(s) rejected", file=sys.stderr)
    return 0


def _open(stack: ExitStack, path: str):
    try:
        return stack.enter_context(open(path, "w", encoding="utf-8"))
    except OSError as error:
        raise StreamInputError(f"cannot write: {error.strerror}", file=path) from None
