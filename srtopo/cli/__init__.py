"""srtopo: compile a TBox or an I-DLV-sr program into a topology, check an RDF stream, reason over a stream.

Errors raised as SrtopoError are printed as one line naming the file (and line) and what to do;
``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import argparse
import sys

from srtopo.cli import check, compile, reason, streamlog
from srtopo.errors import SrtopoError

COMMANDS = (compile, check, reason, streamlog)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="srtopo", description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        compile.fold_strategy(args)
        return int(args.handler(args) or 0)
    except SrtopoError as error:
        if args.debug:
            raise
        print(f"srtopo: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
