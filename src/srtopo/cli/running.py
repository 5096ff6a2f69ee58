"""What the commands that run a topology share: the runner's flags, the run configuration, the sink, the
closing summary. Each registered runner contributes its own flags (``add_arguments``) and reads them back
(``options_from_args``); nothing here knows one runner from another."""
from __future__ import annotations

import sys

from srtopo.errors import SrtopoError, UsageError
from srtopo.io.paths import refuse_clashes
from srtopo.io.sinks import JsonLinesSink
from srtopo.runners import RUNNERS, RunConfig, get_runner

DEFAULT_RUNNER = "local"
#: windows of 2^62 time units and more are refused (a window that long is unbounded in all but name)
WINDOW_LIMIT = 2 ** 62


def parse_window(text: str) -> int | None:
    if text.lower() in ("unbounded", "inf", "none", "all"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--window {text!r} is not an integer number of time units",
                         hint="e.g. --window 30, or --window unbounded") from None
    if value < 0:
        raise UsageError(f"--window must be >= 0, got {value}")
    if value >= WINDOW_LIMIT:     # times are 64-bit: t - w must not overflow on any runner
        raise UsageError(f"--window {text} is beyond the largest window, {WINDOW_LIMIT - 1:,} time units",
                         hint="give --window unbounded for a window without end")
    return value


def add_runner_arguments(parser, kind: str) -> None:
    parser.add_argument("--engine", choices=sorted(RUNNERS), default=DEFAULT_RUNNER,
                        help=f"which runner runs the topology (default {DEFAULT_RUNNER}): " + "; ".join(
                            f"{name}: {cls.summary}" for name, cls in sorted(RUNNERS.items())))
    parser.add_argument("--out", default="-",
                        help="where outputs go: '-' (default) prints JSON lines; otherwise the runner writes them "
                             "in its own form (local: a JSON-lines file; spark: a directory of per-batch files)")
    parser.add_argument("--rejected-out", default=None,
                        help="rejected records in the runner's own form (local: a JSON-lines file; spark: a "
                             "directory); without it the first 20 are shown on stderr")
    parser.add_argument("--checkpoint", default=None,
                        help="spark: where the run keeps its state, exactly-once across restarts (default: a "
                             "temporary directory; the local runner keeps none)")
    add_strict_argument(parser)
    for cls in RUNNERS.values():
        cls.add_arguments(parser)
        hide_other_kinds_flags(parser, cls, kind)


def hide_other_kinds_flags(parser, cls, kind: str) -> None:
    """A runner flag that acts on other topology kinds only is left out of the command's help: the help lists what
    the command takes. The parser still knows it, so that giving it is refused saying why (``refuse_idle_flags``)."""
    import argparse
    for action in parser._actions:
        kinds = cls.flag_kinds.get(action.dest, None)
        if kinds is not None and kind not in kinds:
            action.help = argparse.SUPPRESS


#: a command's arguments that name what it reads, and what it writes, by the flag that sets each
INPUT_FLAGS = {"tbox": "--tbox", "program": "--program", "stream": "--stream", "also_stream": "--also-stream",
               "py_script": "--py-script", "topology": "--topology"}
OUTPUT_FLAGS = {"out": "--out", "rejected_out": "--rejected-out", "metrics_out": "--metrics-out",
                "checkpoint": "--checkpoint", "reports_out": "--reports-out", "export_graphs": "--export-graphs"}


def _named(args, flags: dict[str, str]) -> list[tuple[str, str]]:
    named = []
    for dest, flag in flags.items():
        value = getattr(args, dest, None)
        for item in value if isinstance(value, list) else [value]:
            for path in (item.split(",") if dest == "py_script" and isinstance(item, str) else [item]):
                if isinstance(path, str) and path:
                    named.append((flag, path))
    return named


def refuse_path_clashes(args) -> None:
    """Before any command opens a file for writing: no output may be an input, lie inside one, hold one, or meet
    another output (``io.paths``)."""
    refuse_clashes(_named(args, INPUT_FLAGS), _named(args, OUTPUT_FLAGS))


def add_strict_argument(parser) -> None:
    parser.add_argument("--fail-on-bad-input", action="store_true",
                        help="stop at the first line that cannot be used, naming it (default: such a line is a "
                             "rejected record and the run goes on)")


def refuse_idle_flags(args, kind: str) -> None:
    """A runner flag that does nothing here (another runner's, or one for another kind of topology) is an
    error: a user who gives it expects an effect."""
    given = getattr(args, "given", {})
    for name, cls in sorted(RUNNERS.items()):
        for dest, kinds in getattr(cls, "flag_kinds", {}).items():
            if dest not in given:
                continue
            flag = given[dest]
            if name != args.engine:
                raise UsageError(f"{flag} is a flag of the {name} runner: it does nothing with --engine "
                                 f"{args.engine}", hint=f"add --engine {name}, or leave {flag} out")
            if kinds is not None and kind not in kinds:
                raise UsageError(f"{flag} does nothing for a {kind} topology", hint=f"leave {flag} out")


def start(args, window: int | None = None, lateness: int | None = None, print_empty: bool = False,
          max_gap: int | None = None, kind: str = "consistency", reports_apart: bool = False):
    """(runner, config, sink) for a command's arguments. Rejected records are shown on stderr (the first 20)
    unless --rejected-out takes them: then one line counts them. ``reports_apart`` (a run that outputs reports
    and models): the models go to --out (standard output by default), the reports to --reports-out only, in the
    runner's durable form, never to standard output."""
    refuse_idle_flags(args, kind)
    runner = get_runner(args.engine)
    options = type(runner).options_from_args(args)
    to_stdout = args.out in (None, "", "-")
    config = RunConfig(window=window, lateness=lateness, checkpoint=args.checkpoint,
                       out=None if to_stdout else args.out, rejected_out=args.rejected_out, options=options,
                       print_empty=print_empty, max_gap=max_gap,
                       reports_out=getattr(args, "reports_out", None) if reports_apart else None)
    echo = None if args.rejected_out else sys.stderr
    sink = JsonLinesSink(sys.stdout if to_stdout else None, echo=echo, flush=to_stdout,
                         echo_limit=20, strict=args.fail_on_bad_input, reports_apart=reports_apart)
    return runner, config, sink


def finish(sink: JsonLinesSink, rejected_out: str | None = None) -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    note = sink.close_note()
    if note:
        print(note, file=sys.stderr)
    if rejected_out and sink.rejected:
        print(f"srtopo: {sink.rejected} rejected record(s) written to {rejected_out}", file=sys.stderr)


def read_nothing_new(result, checkpoint: str | None) -> bool:
    """A run that went on from a checkpoint and read no line at all (its input consumed by the runs before): one
    line says so, and the run succeeded (the outputs of those runs stand). True when that was the case."""
    c = result.counters
    if not result.resumed or c.records or c.malformed or c.late:
        return False
    print(f"srtopo: nothing new was read: the checkpoint {checkpoint} had consumed the input already (the outputs "
          f"written from it stand)", file=sys.stderr)
    return True


class NothingUsable(SrtopoError):
    """A run read no usable record: the input is missing, empty, or every record was rejected."""
