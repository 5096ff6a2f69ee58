"""Time-point-by-time-point evaluation: the streaming model of seed 000, section 3, computed as in 4.2.

At time point n, for each subprogram in processing order: evaluate its window operators over the stored
history (persistent outcomes of earlier time points) and the current set, hand S_n, O_n and the holding
fresh atoms to clingo, add the answer to O_n, and repeat while a streaming-recursive subprogram derives
something new. What is stored for n is the persistent outcome: everything except atoms derived only by
``#temp`` rules (and not in S_n). History older than the largest window distance is dropped.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable

from clingo import Function, Number, Symbol, ast

from srtopo.errors import ProgramError
from srtopo.rules.analysis import Analysis, analyse
from srtopo.rules.ir import GENERATED_PREFIX, UNIT_SECONDS, Program, StreamingLiteral, sig_str, term_signature
from srtopo.rules.rewrite import FreshPredicate, Rewriting, rewrite
from srtopo.rules.solver import STRATEGIES, SubprogramSpec, make_solver

_EMPTY: frozenset = frozenset()


@dataclass
class Subprogram:
    components: tuple
    rules: tuple
    input_sigs: tuple
    head_sigs: tuple
    fresh: dict                    # input sig -> (FreshPredicate, sorted distances)
    recursive: bool
    solver: object
    text: str = ""
    has_keep: bool = False


class StepResult:
    """The streaming model at ``time`` (all atoms, #show not applied), grouped by predicate; the flat set is
    built on first use only (hashing 60k clingo Symbols costs milliseconds per time point)."""

    def __init__(self, time: int, by_sig: dict):
        self.time = time
        self.by_sig = by_sig
        self._atoms = None

    @property
    def atoms(self) -> frozenset:
        if self._atoms is None:
            self._atoms = frozenset().union(*self.by_sig.values()) if self.by_sig else frozenset()
        return self._atoms

    def __len__(self) -> int:
        return sum(len(s) for s in self.by_sig.values())


def _body_sigs(node, out: set) -> None:
    if isinstance(node, ast.AST):
        if node.ast_type == ast.ASTType.SymbolicAtom:
            out.add(term_signature(node.symbol))
            return
        for key in node.keys():
            _body_sigs(getattr(node, key), out)
    elif isinstance(node, (list, tuple)) or type(node).__name__ == "ASTSequence":
        for child in node:
            _body_sigs(child, out)


class Reasoner:
    """Feed one time point per ``step`` call (empty lists for empty time points)."""

    def __init__(self, program: Program, *, strategy: str = "auto", unit: str = "sec",
                 prefix: str = GENERATED_PREFIX):
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        if unit not in UNIT_SECONDS:
            raise ProgramError(f"unknown time unit '{unit}'", hint="use " + ", ".join(sorted(UNIT_SECONDS)))
        self.program = program
        if strategy == "auto":
            # background facts fix (most of) the input domain: that is where kept Controls pay off
            # (Photo-voltaic); small per-time-point programs over open stream domains restart cheaper
            strategy = "incremental" if program.facts else "restart"
        self.strategy = strategy
        self.analysis: Analysis = analyse(program)
        self.rewriting: Rewriting = rewrite(program, prefix)
        unit_seconds = UNIT_SECONDS[unit]
        self.keep_name = f"{prefix or GENERATED_PREFIX}keep"
        self.temp_sigs = frozenset(r.head_pred for r in program.rules if r.temp)
        facts: dict = {}
        for fact in program.facts:
            facts.setdefault(fact.pred, set()).add(fact.symbol)
        self.facts = {sig: frozenset(s) for sig, s in facts.items()}
        self.max_distance = 0
        distances = {}
        for fp in self.rewriting.fresh:
            try:
                d = sorted(fp.window.distances(Fraction(unit_seconds)))
            except ValueError as error:
                raise ProgramError(f"{error} (time unit '{unit}')") from None
            distances[fp.name] = d
            self.max_distance = max(self.max_distance, max(d))
        fresh_by_sig = {(fp.name, fp.arity): (fp, distances[fp.name]) for fp in self.rewriting.fresh}
        groups = self.analysis.order if strategy == "restart" else self._incremental_groups()
        self.subprograms: list[Subprogram] = []
        for group in groups:
            preds = frozenset().union(*group)
            rules = [r for r in self.rewriting.rules
                     if sig_str(term_signature(r.head.atom.symbol)) in preds]
            if not rules:
                continue           # only background facts: added at every time point
            self.subprograms.append(self._subprogram(group, rules, fresh_by_sig, strategy))
        self.history: dict[int, dict] = {}
        self.time = 0

    def _incremental_groups(self) -> list[tuple]:
        """Split macro-nodes for kept Controls: a component with window literals (whose fresh inputs follow
        the stream and may never settle) gets its own Control; consecutive components without them share
        one, so their intermediate atoms never leave clingo."""
        with_windows = {sig_str(r.head_pred) for r in self.program.rules
                        if any(isinstance(b, StreamingLiteral) for b in r.body)}
        groups: list[list] = []
        for macro in self.analysis.order:
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
        return [tuple(g) for g in groups]

    def _subprogram(self, group, rules, fresh_by_sig, strategy) -> Subprogram:
        lines, body_sigs, heads = [], set(), []
        for rule in rules:
            lines.append(rule.asp())
            for lit in rule.body:
                _body_sigs(lit, body_sigs)
            sig = term_signature(rule.head.atom.symbol)
            if sig not in heads:
                heads.append(sig)
            if not rule.temp and sig in self.temp_sigs:
                # marks atoms derived by a rule of form (1): they persist although the predicate has #temp rules
                lines.append(rule.asp(head=f"{self.keep_name}({rule.head.atom.symbol})"))
        shown = list(heads)
        if any(not r.temp and term_signature(r.head.atom.symbol) in self.temp_sigs for r in rules):
            shown.append((self.keep_name, 1))
        inputs = tuple(sorted(body_sigs))
        # a fresh predicate's input atoms are the observed p-atoms themselves (p_auxK(X) :- p(X) = @sr_in(k))
        match = tuple(fresh_by_sig[sig][0].pred[0] if sig in fresh_by_sig else sig[0] for sig in inputs)
        spec = SubprogramSpec("\n".join(lines), inputs, tuple(shown), match)
        recursive = any(r.origin in self.analysis.recursive_rules for r in rules)
        fresh = {sig: fresh_by_sig[sig] for sig in inputs if sig in fresh_by_sig}
        return Subprogram(group, tuple(rules), inputs, tuple(heads), fresh, recursive,
                          make_solver(strategy, spec, self.facts), spec.rules_text, len(shown) > len(heads))

    # ------------------------------------------------------------------ windows
    def _observed(self, pred, distances, current, t):
        sets = []
        for d in distances:
            if d == 0:
                sets.append(current.get(pred, _EMPTY))
            elif t - d >= 0:
                past = self.history.get(t - d)
                sets.append(past.get(pred, _EMPTY) if past is not None else _EMPTY)
        return sets

    def _window(self, fp: FreshPredicate, distances, current, t) -> set:
        """Ground fresh atoms p_auxK(args[,count]) that hold at t (Table 1 of seed 000)."""
        if fp.mode == "at_least" and fp.count == 1:
            return self._union_window(fp, distances, current, t)
        sets = self._observed(fp.pred, distances, current, t)
        if not sets:
            return set()
        if False:
            pass
        elif fp.mode == "always":
            ordered = sorted(sets, key=len)
            holding = set(ordered[0]).intersection(*ordered[1:])
        else:
            counts = Counter()
            for s in sets:
                counts.update(s)
            if fp.mode == "at_least":
                holding = {a for a, c in counts.items() if c >= fp.count}
            elif fp.mode == "count_eq":
                holding = {a for a, c in counts.items() if c == fp.count}
            else:
                name = fp.pred[0]
                return {Function(name, list(a.arguments) + [Number(c)]) for a, c in counts.items()}
        return holding

    def _union_window(self, fp: FreshPredicate, distances, current, t) -> list:
        """``p in W``: the observed atoms of p themselves, concatenated (duplicates are harmless); the solver's
        bridging rule renames them to the fresh predicate, so no clingo Symbol is built or hashed here."""
        out: list = []
        for s in self._observed(fp.pred, distances, current, t):
            out.extend(s)
        return out

    # ------------------------------------------------------------------ one time point
    def step(self, atoms: Iterable[Symbol]) -> StepResult:
        t = self.time
        stream: dict = {}
        for a in atoms:
            stream.setdefault((a.name, len(a.arguments)), set()).add(a)
        current: dict = dict(self.facts)
        for sig, s in stream.items():
            current[sig] = s | current[sig] if sig in current else set(s)
        keep = set()
        keep_name = self.keep_name
        for sub in self.subprograms:
            while True:
                inputs = {}
                for sig in sub.input_sigs:
                    spec = sub.fresh.get(sig)
                    inputs[sig] = (self._window(spec[0], spec[1], current, t) if spec is not None
                                   else current.get(sig, _EMPTY))
                out = sub.solver.solve(inputs)
                changed = self._merge(out, sub, current, keep, keep_name)
                if not (sub.recursive and changed):
                    break
        persisted = {}
        for sig, s in current.items():
            if sig in self.temp_sigs:
                given = stream.get(sig, _EMPTY)
                kept = frozenset(a for a in s if a in keep or a in given)
                if kept:
                    persisted[sig] = kept
            else:
                persisted[sig] = s
        self.history[t] = persisted
        for old in [k for k in self.history if k <= t - self.max_distance]:
            del self.history[old]
        self.time = t + 1
        return StepResult(t, current)

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
            for a in out:
                if a.name == keep_name:
                    keep.add(a.arguments[0])
                    continue
                sig = (a.name, len(a.arguments))
                s = current.get(sig)
                if not isinstance(s, set):
                    s = current[sig] = set(s) if s is not None else set()
                s.add(a)
        return sum(len(current.get(sig, _EMPTY)) for sig in sub.head_sigs) != before

    def run(self, timeline: Iterable[Iterable[Symbol]]) -> list[StepResult]:
        return [self.step(atoms) for atoms in timeline]

    def shown(self, atoms) -> list[str]:
        """Sorted text of the atoms to output: ``#show`` respected, otherwise every atom."""
        shows = self.program.shows
        if isinstance(atoms, StepResult):
            if shows is not None:
                return sorted(str(a) for sig in shows for a in atoms.by_sig.get(sig, ()))
            atoms = atoms.atoms
        if shows is not None:
            allowed = set(shows)
            atoms = [a for a in atoms if (a.name, len(a.arguments)) in allowed]
        return sorted(str(a) for a in atoms)


