"""The ``srtopo`` command line: compile, check (consistency) and reason (I-DLV-sr).

Errors raised as SrtopoError are printed as one line naming the file (and line) and what to do;
``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import argparse
import sys

from srtopo.errors import SrtopoError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="srtopo", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    from srtopo.cli import consistency as cli_consistency
    cli_consistency.register(sub)
    from srtopo.cli import reason as rules_cli
    rules_cli.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = args.debug
    try:
        return int(args.handler(args) or 0)
    except SrtopoError as error:
        if debug:
            raise
        print(f"srtopo: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
