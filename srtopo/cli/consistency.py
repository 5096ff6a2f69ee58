"""`srtopo compile` and `srtopo check`: DL-Lite TBox -> topology -> reports."""
from __future__ import annotations

import json
import sys

from srtopo.errors import SrtopoError, TopologyError


def _split(text: str) -> list[int]:
    try:
        return [int(x) for x in text.replace("|", ",").split(",") if x.strip() != ""]
    except ValueError:
        raise TopologyError(f"--split {text!r} is not a list of integers",
                            hint="e.g. --split 1,2 for [G1 | G2+G3]") from None


def parse_window(text: str) -> int | None:
    if text.lower() in ("unbounded", "inf", "none", "all"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise TopologyError(f"--window {text!r} is not an integer number of time units",
                            hint="e.g. --window 30, or --window unbounded") from None
    if value < 0:
        raise TopologyError(f"--window must be >= 0, got {value}")
    return value


def _add_plan_arguments(parser) -> None:
    parser.add_argument("--tbox", required=True, help="OWL ontology (RDF/XML, Turtle or N-Triples)")
    parser.add_argument("--method", choices=["ntm", "ltm"], default="ltm",
                        help="ntm: NI closure in one stage; ltm: pipeline of NI groups (default)")
    parser.add_argument("--split", help="NI groups per stage, e.g. 1,2 = [G1 | G2+G3]; 1,1,1 = three stages")
    parser.add_argument("--stages", type=int, help="number of stages when --split is not given (default 2)")
    parser.add_argument("--balancer", default=None, help="paper | even (default: paper with --split, even otherwise)")
    parser.add_argument("--tasks", type=int, default=1, help="task budget per stage (parallelism)")


def register(subparsers) -> None:
    compile_parser = subparsers.add_parser("compile", help="compile a DL-Lite TBox into a consistency topology")
    _add_plan_arguments(compile_parser)
    compile_parser.add_argument("--format", choices=["text", "json", "dot"], default="text")
    compile_parser.set_defaults(handler=run_compile)

    check = subparsers.add_parser("check", help="check a timestamped N-Triples stream against a TBox")
    _add_plan_arguments(check)
    check.add_argument("--engine", choices=["local", "spark"], default="local")
    check.add_argument("--stream", required=True, help=".tnt file or directory of .tnt files")
    check.add_argument("--window", required=True, help="window size in time units, or 'unbounded'")
    check.add_argument("--out", default="-", help="JSON-lines report file; '-' (default) is stdout")
    check.add_argument("--lateness", type=int, default=None,
                       help="allowed lateness in time units (local default: unbounded, exact on any order)")
    check.add_argument("--rejected-out", default=None,
                       help="rejected (malformed or late) records: a JSON-lines file (local engine) or a "
                            "directory (spark engine)")
    try:
        from srtopo.cli import spark_flags as spark_cli
    except ImportError:
        spark_cli = None
    if spark_cli is not None:
        spark_cli.add_arguments(check)
    check.set_defaults(handler=run_check)


def load_analysis(path: str):
    from srtopo.ontology.nis import analyse
    from srtopo.ontology.owl import load_tbox
    tbox = load_tbox(path)
    return tbox, analyse(tbox)


def plan_topology(args, analysis):
    """The topology the flags ask for (NTM, an explicit split, or a balancer's choice)."""
    from srtopo.topology.balance import get_balancer
    from srtopo.topology.compile import compile_ltm, compile_ntm
    k = len(analysis.groups)
    if args.method == "ntm" or k == 0:
        if args.split:
            raise TopologyError("--split applies to --method ltm", hint="drop --split or use --method ltm")
        return compile_ntm(analysis, parallelism=max(1, args.tasks))
    split = _split(args.split) if args.split else None
    name = args.balancer or ("paper" if split else "even")
    plan = get_balancer(name)(analysis, tasks=max(1, args.tasks), stages=args.stages, split=split)
    return compile_ltm(analysis, plan.split, plan.parallelism)


def run_compile(args) -> int:
    tbox, analysis = load_analysis(args.tbox)
    topology = plan_topology(args, analysis)
    if args.format == "json":
        data = topology.to_dict()
        data["loader_report"] = tbox.report.to_dict()
        data["unsatisfiable"] = sorted(analysis.unsatisfiable)
        print(json.dumps(data, indent=2))
    elif args.format == "dot":
        print(tbox.report.to_text(), file=sys.stderr)
        print(topology.to_dot())
    else:
        print(tbox.report.to_text())
        if not analysis.roots:
            print("  note: the TBox states no disjointness: no stream can be inconsistent")
        if analysis.unsatisfiable:
            print(f"  unsatisfiable concepts: {len(analysis.unsatisfiable)}")
        print(topology.to_text())
    return 0


def _open_out(path: str):
    if path in ("-", "", None):
        return sys.stdout, False
    try:
        return open(path, "w", encoding="utf-8"), True
    except OSError as error:
        raise SrtopoError(f"cannot write reports: {error.strerror}", file=path,
                          hint="check that the directory exists and is writable") from None


def run_check(args) -> int:
    window = parse_window(args.window)
    tbox, analysis = load_analysis(args.tbox)
    topology = plan_topology(args, analysis)
    if args.engine == "spark":
        from srtopo.environment import require_java
        require_java(17)
        from srtopo.cli import spark_flags as spark_cli
        return spark_cli.run(args, topology)
    from srtopo.topology.runners.local import LocalRunner
    from srtopo.topology.tnt import read_tnt
    rejected = []
    runner = LocalRunner(topology, window, allowed_lateness=args.lateness)
    out, close = _open_out(args.out)
    reports = 0
    try:
        for report in runner.process(read_tnt(args.stream, rejected)):
            out.write(report.to_json() + "\n")
            reports += 1
    finally:
        if close:
            out.close()
        else:
            out.flush()
    problems = rejected + runner.late
    if args.rejected_out:
        with open(args.rejected_out, "w", encoding="utf-8") as handle:
            for record in problems:
                handle.write(json.dumps(record.to_dict()) + "\n")
    else:
        for record in problems[:20]:
            print(f"srtopo: rejected {record.source}:{record.line}: {record.reason}", file=sys.stderr)
        if len(problems) > 20:
            print(f"srtopo: ... {len(problems) - 20} more rejected records (use --rejected-out FILE)",
                  file=sys.stderr)
    c = runner.counters
    print(f"srtopo: {c.tuples} tuples, {reports} reports, {len(rejected)} malformed, {c.late} late, "
          f"{c.irrelevant} irrelevant, plan {topology.plan}", file=sys.stderr)
    return 0
