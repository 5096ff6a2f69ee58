"""Time-point-by-time-point evaluation of a rules topology: the streaming model of "I-DLV-sr: A Stream
Reasoning System based on I-DLV" (section 3), computed as in its section 4.2.

At time point n, for each rule stage (subprogram) in processing order: evaluate its window operators over the stored
history (persistent outcomes of earlier time points) and the current set, hand S_n, O_n and the holding
fresh atoms to clingo, add the answer to O_n, and repeat while a streaming-recursive subprogram derives
something new. What is stored for n is the persistent outcome: everything except atoms derived only by
``#temp`` rules (and not in S_n). History older than the largest window distance is dropped.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Iterator

from clingo import Function, Number, Symbol

from srtopo.errors import ProgramError
from srtopo.ir.topology import RuleStage, Topology, WindowOp, predicate_arity, predicate_name
from srtopo.rules.clock import NOW_SIG, Clock
from srtopo.logic.atoms import symbol_signature, symbol_text
from srtopo.rules.compile import Options, compile_program, resolve_strategy
from srtopo.rules.ir import GENERATED_PREFIX, Program
from srtopo.rules.parse import parse_facts
from srtopo.solving import SubprogramSpec, check_strategy, make_choice_solver, make_solver
from srtopo.solving.externals import ExternalFunctions

_EMPTY: frozenset = frozenset()


def signature(text: str) -> tuple[str, int]:
    """``"p/2"`` -> ``("p", 2)``."""
    return predicate_name(text), predicate_arity(text)


@dataclass
class Subprogram:
    """A rule stage ready to run: its solver, and its inputs and heads as (name, arity) pairs."""
    stage: RuleStage
    input_sigs: tuple
    head_sigs: tuple
    windows: dict                  # input sig -> WindowOp
    solver: object
    has_keep: bool

    @property
    def recursive(self) -> bool:
        return self.stage.recursive


class StepResult:
    """The streaming model at ``time`` (all atoms, #show not applied), grouped by predicate; the flat set is
    built on first use only (hashing 60k clingo Symbols costs milliseconds per time point)."""

    def __init__(self, time: int, by_sig: dict, satisfiable: bool = True, persisted: dict | None = None):
        self.time = time
        self.by_sig = by_sig
        self.satisfiable = satisfiable      # False: the choice part has no answer set at this time point
        self.persisted = persisted          # the persistent outcome at ``time``, by predicate
        self._atoms = None

    @property
    def atoms(self) -> frozenset:
        if self._atoms is None:
            self._atoms = frozenset().union(*self.by_sig.values()) if self.by_sig else frozenset()
        return self._atoms

    def __len__(self) -> int:
        return sum(len(s) for s in self.by_sig.values())


@dataclass(frozen=True)
class Repeat:
    """The models of the ``count`` empty time points from ``start``: those of ``period`` (the models of the
    len(period) time points before ``start``) over and over, as a stretch whose state repeats gives them."""
    start: int
    count: int
    period: tuple

    def results(self) -> Iterator[StepResult]:
        for k in range(self.count):
            yield self.at(self.start + k)

    def at(self, time: int) -> StepResult:
        """The model at ``time`` (one of the stretch's)."""
        base = self.period[(time - self.start) % len(self.period)]
        return StepResult(time, base.by_sig, base.satisfiable, base.persisted)


class Reasoner:
    """Feed one time point per ``step`` call (empty lists for empty time points).

    Built from a rules topology (``srtopo.rules.compile``), or from a parsed program, which is compiled with
    ``unit``, ``strategy`` and ``prefix`` first."""

    def __init__(self, program: Program | Topology, *, strategy: str = "auto", unit: str = "sec",
                 prefix: str = GENERATED_PREFIX, options: Options | None = None):
        check_strategy(strategy)
        self.choice_strategy = strategy
        if isinstance(program, Program):
            self.topology = compile_program(program, unit=unit, strategy=strategy, prefix=prefix, options=options)
            background = [f.symbol for f in program.facts]      # already symbols: no second parse
        else:
            self.topology = program.validate()
            if self.topology.kind != "rules":
                raise ProgramError(f"'{self.topology.name}' is a {self.topology.kind} topology, not a rules one")
            background = parse_facts(self.topology.source.background)
        self.strategy = resolve_strategy(strategy, bool(background))
        output = self.topology.output
        self.keep_name = output.keep
        self.temp_sigs = frozenset(signature(s) for s in output.temporary)
        self.shows = None if output.shows is None else tuple(signature(s) for s in output.shows)
        facts: dict = {}
        for symbol in background:
            facts.setdefault((symbol.name, len(symbol.arguments)), set()).add(symbol)
        self.facts = {sig: frozenset(s) for sig, s in facts.items()}
        self.max_distance = max((max(w.distances) for s in self.topology.stages for w in s.windows), default=0)
        source = self.topology.source
        inputs = {i for s in self.topology.stages for i in s.inputs}
        uses_now = f"{NOW_SIG[0]}/1" in inputs
        self.clock = Clock(source, uses_now) if uses_now or source.triggers else None
        self.externals = None
        if source.externals:
            self.externals = ExternalFunctions(source.scripts, dict(source.externals))
            self.externals.check(f for f, _where in source.externals)
        self.subprograms = [self._subprogram(stage) for stage in self.topology.stages]
        self.history: dict[int, dict] = {}
        self.time = 0
        #: the stream's first time point: windows do not reach before it, triggers count from it (``start_at``)
        self.first = 0

    def _subprogram(self, stage: RuleStage) -> Subprogram:
        inputs = tuple(signature(s) for s in stage.inputs)
        windows = {signature(w.signature): w for w in stage.windows}
        # a window operator's input atoms are the observed atoms themselves (renamed by the bridging rule)
        match = tuple(predicate_name(windows[sig].observed) if sig in windows else sig[0] for sig in inputs)
        spec = SubprogramSpec(stage.rules, inputs, tuple(signature(s) for s in stage.shown), match, stage.domains)
        solver = make_choice_solver(self.choice_strategy, spec, self.facts, self.externals) if stage.choice else \
            make_solver(self.strategy, spec, self.facts, self.externals)
        return Subprogram(stage, inputs, tuple(signature(s) for s in stage.heads), windows, solver,
                          len(stage.shown) > len(stage.heads))

    def start_at(self, time: int) -> None:
        """The stream starts at time point ``time`` (its earliest record), not at 0: the time points before it are
        none of the stream's, as those before a log's first line. Only before the first ``step``."""
        self.time = self.first = time
        if self.clock is not None:
            self.clock.first = time

    def stage_stats(self) -> list[dict]:
        """Per stage: clingo solves and groundings so far."""
        return [{"solves": sub.solver.stats.get("solves", 0), "groundings": sub.solver.stats.get("groundings", 0)}
                for sub in self.subprograms]

    # ------------------------------------------------------------------ windows
    def _observed(self, pred, distances, current, t):
        sets = []
        for d in distances:
            if d == 0:
                sets.append(current.get(pred, _EMPTY))
            elif t - d >= self.first:
                past = self.history.get(t - d)
                sets.append(past.get(pred, _EMPTY) if past is not None else _EMPTY)
        return sets

    def _window(self, op: WindowOp, current, t) -> set:
        """The window operator's atoms p_auxK(args[,count]) that hold at t (Table 1 of "I-DLV-sr: A Stream
        Reasoning System based on I-DLV")."""
        observed = signature(op.observed)
        if op.complete and t - max(op.distances) < self.first:
            return set()        # --complete-windows: no 'always' over a window reaching before the first time point
        if op.mode == "at_least" and op.count == 1:
            return self._union_window(observed, op.distances, current, t)
        sets = self._observed(observed, op.distances, current, t)
        if not sets:
            return set()
        if op.mode == "always":
            ordered = sorted(sets, key=len)
            holding = set(ordered[0]).intersection(*ordered[1:])
        else:
            counts = Counter()
            for s in sets:
                counts.update(s)
            if op.mode == "at_least":
                holding = {a for a, c in counts.items() if c >= op.count}
            elif op.mode == "count_eq":
                holding = {a for a, c in counts.items() if c == op.count}
            else:
                name = observed[0]
                return {Function(name, list(a.arguments) + [Number(c)]) for a, c in counts.items()}
        return holding

    def _union_window(self, observed, distances, current, t) -> list:
        """``p in W``: the observed atoms of p themselves, concatenated (duplicates are harmless); the solver's
        bridging rule renames them to the window operator's predicate, so no clingo Symbol is built here."""
        out: list = []
        for s in self._observed(observed, distances, current, t):
            out.extend(s)
        return out

    # ------------------------------------------------------------------ one time point
    def step(self, atoms: Iterable[Symbol], persistent: frozenset | None = None) -> StepResult:
        """The streaming model at the next time point, given its stream atoms. A stage evaluated apart from the
        stages before it (a partition of a distributed run) gets their atoms as ``atoms`` too, and says with
        ``persistent`` which of them persist (default: all of them, as stream atoms do)."""
        t = self.time
        stream: dict = {}
        for a in atoms:
            stream.setdefault((a.name, len(a.arguments)), set()).add(a)
        current: dict = dict(self.facts)
        for sig, s in stream.items():
            current[sig] = s | current[sig] if sig in current else set(s)
        clock = self.clock.atoms(t) if self.clock is not None else {}
        current.update(clock)
        keep = set()
        keep_name = self.keep_name
        satisfiable = True
        for sub in self.subprograms:
            while True:
                inputs = {}
                for sig in sub.input_sigs:
                    op = sub.windows.get(sig)
                    inputs[sig] = self._window(op, current, t) if op is not None else current.get(sig, _EMPTY)
                out = sub.solver.solve(inputs)
                if out is None:                 # the choice part has no answer set: it adds nothing
                    satisfiable = False
                    break
                changed = self._merge(out, sub, current, keep, keep_name)
                if not (sub.recursive and changed):
                    break
        for sig in clock:
            del current[sig]
        persisted = {}
        for sig, s in current.items():
            if sig in self.temp_sigs:
                given = stream.get(sig, _EMPTY) if persistent is None else persistent
                kept = frozenset(a for a in s if a in keep or a in given)
                if kept:
                    persisted[sig] = kept
            else:
                persisted[sig] = s
        self.history[t] = persisted
        self.persisted = persisted     # the persistent outcome at t (kept even when no window needs it)
        for old in [k for k in self.history if k <= t - self.max_distance]:
            del self.history[old]
        self.time = t + 1
        return StepResult(t, current, satisfiable, persisted)

    @staticmethod
    def _merge(out, sub, current, keep, keep_name) -> bool:
        """Add a subprogram's answer to O_n; True if something new was derived."""
        before = sum(len(current.get(sig, _EMPTY)) for sig in sub.head_sigs)
        if len(sub.head_sigs) == 1 and not sub.has_keep:      # bulk path (e.g. Heavy Join's 200k atoms)
            sig = sub.head_sigs[0]
            s = current.get(sig)
            if not isinstance(s, set):
                s = current[sig] = set(s) if s is not None else set()
            s.update(out)
        else:
            for a in out:       # kept signatures: asking clingo for each was a third of a Content Caching step
                sig = symbol_signature(a)
                if sig[0] == keep_name:
                    keep.add(a.arguments[0])
                    continue
                s = current.get(sig)
                if not isinstance(s, set):
                    s = current[sig] = set(s) if s is not None else set()
                s.add(a)
        return sum(len(current.get(sig, _EMPTY)) for sig in sub.head_sigs) != before

    def advance(self, last: int, every: bool = True, check=None) -> Iterator[StepResult]:
        """Evaluate the empty time points from the next one to ``last``; yield each one's model when ``every``
        (``stretch`` says what it costs; ``check`` is called before each evaluation: a signal stops there)."""
        for item in self.stretch(last, check):
            if not every:
                continue
            if isinstance(item, Repeat):
                yield from item.results()
            else:
                yield item

    def stretch(self, last: int, check=None) -> Iterator[StepResult | Repeat]:
        """Evaluate the empty time points from the next one to ``last``: a ``StepResult`` per time point evaluated,
        and a ``Repeat`` for the time points jumped over.

        A long empty stretch costs what its windows need, not one evaluation per time point: the state an empty
        time point starts from is the persistent outcomes of the max-window time points before it and where the
        ``#trigger_frequency`` periods stand, and the next state is a function of it. So the states of a stretch
        repeat, with some period p (one when the outcomes settle, two when an atom comes and goes, a multiple of
        the triggers' period), and once a state comes back the evaluator jumps to the end of the stretch by a
        multiple of p, shifting its history. The repeat is found by Brent's cycle detection: the state is
        compared with one saved at power-of-two distances, so a stretch costs a few evaluations more than its
        transient and its period. ``@now`` changes at every time point, so a program that reads it evaluates
        each one."""
        detect = not (self.clock is not None and self.clock.uses_now)
        width = self.max_distance
        saved = None            # the state saved last (Brent's tortoise)
        power = 1
        since: list = []        # the results from the saved state's time point on
        while self.time <= last:
            if check is not None:
                check()
            if detect and self.time - width >= self.first:
                state = self._state()
                if saved is not None and state == saved:
                    period = tuple(since)
                    jump = (last + 1 - self.time) // len(period) * len(period)
                    if jump:
                        yield Repeat(self.time, jump, period)
                        self.history = {t + jump: past for t, past in self.history.items()}
                        self.time += jump
                        self.persisted = period[-1].persisted
                    detect = False      # what is left is shorter than the period
                    continue
                if saved is None or len(since) == power:
                    if saved is not None:
                        power *= 2
                    saved, since = state, []
            result = self.step(())
            if saved is not None:
                since.append(result)
            yield result

    def _state(self) -> tuple:
        """What the evaluation of the next empty time point depends on: the persistent outcomes its windows can
        read, and the triggers' phase."""
        t = self.time
        past = tuple(self.history.get(k) for k in range(t - self.max_distance, t))
        if self.clock is not None and self.clock.periods:
            return past, self.clock.phase(t)
        return past, None

    def run(self, timeline: Iterable[Iterable[Symbol]]) -> list[StepResult]:
        return [self.step(atoms) for atoms in timeline]

    def shown(self, atoms) -> list[str]:
        """Sorted text of the atoms to output: ``#show`` respected, otherwise every atom (none at a time point
        whose choice part has no answer set)."""
        shows = self.shows
        if isinstance(atoms, StepResult) and not atoms.satisfiable:
            return []
        if isinstance(atoms, StepResult):
            if shows is not None:
                return sorted(symbol_text(a) for sig in shows for a in atoms.by_sig.get(sig, ()))
            atoms = atoms.atoms
        if shows is not None:
            allowed = set(shows)
            atoms = [a for a in atoms if (a.name, len(a.arguments)) in allowed]
        return sorted(symbol_text(a) for a in atoms)
