"""srtopo: compile a TBox or an I-DLV-sr program into a topology, check an RDF stream, reason over a stream.

The command line proper is ``srtopo.cli.app``. This module stays light so that SIGINT and SIGTERM are routed
before the runners are imported: a Ctrl-C while the program loads (a second or more on a busy machine) stops it
with one line and status 130 (143), not a traceback from inside an import.
"""
from __future__ import annotations

import sys

from srtopo import interrupt


def main(argv: list[str] | None = None) -> int:
    restore = interrupt.install()
    try:
        from srtopo.cli.app import main as run
    except KeyboardInterrupt as stop:      # srtopo.interrupt.Interrupted, or Python's own before install
        signum = getattr(stop, "signum", None) or interrupt.signum() or 2
        print(f"srtopo: stopped by {interrupt.Interrupted(signum).signal_name}: nothing had started",
              file=sys.stderr)
        return 128 + int(signum)
    finally:
        restore()
    return run(argv)


#: what ``srtopo.cli`` offers besides ``main``, loaded from ``srtopo.cli.app`` when first asked for
_FROM_APP = ("build_parser", "one_line", "COMMANDS")


def __getattr__(name: str):
    if name not in _FROM_APP:       # submodules (check, reason, ...) are found by the import system itself
        raise AttributeError(f"module 'srtopo.cli' has no attribute {name!r}")
    from srtopo.cli import app
    return getattr(app, name)
