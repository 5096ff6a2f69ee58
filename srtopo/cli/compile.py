"""``srtopo compile``: a DL-Lite TBox (consistency) or an I-DLV-sr program (rules) into a topology."""
from __future__ import annotations

import json
import sys

from srtopo.topology.choose import DEFAULT_STAGES, METHODS, parse_split


def add_topology_arguments(parser, tbox_required: bool = True) -> None:
    """How a consistency topology is chosen (``topology.choose``)."""
    parser.add_argument("--tbox", required=tbox_required, help="OWL ontology (RDF/XML, Turtle, N-Triples or OWL/XML)")
    parser.add_argument("--method", choices=METHODS, default="ltm",
                        help="ntm: NI closure in one stage; ltm: pipeline of NI groups (default)")
    parser.add_argument("--split", help="NI groups per stage, e.g. 1,2 = [G1 | G2+G3]; 1,1,1 = three stages")
    parser.add_argument("--stages", type=int,
                        help=f"number of stages a balancer cuts when --split is not given (default {DEFAULT_STAGES})")
    parser.add_argument("--balancer", default=None,
                        help="paper | even (default: paper with --split, even otherwise)")
    parser.add_argument("--tasks", type=int, default=1, help="task budget per stage (parallelism)")


def add_program_arguments(parser) -> None:
    parser.add_argument("--unit", default="sec", help="time unit of a time point (ms, sec, min, hour)")
    parser.add_argument("--strategy", default="auto", choices=("auto", "incremental", "restart"),
                        help="how clingo is used (default auto: kept solvers where background facts fix the input "
                             "domain); also decides how the program is cut into stages")


def register(subparsers) -> None:
    parser = subparsers.add_parser("compile", help="compile a DL-Lite TBox or an I-DLV-sr program into a topology",
                                   description=__doc__.splitlines()[0], allow_abbrev=False)
    add_topology_arguments(parser, tbox_required=False)
    parser.add_argument("--program", help="I-DLV-sr program (.idlvsr): compile its rules topology instead")
    add_program_arguments(parser)
    parser.add_argument("--format", choices=["text", "json", "dot"], default="text", help="output format")
    parser.set_defaults(handler=run)


def consistency_topology(args):
    """(tbox, analysis, topology) for the --tbox / --method / --split / ... arguments."""
    from srtopo.ontology.nis import analyse
    from srtopo.ontology.owl import load_tbox
    from srtopo.topology.choose import choose_topology
    tbox = load_tbox(args.tbox)
    analysis = analyse(tbox)
    topology = choose_topology(analysis, method=args.method, split=parse_split(args.split) if args.split else None,
                               stages=args.stages, balancer=args.balancer, tasks=max(1, args.tasks))
    return tbox, analysis, topology


def rules_topology(args):
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    return compile_program(parse_file(args.program), unit=args.unit, strategy=args.strategy)


def run(args) -> int:
    from srtopo.errors import TopologyError
    if bool(args.tbox) == bool(args.program):
        raise TopologyError("give either --tbox (a consistency topology) or --program (a rules topology)")
    if args.program:
        topology = rules_topology(args)
        report, extra = None, {}
    else:
        tbox, analysis, topology = consistency_topology(args)
        report = tbox.report
        extra = {"loader_report": report.to_dict(), "unsatisfiable": sorted(analysis.unsatisfiable)}
    if args.format == "json":
        print(json.dumps({**topology.to_dict(), **extra}, indent=2, ensure_ascii=False))
    elif args.format == "dot":
        if report is not None:
            print(report.to_text(), file=sys.stderr)
        print(topology.to_dot())
    else:
        if report is not None:
            print(report.to_text())
            if not analysis.roots:
                print("  note: the TBox states no disjointness: no stream can be inconsistent")
            if analysis.unsatisfiable:
                print(f"  unsatisfiable concepts: {len(analysis.unsatisfiable)}")
        print(topology.to_text())
    return 0
