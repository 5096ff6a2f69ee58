"""srtopo: compile a TBox or an I-DLV-sr program into a topology, check an RDF stream, reason over a stream.

Errors raised as SrtopoError are printed as one line naming the file (and line) and what to do;
``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import argparse
import errno
import sys

from srtopo.cli import calibrate, check, compile, reason, streamlog
from srtopo.errors import SrtopoError

COMMANDS = (compile, check, reason, streamlog, calibrate)


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
    except OSError as error:        # a full disk, a directory we may not write: what, where, what to do
        if args.debug:
            raise
        where = f"{error.filename}: " if error.filename else ""
        hint = {errno.ENOSPC: "free space there and run again; with --checkpoint, a Spark run resumes where it "
                              "stopped and rewrites what was not committed",
                errno.EACCES: "write to a directory you may write to"}.get(error.errno, "check the path and the device")
        print(f"srtopo: error: {where}{error.strerror or error} ({hint})", file=sys.stderr)
        return 1
