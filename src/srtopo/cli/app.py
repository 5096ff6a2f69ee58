"""The command line: its parser, its commands, one-line errors and the stop on a signal.

Every error is one line naming the file (and line) and what to do, with exit status 2; ``--debug`` (anywhere
on the command line) shows the traceback instead. Ctrl-C and SIGTERM stop a run after the record, time point
or micro-batch in progress, print one line saying what was committed, and exit 130 (143 for SIGTERM).
"""
from __future__ import annotations

import argparse
import errno
import os
import sys

from srtopo import interrupt
from srtopo.cli import calibrate, check, compile, reason, running, streamlog
from srtopo.cli.parsing import ERROR_STATUS, Parser, given_options, idlvsr_levels
from srtopo.errors import SrtopoError

COMMANDS = (compile, check, reason, streamlog, calibrate)


def _common() -> argparse.ArgumentParser:
    """Options every command takes, before or after its name."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks instead of one-line errors")
    common.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show what is otherwise summed up: every skipped axiom, Spark's own warnings and log")
    return common


#: what ``srtopo --help`` opens with
DESCRIPTION = ("srtopo: distributed stream reasoning. Check an RDF stream against a DL-Lite ontology, reason over a "
               "stream with an I-DLV-sr or Streamlog program, on one process or on Spark. 'srtopo COMMAND --help' "
               "says what each command takes.")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="srtopo", description=DESCRIPTION, parents=[_common()])
    parser.add_argument("--version", action="version", version=f"srtopo {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(sub, parents=[_common()])
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("srtopo")
    except PackageNotFoundError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    argv = idlvsr_levels(list(sys.argv[1:] if argv is None else argv))
    Parser.argv = argv
    parser = build_parser()
    args = parser.parse_args(argv)
    args.given = given_options(parser, args.command, argv)
    args.debug = getattr(args, "debug", False)
    args.verbose = getattr(args, "verbose", False)
    saved = {k: os.environ.get(k) for k in ("SRTOPO_SPARK_LOG", "SRTOPO_SPARK_LOG_LEVEL")}
    if args.verbose:      # Spark's console and log on the terminal (runners.spark.session)
        os.environ.setdefault("SRTOPO_SPARK_LOG", "-")
        os.environ.setdefault("SRTOPO_SPARK_LOG_LEVEL", "WARN")
    restore_signals = interrupt.install()
    try:
        compile.fold_strategy(args)
        running.refuse_path_clashes(args)
        status = int(args.handler(args) or 0)
        if interrupt.requested():     # the signal came as the run ended: it ended whole
            raise interrupt.Interrupted(interrupt.signum(), "the run had ended: every output is written")
        return status
    except interrupt.Interrupted as stop:
        return _interrupted(stop)
    except KeyboardInterrupt:        # Python's own handler, in a thread that is not ours
        return _interrupted(interrupt.Interrupted())
    except BrokenPipeError:
        return 0
    except Exception as error:       # noqa: BLE001 - every error is one line; --debug shows the trace
        if args.debug:
            raise
        print(f"srtopo: error: {one_line(error)}", file=sys.stderr)
        return ERROR_STATUS
    finally:
        restore_signals()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _interrupted(stop: interrupt.Interrupted) -> int:
    note = f": {stop.note}" if stop.note else ""
    print(f"srtopo: stopped by {stop.signal_name}{note}", file=sys.stderr)
    if stop.forced:     # a second signal: threads may still be in the middle of something; do not wait for them
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(stop.exit_status)
    return stop.exit_status


def one_line(error: BaseException) -> str:
    """An error as one line: srtopo's own, a runner's (Spark, py4j), the operating system's, or an internal one."""
    if isinstance(error, SrtopoError):
        return " ".join(str(error).split())
    if "pyspark" in sys.modules:
        from srtopo.runners.spark.errors import translate
        from srtopo.runners.spark.session import keep_jvm_log
        found = translate(error)
        if found is not None:
            log = keep_jvm_log()
            if log:
                found.hint = f"Spark's log: {log}" + (f"; {found.hint}" if found.hint else "")
            return " ".join(str(found).split())
    if isinstance(error, OSError):     # a full disk, a directory we may not write: what, where, what to do
        where = f"{error.filename}: " if error.filename else ""
        hint = {errno.ENOSPC: "free space there and run again; with --checkpoint, a Spark run resumes where it "
                              "stopped and rewrites what was not committed",
                errno.EACCES: "write to a directory you may write to"}.get(error.errno, "check the path and the device")
        return f"{where}{error.strerror or error} ({hint})"
    text = " ".join(str(error).split())[:300]
    return f"internal error: {type(error).__name__}: {text} (srtopo --debug shows where; please report it)"
