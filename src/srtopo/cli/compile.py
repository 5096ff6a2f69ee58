"""``srtopo compile``: a DL-Lite TBox (consistency), an I-DLV-sr program (rules) or a Streamlog program (``.sl``)
into a topology; a TBox and an I-DLV-sr program together into a chain (the check, then the program over what the
TBox keeps and entails)."""
from __future__ import annotations

import json
import sys

from srtopo.concepts import display
from srtopo.consistency.choose import DEFAULT_STAGES, METHODS, parse_split
from srtopo.runners.protocol import positive


def add_topology_arguments(parser, tbox_required: bool = True) -> None:
    """How a consistency topology is chosen (``consistency.choose``)."""
    parser.add_argument("--tbox", required=tbox_required, help="OWL ontology (RDF/XML, Turtle, N-Triples or OWL/XML)")
    parser.add_argument("--method", choices=METHODS, default="auto",
                        help="auto (default): the cost model picks NTM or an LTM split for the runner; ntm: NI "
                             "closure in one stage; ltm: pipeline of NI groups")
    parser.add_argument("--split", help="NI groups per stage, e.g. 1,2 = [G1 | G2+G3]; 1,1,1 = three stages")
    parser.add_argument("--stages", type=positive,
                        help=f"number of stages a balancer cuts when --split is not given (default {DEFAULT_STAGES})")
    parser.add_argument("--balancer", default=None,
                        help="cost | paper | even (default: paper with --split, cost otherwise: the runner's cost "
                             "model, calibrated by srtopo calibrate)")
    parser.add_argument("--tasks", type=positive, default=1,
                        help="task budget per stage of a two-stage plan (NTM gets the whole budget; on Spark "
                             "local[N] no stage gets more than N)")


def add_cost_arguments(parser) -> None:
    """Which runner the cost balancer models, for commands that do not run the topology (``check`` has these
    as its runner flags)."""
    g = parser.add_argument_group("the runner the cost balancer plans for")
    g.add_argument("--engine", choices=("local", "spark"), default="local",
                   help="which runner to plan for (default local)")
    from srtopo.consistency.cost import TARGET_FEATURES
    plans = {runner: [k.split("/")[1] for k in TARGET_FEATURES if k.startswith(runner + "/")]
             for runner in ("local", "spark")}
    g.add_argument("--local-plan", choices=plans["local"], default=None,
                   help="the local runner's physical plan (default: the runner's)")
    g.add_argument("--physical-plan", choices=plans["spark"], default=None,
                   help="Spark's physical plan (default: the runner's)")
    g.add_argument("--master", default=None, help="Spark master: local[N] gives N cores (default local[*])")
    g.add_argument("--shuffle-partitions", type=int, default=None, help="Spark's shuffle partitions (fused)")


def cost_target(args):
    """The cost model's target (``consistency.cost.Target``) for the --engine and runner flags."""
    from types import SimpleNamespace

    from srtopo.consistency.cost import target_for
    runner = getattr(args, "engine", None) or "local"
    plan = getattr(args, "local_plan", None) if runner == "local" else getattr(args, "physical_plan", None)
    return target_for(runner, SimpleNamespace(physical_plan=plan, master=getattr(args, "master", None),
                                              shuffle_partitions=getattr(args, "shuffle_partitions", None)))


def add_program_arguments(parser) -> None:
    """The program's time options; I-DLV-sr's spellings are accepted too, so its command lines paste."""
    parser.add_argument("--unit", "--t-unit", dest="unit", default="sec",
                        help="the duration of a time point (msec, sec, min, hrs; default sec)")
    parser.add_argument("--windows-unit", "--window-unit", dest="windows_unit", default="sec",
                        help="the unit of windows written without one, [3] or {0,2} (default sec, as in I-DLV-sr, "
                             "whatever --t-unit is: with --t-unit min, [2] is two seconds, so it sees only the "
                             "current minute; write [2 min] or --windows-unit min for two minutes)")
    parser.add_argument("--t-format", dest="number_unit", default=None,
                        help="the unit of numeric timestamps (msec, sec, min, hrs; default: they count time points); "
                             "date-times are read as such")
    parser.add_argument("--now-format", default="datetime", choices=("sec", "min", "hrs", "datetime"),
                        help="@now as seconds, minutes or hours since 1970-01-01, or as a date-time string "
                             "(default datetime)")
    parser.add_argument("--complete-windows", action="store_true",
                        help="'always' does not hold over a window that reaches before the first time point")
    parser.add_argument("--py-script", action="append", default=[], metavar="A.py[,B.py]",
                        help="Python scripts defining the external atoms &f(...;...) (repeatable or comma-separated)")
    from srtopo.solving import CHOICE_STRATEGIES, RL
    parser.add_argument("--strategy", default="auto",
                        choices=("auto", "incremental", "restart") + tuple(CHOICE_STRATEGIES)[2:] + (RL,),
                        help="how clingo is used (default auto: kept solvers where background facts fix the input "
                             "domain); also decides how the program is cut into stages. For a program's choice "
                             "part: restart (a new Control per time point), incremental (one kept Control, "
                             "everything kept), forget, forget-lemmas, forget-signs, forget-scores (what the "
                             "kept Control forgets at each time point), progress (saved phases kept, lemmas "
                             "forgotten), rl (a cache of learned constraints weighted by reinforcement learning; "
                             "--rl-*) or auto (a bandit over measured step times)")
    g = parser.add_argument_group("--strategy rl (the choice part's cache of learned constraints)")
    g.add_argument("--rl-lambda", type=float, default=None, help="learning rate, 0 < lambda <= 1 (default 0.1)")
    g.add_argument("--rl-store", type=int, default=None, help="learned constraints kept, n (default 400)")
    g.add_argument("--rl-active", type=int, default=None,
                   help="learned constraints switched on at each time point, k <= n (default 200)")
    g.add_argument("--rl-lbd", type=int, default=None,
                   help="largest LBD of a learned constraint clasp hands over (default 4)")


def fold_strategy(args) -> None:
    """``--strategy rl`` with its ``--rl-*`` flags as one strategy name (``solving.RlParams``)."""
    from srtopo.errors import UsageError
    from srtopo.solving import RL, RlParams
    given = {k: getattr(args, f"rl_{k}", None) for k in ("lambda", "store", "active", "lbd")}
    given = {k: v for k, v in given.items() if v is not None}
    if not given:
        return
    if getattr(args, "strategy", None) != RL:
        raise UsageError("--rl-lambda, --rl-store, --rl-active and --rl-lbd set the rl strategy",
                         hint="add --strategy rl")
    args.strategy = RlParams.parse(RL + ":" + ",".join(f"{k}={v}" for k, v in given.items())).name()


def add_graph_argument(parser) -> None:
    parser.add_argument("--export-graphs", nargs="?", const="graphs", default=None, metavar="DIR",
                        help="write the stream dependency, component and macro-node graphs as Graphviz files into "
                             "DIR (default ./graphs), as I-DLV-sr does")


def register(subparsers, parents=()) -> None:
    parser = subparsers.add_parser("compile", help="compile a DL-Lite TBox or an I-DLV-sr program into a topology",
                                   description=__doc__.splitlines()[0], allow_abbrev=False, parents=list(parents))
    add_topology_arguments(parser, tbox_required=False)
    add_cost_arguments(parser)
    parser.add_argument("--program", help="I-DLV-sr program (.idlvsr), or Streamlog program (.sl): compile its "
                                          "topology instead; with --tbox, the chain of both")
    parser.add_argument("--inconsistent", choices=("drop", "keep"), default="drop",
                        help="with --tbox and --program: what the chain's saturation stage does with the statements "
                             "of individuals with a report (default drop)")
    add_program_arguments(parser)
    add_graph_argument(parser)
    parser.add_argument("--format", choices=["text", "json", "dot"], default="text", help="output format")
    parser.set_defaults(handler=run)


#: what a TBox without disjointness means for a check
NO_NI = "no two tuples can conflict; only an assertion of owl:Nothing is reported"


def loader_text(tbox, analysis, verbose: bool = False) -> str:
    """The loader report with what the NI analysis adds (no NI at all, unsatisfiable concepts): what ``compile``
    prints before the topology and ``check --verbose`` on stderr."""
    lines = [tbox.report.to_text(verbose=verbose)]
    if not analysis.roots:
        lines.append(f"  note: the TBox states no disjointness (no NI): {NO_NI}")
    if analysis.unsatisfiable:
        names = sorted(display(c) for c in analysis.unsatisfiable)
        shown = ", ".join(names[:20]) + (f", ... ({len(names) - 20} more in --format json)" if len(names) > 20 else "")
        lines.append(f"  unsatisfiable concepts: {len(names)} ({shown})")
    return "\n".join(lines)


def consistency_topology(args):
    """(tbox, analysis, topology) for the --tbox / --method / --split / ... arguments."""
    from srtopo.consistency.choose import choose_topology
    from srtopo.consistency.nis import analyse
    from srtopo.consistency.owl import load_tbox
    tbox = load_tbox(args.tbox)
    analysis = analyse(tbox)
    topology = choose_topology(analysis, method=args.method, split=parse_split(args.split) if args.split else None,
                               stages=args.stages, balancer=args.balancer, tasks=max(1, args.tasks),
                               target=cost_target(args))
    return tbox, analysis, topology


def rules_options(args):
    """The compile options (``rules.compile.Options``) of the program arguments."""
    from pathlib import Path

    from srtopo.rules.compile import Options
    scripts = tuple(str(Path(s).resolve()) for spec in args.py_script for s in spec.split(",") if s.strip())
    return Options(unit=args.unit, windows_unit=args.windows_unit, number_unit=args.number_unit,
                   now_format=args.now_format, complete_windows=args.complete_windows, scripts=scripts)


def rules_topology(args):
    from srtopo.errors import UsageError
    from srtopo.kinds import program_kind
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    if program_kind(args.program).name != "rules":
        raise UsageError(f"{args.program} is a {program_kind(args.program).name} program, not an I-DLV-sr one",
                         hint="run it with srtopo streamlog --program; srtopo compile --program prints its topology")
    program = parse_file(args.program)
    if getattr(args, "export_graphs", None):
        from srtopo.rules.analysis import analyse
        from srtopo.rules.graphs import export_graphs
        for path in export_graphs(analyse(program), args.export_graphs):
            print(f"srtopo: wrote {path}", file=sys.stderr)
    return compile_program(program, strategy=args.strategy, options=rules_options(args))


def refuse_idle_strategy(args, topology) -> None:
    """A strategy that only a choice part uses, on a program without one, would do nothing."""
    from srtopo.errors import UsageError
    from srtopo.solving import STRATEGIES as STRATIFIED_STRATEGIES
    base = args.strategy.split(":", 1)[0]
    if base not in STRATIFIED_STRATEGIES and not any(getattr(s, "choice", False) for s in topology.stages):
        raise UsageError(f"--strategy {base} is a strategy for a program's choice part (choices, constraints, "
                         f"unstratified negation); {args.program} has none",
                         hint="leave --strategy out, or give auto, incremental or restart")


def run(args) -> int:
    from srtopo.errors import UsageError
    from srtopo.kinds import program_kind
    if not args.tbox and not args.program:
        raise UsageError("give --tbox (a consistency topology), --program (a rules or Streamlog topology), or both "
                         "(a chain)")
    if "inconsistent" in getattr(args, "given", {}) and not (args.tbox and args.program):
        raise UsageError("--inconsistent acts on a chain: it needs --tbox and --program", hint="give both, or leave "
                                                                                              "--inconsistent out")
    if args.tbox and args.program:
        from srtopo.chain import chain
        tbox, analysis, consistency = consistency_topology(args)
        topology = chain(consistency, rules_topology(args), tbox, args.inconsistent)
        report = tbox.report
        extra = {"loader_report": report.to_dict(), "unsatisfiable": sorted(analysis.unsatisfiable)}
    elif args.program and program_kind(args.program).name == "streamlog":
        topology = program_kind(args.program).compile(args.program)
        report, extra = None, {}
    elif args.program:
        topology = rules_topology(args)
        report, extra = None, {}
    else:
        tbox, analysis, topology = consistency_topology(args)
        report = tbox.report
        extra = {"loader_report": report.to_dict(), "unsatisfiable": sorted(analysis.unsatisfiable),
                 "cost_model": cost_prediction(topology, args) if analysis.roots else None}
    if args.format == "json":
        print(json.dumps({**topology.to_dict(), **extra}, indent=2, ensure_ascii=False))
    elif args.format == "dot":
        if report is not None:
            print(loader_text(tbox, analysis, args.verbose), file=sys.stderr)
        print(topology.to_dot())
    else:
        if report is not None:
            print(loader_text(tbox, analysis, args.verbose))
        print(topology.to_text())
        cost = extra.get("cost_model")
        if cost:
            print(f"  cost model ({cost['engine']}, coefficients: {cost['coefficients']}): predicted "
                  f"{cost['predicted_tuples_s']:,.0f} tuples/s")
    return 0


def cost_prediction(topology, args) -> dict:
    """What the cost model predicts for the topology on the runner of the --engine flags (whichever balancer
    chose it), so a user sees the figure the default balancer compared plans by. The target is under the key
    ``engine``, as in the runs of a calibration file."""
    from srtopo.consistency.cost import coefficients_for, predict_tps
    target = cost_target(args)
    coefficients = coefficients_for(target)
    return {"engine": target.key + (f" on {target.cores} core(s)" if target.runner == "spark" else ""),
            "coefficients": coefficients.source,
            "predicted_tuples_s": round(predict_tps(topology, target, coefficients), 1)}
