"""Evaluate a Streamlog program timestamp by timestamp with clingo, emitting each timestamp's facts once it is
complete.

The rules are ground per timestamp ``now`` in one kept clingo Control (``solving.StepSolver``): every rule's
head timestamp is bound to ``now``; goals at ``now`` read the predicates, goals at earlier timestamps read their
history copies (``split``: the bistate program with timestamps kept), so a timestamp costs the grounding of what
is new at it joined with the history, not a re-solve of the whole history. A rule whose head timestamp no goal
has (``h(T) :- a(T0), T = T0 + 1``) also schedules that timestamp, so that it is visited even when no input
reaches it.

State: the Control is compacted to the facts rules read at earlier timestamps (``Evaluator``). ``retain=N`` bounds
it for long runs: the Control is rebuilt every N timestamps with only the facts of the last N timestamps, after
which a rule that looks further back than N sees less than the unbounded semantics would.
"""
from __future__ import annotations

import re
import weakref
from collections import deque
from dataclasses import dataclass

from clingo import Symbol, ast

from srtopo.errors import ProgramError
from srtopo.ir.records import Model
from srtopo.logic.syntax import clingo_error
from srtopo.solving import StepSolver, grounding_errors
from srtopo.streamlog.program import NOW, Program, now_term, substitute
from srtopo.streamlog.split import old_name, split_rule, split_schedule

NEXT = "__sl_next"


def _vars(n: int) -> str:
    return ",".join(f"X{i}" for i in range(1, n + 1))


def _at_now(node):
    """The rule with its head timestamp bound to the step's ``now``."""
    head_ts = node.head.atom.symbol.arguments[0]
    if head_ts.ast_type == ast.ASTType.Variable:
        return substitute(node, head_ts.name, now_term(head_ts.location))
    guard = ast.Literal(head_ts.location, ast.Sign.NoSign,
                        ast.Comparison(now_term(head_ts.location), [ast.Guard(ast.ComparisonOperator.Equal, head_ts)]))
    return node.update(body=list(node.body) + [guard])


def _schedule(node):
    """``__sl_next(now, Th) :- <the rule's body without negation>, Th > now``: a timestamp to visit later."""
    head_ts = node.head.atom.symbol.arguments[0]
    loc = node.location
    body = [lit for lit in node.body if not (lit.ast_type == ast.ASTType.Literal and lit.sign != ast.Sign.NoSign)]
    body.append(ast.Literal(loc, ast.Sign.NoSign, ast.Comparison(head_ts, [ast.Guard(
        ast.ComparisonOperator.GreaterThan, now_term(loc))])))
    head = ast.Literal(loc, ast.Sign.NoSign, ast.SymbolicAtom(ast.Function(loc, NEXT, [now_term(loc), head_ts], False)))
    return node.update(head=head, body=body)


@dataclass(frozen=True)
class StepProgram:
    """What the solver grounds: ``base`` once, ``step`` per timestamp; ``slots`` are the temporal signatures the
    inputs of a step are given for (``@sl_in(k)``), in order."""
    base: str
    step: str
    slots: tuple


def _bridges(slots: tuple, kept: frozenset, function: str) -> str:
    """History copies of the kept predicates, filled from ``@function(k)``."""
    return "".join(f"{old_name(name)}({_vars(n)}) :- {name}({_vars(n)}) = @{function}({k}).\n"
                   for k, (name, n) in enumerate(slots) if (name, n) in kept)


def step_program(program: Program, extra_shown=frozenset()) -> StepProgram:
    """Goals at earlier timestamps read the history copies (``split``): ``@sl_old`` fills them when the Control
    is (re)built, ``@sl_prev`` with what the steps since derived."""
    slots = tuple(sorted(program.temporal))
    shown = sorted(program.shown | extra_shown)
    kept, temporal = program.history, set(program.temporal)
    base = "".join(f"{text}\n" for text in program.background) + _bridges(slots, kept, "sl_old")
    parts = [f"{name}({_vars(n)}) :- {name}({_vars(n)}) = @sl_in({k}).\n" for k, (name, n) in enumerate(slots)]
    parts.append(_bridges(slots, kept, "sl_prev"))
    for rule in program.rules:
        if not rule.temporal:
            continue
        parts += [f"{_at_now(node)}\n" for node in split_rule(rule.node, temporal)]
        if not rule.anchored:
            parts += [f"{node}\n" for node in split_schedule(_schedule(rule.node), temporal)]
    # signature shows are global; the solver reads the shown facts each step's grounding derives
    parts += [f"#show {name}/{n}.\n" for name, n in shown]
    parts.append(f"#show {NEXT}/2.\n")
    return StepProgram(base, "".join(parts), slots)


#: id of a live Program -> (grounding errors of its text, its StepProgram): an evaluator of a program already seen
#: skips both analyses (a key partition's evaluator is made again at each restore, from the same Program); an entry
#: goes when its Program does
_PLANS: dict = {}


def _plan(program: Program) -> tuple[list, StepProgram | None]:
    """The clingo errors of the program's text and its step program, once per Program object (it is frozen)."""
    entry = _PLANS.get(id(program))
    if entry is None:
        errors = grounding_errors(program.source_text) if program.source_text else []
        entry = _PLANS[id(program)] = (errors, None if errors else step_program(program, program.history))
        weakref.finalize(program, _PLANS.pop, id(program), None)
    return entry


class _Context:
    def __init__(self, inputs: list, old: list | None = None, prev: list | None = None):
        self.inputs = inputs
        self.old = old
        self.prev = prev

    def sl_in(self, k):
        return self.inputs[k.number] if self.inputs else []

    def sl_old(self, k):
        return self.old[k.number] if self.old else []

    def sl_prev(self, k):
        return self.prev[k.number] if self.prev else []


class Evaluator:
    """Feed it complete timestamps in increasing order; it returns each one's shown facts (and keeps the state).

    The kept Control is compacted now and then: rebuilt with only the facts of the predicates some rule reads at
    an earlier timestamp (``Program.history``), kept on the Python side as they are derived. Intermediate facts
    (``path`` when only ``minpath`` is read back) are dropped, which keeps grounding a rule that is recursive at
    the current timestamp from scanning their whole past (clingo's grounder does, step after step). The output is
    the same; ``retain`` additionally drops history facts older than ``retain`` timestamps."""

    #: compact once the Control holds this many times the atoms a rebuild keeps (and at least MIN_ATOMS)
    GROWTH = 3
    MIN_ATOMS = 20_000
    #: ... or once it has ground this many steps: clingo keeps the indices of every step's rules and visits them
    #: all at each grounding, so a step costs more the more steps the Control has ground, whatever they derived
    STEPS = 256

    def __init__(self, program: Program, retain: int | None = None):
        program.check()
        errors, plan = _plan(program)
        if errors:
            raise _located(errors[0], program.file)
        if retain is not None and retain < 1:
            raise ProgramError(f"retain must be at least 1 timestamp, got {retain}")
        self.program = program
        self.retain = retain
        self.kept_sigs = program.history
        self.plan = plan
        self.slot = {sig: k for k, sig in enumerate(self.plan.slots)}
        self.solver = StepSolver(self.plan.base, self.plan.step, NOW)
        self.solver.reset()
        self.kept: deque = deque()           # (timestamp, history atoms at it), for a rebuild
        self.kept_atoms = 0
        self.fresh: list | None = None       # per slot: history atoms of the last step, not yet in the copies
        self.steps = 0                       # steps ground since the Control was built
        self.rebuilt_at = None

    def evaluate(self, now: int, inputs: dict) -> tuple[list[Symbol], list[int]]:
        """The shown atoms at ``now`` and the later timestamps some rule scheduled. ``inputs``: signature ->
        list of atoms (Symbols with their timestamp first) at ``now``."""
        self._maybe_rebuild(now)
        lists = [[] for _ in self.plan.slots]
        for sig, atoms in inputs.items():
            lists[self.slot[sig]] = atoms
        found = self.solver.step(now, _Context(lists, prev=self.fresh))
        self.fresh = None
        atoms, later, history = [], [], []
        shown, kept = self.program.shown, self.kept_sigs
        for sym in found:
            if sym.name == NEXT:
                later.append(sym.arguments[1].number)
                continue
            sig = (sym.name, len(sym.arguments))
            if sig in kept:
                history.append(sym)
            if sig in shown:
                atoms.append(sym)
        if history:
            self.kept.append((now, history))
            self.kept_atoms += len(history)
            self.fresh = [[] for _ in self.plan.slots]
            for a in history:
                self.fresh[self.slot[(a.name, len(a.arguments))]].append(a)
        return atoms, later

    def restore(self, kept: list, rebuilt_at: int | None) -> None:
        """Continue from the history ``kept`` ((timestamp, atoms) pairs, oldest first) of an earlier evaluator:
        a Control holding those facts sees what the earlier one saw, since rules read earlier timestamps only
        through the history predicates."""
        self.kept = deque(kept)
        self.kept_atoms = sum(len(atoms) for _t, atoms in kept)
        self._reset_with_kept()
        self.rebuilt_at = rebuilt_at

    def _maybe_rebuild(self, now: int) -> None:
        if self.rebuilt_at is None:
            self.rebuilt_at = now
            return
        self.steps += 1
        if self.retain is None:
            # a compaction keeps every fact, so when it happens does not show in the output nor in the state
            if self.steps >= self.STEPS or self.solver.atoms() > max(self.MIN_ATOMS, self.GROWTH * self.kept_atoms):
                self._reset_with_kept()
            return
        if now - self.rebuilt_at >= self.retain:
            while self.kept and self.kept[0][0] < now - self.retain:
                self.kept_atoms -= len(self.kept.popleft()[1])
            self._reset_with_kept()
            self.rebuilt_at = now

    def _reset_with_kept(self) -> None:
        old = [[] for _ in self.plan.slots]
        # the history goes by slot; reading a Symbol's arguments is a foreign call per argument, so the
        # signature is found from the name when no two kept predicates share one
        by_name = {sig[0]: sig for sig in self.kept_sigs}
        if len(self.kept_sigs) == 1:
            old[self.slot[next(iter(self.kept_sigs))]] = [a for _t, atoms in self.kept for a in atoms]
        elif len(by_name) == len(self.kept_sigs):
            for _t, atoms in self.kept:
                for a in atoms:
                    old[self.slot[by_name[a.name]]].append(a)
        else:
            for _t, atoms in self.kept:
                for a in atoms:
                    old[self.slot[(a.name, len(a.arguments))]].append(a)
        self.solver.reset(_Context([], old))
        self.fresh, self.steps = None, 0


def _located(message: str, file: str) -> ProgramError:
    unsafe = re.findall(r"'([^']+)' is unsafe", message)
    detail = f"unsafe rule: {', '.join(unsafe)} not bound by a positive goal" if unsafe else None
    return clingo_error(message, file, detail, hint="Streamlog rules must be safe, as in ASP: bind the head's "
                                                    "timestamp by a goal at it, e.g. previous(T,X) :- msg(T,_), "
                                                    "msg(T0,X), T0 < T.") \
        or ProgramError(" ".join(message.split()), file=file)


def model(now: int, atoms: list) -> Model:
    return Model(now, tuple(sorted(str(a) for a in atoms)))
