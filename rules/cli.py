"""`srtopo reason`: placeholder until the I-DLV-sr engine lands."""
from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser("reason", help="run an I-DLV-sr program over a stream (clingo)")
    parser.add_argument("--program", required=True)
    parser.add_argument("--stream", required=True)
    parser.set_defaults(handler=_run)


def _run(args) -> int:
    from srtopo.errors import UnsupportedByRunner
    raise UnsupportedByRunner("the reason command is not implemented yet")
