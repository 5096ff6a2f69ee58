"""Compile an I-DLV-sr program into a rules topology (the IR of ``srtopo.ir.topology``), by pure passes.

The passes, in ``PASSES`` order, each take and return a :class:`Compilation`:

* ``analyse``: safety, stratification, the stream dependency and component graphs, macro-nodes in processing
  order ("I-DLV-sr: A Stream Reasoning System based on I-DLV", section 4.1);
* ``rewrite``: the flat program P' and the mapping tau (each streaming literal becomes a window operator's
  atom, generated predicates carry the reserved prefix);
* ``windows``: the window operators, their windows as distances in time points of the stream's unit;
* ``group``: which components are evaluated together: the macro-nodes (one clingo call each per time point,
  what restarting solvers want), or, for solvers kept across time points, every component with window
  literals on its own (its inputs follow the stream) and consecutive window-free components together;
* ``stages``: one rule stage per group, in processing order, with its flat rules, inputs, heads, window
  operators and partition key (``srtopo.rules.keys``); the source carries the background facts and the output
  what ``#show`` and ``#temp`` say.

Runners that distribute evaluate a keyed stage in key partitions; the local runner evaluates every stage whole.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from srtopo.errors import ProgramError
from srtopo.ir.topology import ONE_PARTITION, AtomSource, ModelOutput, RulesNotes, RuleStage, Topology, WindowOp
from srtopo.rules.analysis import Analysis, analyse
from srtopo.rules.ir import (
    GENERATED_PREFIX,
    UNIT_SECONDS,
    ExternalLiteral,
    Program,
    StreamingLiteral,
    sig_str,
    symbolic_atoms,
    term_signature,
)
from srtopo.rules.keys import choice_key, partition_key
from srtopo.rules.rewrite import Rewriting, rewrite

#: how the stages are cut: the strategies of ``srtopo.solving`` that keep solvers cut per component
KEEPING_STRATEGIES = ("incremental", "incremental-strict")


def resolve_strategy(strategy: str, has_background: bool) -> str:
    """The stratified part's strategy. ``auto`` (and the strategies that only concern the choice part, see
    ``solving.CHOICE_STRATEGIES``): kept solvers where background facts fix (most of) the input domain
    (Photo-voltaic's 60k links), restarting ones otherwise (small per-time-point programs over open stream
    domains restart cheaper)."""
    if strategy not in ("restart", "incremental", "incremental-strict"):
        return "incremental" if has_background else "restart"
    return strategy


#: formats of @now: a number of seconds, minutes or hours since 1970-01-01T00:00:00, or an ISO date-time string
NOW_FORMATS = ("sec", "min", "hrs", "datetime")


@dataclass(frozen=True)
class Options:
    """How time is read and what the evaluator provides (I-DLV-sr's command-line options)."""
    unit: str = "sec"                       # --t-unit: the duration of a time point
    windows_unit: str | None = "sec"        # --windows-unit: windows without a unit (I-DLV-sr: seconds; None:
    #                                         time points)
    number_unit: str | None = None          # --t-format: the unit of numeric timestamps (None: time points)
    now_format: str = "datetime"            # --now-format
    complete_windows: bool = False          # --complete-windows: no 'always' over partial windows
    scripts: tuple[str, ...] = ()           # --py-script: where external atoms are defined


@dataclass(frozen=True)
class Compilation:
    program: Program
    unit: str = "sec"
    strategy: str = "auto"
    prefix: str = GENERATED_PREFIX
    name: str = ""
    options: Options = Options()
    analysis: Analysis | None = None
    rewriting: Rewriting | None = None
    windows: tuple[WindowOp, ...] = ()
    groups: tuple[tuple[frozenset, ...], ...] = ()
    topology: Topology | None = None

    @property
    def keep(self) -> str:
        return f"{self.prefix or GENERATED_PREFIX}keep"

    @property
    def temporary(self) -> frozenset:
        return frozenset(r.head_pred for r in self.program.rules if r.temp)


def _check_unit(unit: str | None, what: str) -> None:
    if unit is not None and unit not in UNIT_SECONDS:
        raise ProgramError(f"unknown time unit '{unit}' for {what}", hint="use " + ", ".join(sorted(UNIT_SECONDS)))


def analyse_pass(c: Compilation) -> Compilation:
    _check_unit(c.unit, "the time points")
    _check_unit(c.options.windows_unit, "windows")
    _check_unit(c.options.number_unit, "numeric timestamps")
    if c.options.now_format not in NOW_FORMATS:
        raise ProgramError(f"unknown @now format '{c.options.now_format}'", hint="use " + ", ".join(NOW_FORMATS))
    return replace(c, analysis=analyse(c.program))


def rewrite_pass(c: Compilation) -> Compilation:
    return replace(c, rewriting=rewrite(c.program, c.prefix))


def windows_pass(c: Compilation) -> Compilation:
    unit = Fraction(UNIT_SECONDS[c.unit])
    default = c.options.windows_unit
    ops = []
    for fresh in c.rewriting.fresh:
        try:
            distances = tuple(sorted(fresh.window.distances(unit, default)))
        except ProgramError as error:
            raise ProgramError(f"{error.message} (time unit '{c.unit}')", hint=error.hint) from None
        ops.append(WindowOp(fresh.name, sig_str(fresh.pred), fresh.mode, fresh.count, distances, str(fresh.window),
                            complete=c.options.complete_windows and fresh.mode == "always"))
    return replace(c, windows=tuple(ops))


def external_atoms(program: Program) -> tuple[tuple[str, str], ...]:
    """(clingo function, "&f(...) at file:line:col") of each external atom, first occurrence per function."""
    out: dict = {}
    for rule in program.rules:
        for item in rule.body:
            if isinstance(item, ExternalLiteral):
                function = item.ast.atom.guards[0].term.name
                out.setdefault(function, f"{str(item).removeprefix('not ')} at {item.loc}")
    return tuple(sorted(out.items()))


def trigger_periods(c: Compilation) -> tuple[int, ...]:
    """Each ``#trigger_frequency`` in time points (the K of ``__sr_tick(K)`` indexes them)."""
    unit = Fraction(UNIT_SECONDS[c.unit])
    out = []
    for window in c.rewriting.triggers:
        scale = UNIT_SECONDS[window.unit or c.options.windows_unit] / unit \
            if (window.unit or c.options.windows_unit) else Fraction(1)
        period = window.size * scale
        if period.denominator != 1:
            rule = next((r for r in c.program.rules if getattr(r, "trigger", None) == window), None)
            loc = getattr(rule, "loc", None)
            raise ProgramError(f"#trigger_frequency({str(window)[1:-1]}) is not a whole number of time units "
                               f"('{c.unit}')", file=getattr(loc, "file", None), line=getattr(loc, "line", None),
                               hint="give --unit a unit that divides the frequency")
        out.append(int(period))
    return tuple(out)


def group_pass(c: Compilation) -> Compilation:
    strategy = resolve_strategy(c.strategy, bool(c.program.facts))
    if strategy not in KEEPING_STRATEGIES:
        return replace(c, strategy=strategy, groups=tuple(c.analysis.order))
    with_windows = {sig_str(p) for r in c.program.rules for p in r.head_preds
                    if any(isinstance(b, StreamingLiteral) for b in r.body)}
    groups: list[list] = []
    for macro in c.analysis.order:
        plain_open = False
        for comp in macro:
            if comp & with_windows:
                groups.append([comp])
                plain_open = False
            elif plain_open:
                groups[-1].append(comp)
            else:
                groups.append([comp])
                plain_open = True
    return replace(c, strategy=strategy, groups=tuple(tuple(g) for g in groups))


def stages_pass(c: Compilation) -> Compilation:
    temporary = c.temporary
    windows = {w.signature: w for w in c.windows}
    stages = []
    for group in c.groups:
        preds = frozenset().union(*group)
        rules = [r for r in c.rewriting.rules if r.kind == "atom" and sig_str(r.head_pred) in preds]
        if not rules:
            continue           # only background facts: true at every time point
        stages.append(_stage(c, f"S{len(stages) + 1}", rules, windows, temporary,
                             components=tuple(tuple(sorted(comp)) for comp in group)))
    choice = c.analysis.choice
    rules = [r for r in c.rewriting.rules if r.kind != "atom" or sig_str(r.head_pred) in choice]
    if rules:
        stage = _stage(c, f"S{len(stages) + 1}", rules, windows, temporary, choice=True,
                       components=(tuple(sorted(choice)),) if choice else ())
        for window in stage.windows:
            if window.observed in choice and 0 in window.distances:
                raise ProgramError(
                    f"the window '{window.written}' over {window.observed} reads the current time point, where the "
                    f"choice part is still being decided", file=c.program.file,
                    hint="let windows over chosen atoms read earlier time points only, e.g. {1} or {1,2}")
        stages.append(stage)
    program = c.program
    o = c.options
    topology = Topology(
        source=AtomSource(unit=c.unit, background=tuple(str(f.symbol) for f in program.facts),
                          number_unit=o.number_unit, now_format=o.now_format, triggers=trigger_periods(c),
                          scripts=o.scripts, externals=external_atoms(program)),
        stages=tuple(stages),
        output=ModelOutput(shows=None if program.shows is None else tuple(sig_str(s) for s in program.shows),
                           temporary=tuple(sorted(sig_str(s) for s in temporary)), keep=c.keep),
        name=c.name or program.file, label="rules",
        notes=RulesNotes(program=program.file,
                         order=tuple(tuple(tuple(sorted(comp)) for comp in macro) for macro in c.analysis.order),
                         tau=c.rewriting.tau, grouping=c.strategy))
    return replace(c, topology=topology)


def _choice_key(rules, windows, domains, heads):
    """A choice part is keyed when it splits into one problem per key (``rules.keys.choice_key``). It runs whole
    with declared input domains (``#external``: their conditions may read any key's atoms), and with a window
    over what it chooses: a time point without an answer set for one key has none at all, so no key's choice
    of it may be read at the next time point, which a partition cannot know while it solves its own keys."""
    if domains or any(w.observed in heads for w in windows):
        return ONE_PARTITION
    return choice_key(rules, windows)


def _stage(c: Compilation, stage_id: str, rules, windows: dict, temporary: frozenset, components=(),
           choice: bool = False) -> RuleStage:
    """The rule stage of a group of flat rules: what it reads, derives and shows, its windows and key (the
    choice part's only where it splits into one problem per key: a constraint may relate any atoms)."""
    lines, inputs, heads = [], set(), []
    for rule in rules:
        lines.append(rule.asp())
        for literal in rule.body:
            inputs.update(sig_str(term_signature(a.symbol)) for a in symbolic_atoms(literal))
        if rule.kind in ("choice", "disjunction"):
            inputs.update(sig_str(term_signature(a.symbol)) for e in rule.head.elements
                          for a in symbolic_atoms(e.condition))
        for head in (sig_str(h) for h in rule.head_preds):
            if head not in heads:
                heads.append(head)
        if rule.kind == "atom" and not rule.temp and rule.head_pred in temporary:
            # marks atoms derived by a rule of form (1): they persist although the predicate has #temp rules
            lines.append(rule.asp(head=f"{c.keep}({rule.head.atom.symbol})"))
    keeps = any(r.kind == "atom" and not r.temp and r.head_pred in temporary for r in rules)
    domains = [d for d in c.program.domains if sig_str(d.pred) in inputs] if choice else []
    for domain in domains:          # what a domain's condition reads is bridged into the stage too
        inputs.update(sig_str(term_signature(a.symbol)) for a in symbolic_atoms(domain.statement.body))
    stage_windows = tuple(windows[s] for s in sorted(inputs) if s in windows)
    return RuleStage(
        id=stage_id, key=_choice_key(rules, stage_windows, domains, heads) if choice else partition_key(
            rules, stage_windows),
        rules="\n".join(lines),
        inputs=tuple(sorted(inputs)), heads=tuple(heads), shown=tuple(heads) + ((f"{c.keep}/1",) if keeps else ()),
        windows=stage_windows, recursive=not choice and any(r.origin in c.analysis.recursive_rules for r in rules),
        components=components, choice=choice, domains=tuple(str(d) for d in domains))


PASSES = (("analyse", analyse_pass), ("rewrite", rewrite_pass), ("windows", windows_pass), ("group", group_pass),
          ("stages", stages_pass))


def compile_program(program: Program, *, unit: str = "sec", strategy: str = "auto", prefix: str = GENERATED_PREFIX,
                    name: str = "", options: Options | None = None) -> Topology:
    """The rules topology of a parsed program (see the module docstring); raises ProgramError. ``unit`` is
    ``options.unit`` when options are given."""
    options = options if options is not None else Options(unit=unit)
    compilation = Compilation(program, unit=options.unit, strategy=strategy, prefix=prefix, name=name,
                              options=options)
    for _name, step in PASSES:
        compilation = step(compilation)
    return compilation.topology


def topology_from_file(path: str, *, strategy: str = "auto", options: Options | None = None) -> Topology:
    """Parse an I-DLV-sr program file and compile its rules topology (``srtopo.kinds``)."""
    from srtopo.rules.parse import parse_file
    return compile_program(parse_file(path), strategy=strategy, options=options)
