"""``srtopo reason --tbox T.ttl --program P.idlvsr --stream S.tnt``: check an RDF stream against a DL-Lite TBox,
then run the program over the statements the check keeps and what the TBox entails from them (a chain,
``srtopo.chain``). Models go to standard output (or --out) as one JSON line per time point; the reports go to
--reports-out only, in check's JSON form."""
from __future__ import annotations

import sys

from srtopo.cli import running
from srtopo.errors import UsageError

#: reason's flags that only a chain reads (destination -> what the flag does)
CHAIN_FLAGS = ("window", "inconsistent", "reports_out", "method", "split", "stages", "balancer", "tasks")
#: reason's flags that do nothing for a chain, with why
IDLE = {"duplicates": "a statement of a .tnt stream is one of its time point's, never a time point whole",
        "max_gap": "a chain judges statements as srtopo check does: by --lateness alone",
        "number_unit": "a .tnt statement's event time is its time point"}


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def add_arguments(parser) -> None:
    """The flags a chain adds to ``srtopo reason`` (with --tbox): the TBox and how its topology is chosen, the
    consistency window, what to do with inconsistent statements and where the reports go."""
    from srtopo.cli.compile import add_topology_arguments
    g = parser.add_argument_group("with --tbox: check the stream against a DL-Lite TBox first, and reason over "
                                  "the statements it keeps and what the TBox entails from them")
    add_topology_arguments(g, tbox_required=False)
    g.add_argument("--window", default=None,
                   help="the consistency window in time units, or 'unbounded' (the default), as srtopo check takes it")
    g.add_argument("--inconsistent", choices=("drop", "keep"), default="drop",
                   help="drop (default): a statement at time t is withheld from the program when a report is due "
                        "at t for its subject, or for its object when that is an individual of a property; keep: "
                        "withhold nothing")
    g.add_argument("--reports-out", default=None, metavar="FILE|DIR",
                   help="where the consistency reports go, as JSON lines in srtopo check's form (local: a file; "
                        "spark: a directory of per-batch files); without it they are counted on stderr only")


def refuse_without_tbox(args) -> None:
    """A chain's flag on ``srtopo reason`` without --tbox would do nothing."""
    given = getattr(args, "given", {})
    for dest in CHAIN_FLAGS:
        if dest in given:
            raise UsageError(f"{given[dest]} acts on the consistency check of a chain: it needs --tbox",
                             hint=f"add --tbox T.ttl, or leave {given[dest]} out")


def run(args) -> int:
    from srtopo.chain import chain, program_reads_triples
    from srtopo.cli.compile import consistency_topology, loader_text, refuse_idle_strategy, rules_topology
    from srtopo.io.sources import source_from_spec
    given = getattr(args, "given", {})
    for dest, why in IDLE.items():
        if dest in given:
            raise UsageError(f"{given[dest]} does nothing with --tbox: {why}", hint=f"leave {given[dest]} out")
    if args.stream_format not in ("detect", "tnt"):
        raise UsageError(f"--stream-format {args.stream_format}: a chain reads timestamped N-Triples (.tnt), the "
                         "stream srtopo check reads", hint="give a .tnt stream (--stream-format tnt, or leave it out)")
    if args.reports_out in ("-", ""):
        raise UsageError("--reports-out -: reports never go to standard output, which holds one JSON line per time "
                         "point", hint="give a file (a directory with --engine spark)")
    window = running.parse_window(args.window) if args.window is not None else None
    tbox, analysis, consistency = consistency_topology(args)
    rules = rules_topology(args)
    refuse_idle_strategy(args, rules)
    topology = chain(consistency, rules, tbox, args.inconsistent)
    if args.verbose:
        print(loader_text(tbox, analysis, verbose=True), file=sys.stderr)
    if not program_reads_triples(topology):
        print(f"srtopo: warning: {args.program} never reads triple/3, the statements a chain hands it: its models "
              "are those of an empty stream", file=sys.stderr)
    if args.explain:
        print(topology.to_text(), file=sys.stderr)
    sources = [source_from_spec(spec, args.files_per_batch, "tnt") for spec in [args.stream] + args.also_stream]
    runner, config, sink = running.start(args, window, args.lateness, print_empty=args.print_empty, kind="chain",
                                         reports_apart=True)
    result = runner.run(topology, sources, config, sink)
    running.finish(sink, args.rejected_out)
    c = result.counters
    extra = c.extra
    where = f"written to {args.reports_out}" if args.reports_out else "not written (give --reports-out)"
    print(f"srtopo: {_n(extra.get('reports', 0), 'report')} ({where}); {_n(extra.get('withheld', 0), 'statement')} "
          f"withheld at {_n(extra.get('withheld_points', 0), 'time point')} ({args.inconsistent}); "
          f"{_n(c.outputs, 'model')} written; "
          f"{c.records} tuples read, {sink.rejected} rejected records ({c.late} late), {c.batches} batches, "
          f"topology {topology.label}; {result.physical_plan}", file=sys.stderr)
    if c.records == 0 and not result.resumed:
        raise running.NothingUsable(f"no usable statement in {args.stream} ({sink.rejected} rejected)",
                                    hint="lines are '<time><TAB><s> <p> <o> .' (timestamped N-Triples)")
    return 0
