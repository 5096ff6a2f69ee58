"""Rewrite an I-DLV-sr program into the flat program P' and the mapping tau ("I-DLV-sr: A Stream Reasoning System based on I-DLV",
section 4.1).

Each non-degenerate streaming literal ``p(t) OP in W`` becomes a fresh atom ``p_auxK(t)`` (``p_auxK(t, X)``
for ``count X``); ``at most c`` becomes ``not p_auxK(t)`` with p_auxK meaning ``at least c+1``. Literals with
the same predicate, operator and window share a fresh predicate. A counting term that is a variable
(``at least X``), and a positive ``at most`` whose atom has variables nothing else binds, read the counting
operator ``p_auxK(t, N)`` and compare N (``N >= X``, ``N <= c``; a negated or fully bound one as a ``#count``
over it); the counting variable must be at least 1, as the paper's substitutions require. A
``#trigger_frequency`` rule gets the body atom ``__sr_tick(K)``, which the evaluator makes true at the time
points its K-th frequency selects. Fresh names carry a reserved prefix
(``__sr_`` by default) so they can never collide with user or stream predicates; ``prefix=""`` prints the
paper's names.
"""
from __future__ import annotations

from dataclasses import dataclass

from clingo import Number, ast

from srtopo.errors import ProgramError
from srtopo.rules.analysis import bound_variables
from srtopo.rules.ir import (
    GENERATED_PREFIX,
    TICK_PREDICATE,
    Fact,
    PlainLiteral,
    Program,
    Signature,
    StreamingLiteral,
    Window,
    head_predicates,
    rule_text,
    term_signature,
    variables,
    weak_suffix,
)


@dataclass(frozen=True)
class FreshPredicate:
    """What the window operator must compute for one fresh predicate."""
    name: str
    pred: Signature           # the observed stream predicate
    mode: str                 # "at_least" | "always" | "count_eq" | "count_var"
    count: int | None         # c for at_least / count_eq
    window: Window

    @property
    def arity(self) -> int:
        return self.pred[1] + (1 if self.mode == "count_var" else 0)


@dataclass(frozen=True)
class FlatRule:
    head: ast.AST
    body: tuple[ast.AST, ...]
    temp: bool
    origin: int                # index of the source rule
    kind: str = "atom"         # rules.ir.HEAD_KINDS

    @property
    def head_pred(self) -> Signature:
        return term_signature(self.head.atom.symbol)

    @property
    def head_preds(self) -> tuple[Signature, ...]:
        return head_predicates(self.head, self.kind)

    def __str__(self) -> str:
        return rule_text(self.head, self.body, self.temp, kind=self.kind)

    def asp(self, head: ast.AST | None = None) -> str:
        """Plain ASP text (no #temp) clingo can read; optionally with another (atom) head."""
        body = "; ".join(str(b) for b in self.body)
        if self.kind == "constraint":
            return f":- {body}."
        if self.kind == "weak":
            return f":~ {body}. {weak_suffix(self.head)}"
        head = self.head if head is None else head
        if not self.body:
            return f"{head}."
        return f"{head} :- {body}."


@dataclass(frozen=True)
class Rewriting:
    rules: tuple[FlatRule, ...]
    facts: tuple[Fact, ...]
    tau: tuple[tuple[str, str], ...]              # ("b(X) always in [2]", "b_aux1(X)") in order of appearance
    fresh: tuple[FreshPredicate, ...]
    literal_map: dict                              # id(StreamingLiteral) in the program -> FreshPredicate
    triggers: tuple[Window, ...] = ()              # the frequencies K of the __sr_tick(K) atoms

    def __str__(self) -> str:
        return "\n".join([str(f) for f in self.facts] + [str(r) for r in self.rules])



def _binds_alone(sl: StreamingLiteral, rule) -> bool:
    """A positive ``at most`` whose atom has variables nothing else binds: it binds them to observed atoms."""
    return sl.op == "at_most" and not sl.negated and not variables(sl.atom) <= bound_variables(rule, skip=sl)


def _counted(sl: StreamingLiteral, alone: bool) -> bool:
    """Whether the literal reads the counting operator ``p_auxK(t, N)`` and compares N."""
    return alone or (sl.op in ("at_least", "at_most") and isinstance(sl.count, str))


def _key(sl: StreamingLiteral, counted: bool):
    if counted:
        return (sl.pred, "count_var", None, sl.window)
    if sl.op == "at_most":
        return (sl.pred, "at_least", sl.count + 1, sl.window)
    if sl.op == "count":
        return (sl.pred, "count_var", None, sl.window) if isinstance(sl.count, str) else \
            (sl.pred, "count_eq", sl.count, sl.window)
    if sl.op == "always":
        return (sl.pred, "always", None, sl.window)
    return (sl.pred, "at_least", sl.count, sl.window)


def _parse_body(text: str) -> list:
    """Body literals from text printed from the program's own AST (never from stream data)."""
    out: list = []
    ast.parse_string(f":- {text}.", out.append)
    return list(out[-1].body)


def _counted_literals(sl: StreamingLiteral, atom: ast.AST, counter: str, alone: bool) -> list:
    """``p_auxK(t, N)`` compared as the operator says (see the module docstring)."""
    aux = str(atom)
    c = sl.count
    guard = [f"{c} >= 1"] if isinstance(c, str) else []
    if sl.op == "at_least":
        if sl.negated:
            return _parse_body(", ".join([f"0 = #count{{1: {aux}, {counter} >= {c}}}"] + guard))
        return _parse_body(", ".join([aux, f"{counter} >= {c}"] + guard))
    if sl.negated:                                  # not at most c: at least c+1
        return _parse_body(", ".join([aux, f"{counter} > {c}"] + guard))
    if alone:
        return _parse_body(", ".join([aux, f"{counter} <= {c}"] + guard))
    return _parse_body(", ".join([f"0 = #count{{1: {aux}, {counter} > {c}}}"] + guard))


def rewrite(program: Program, prefix: str = GENERATED_PREFIX) -> Rewriting:
    fresh: dict = {}
    per_pred: dict[str, int] = {}
    taken = {p[0] for p in program.head_preds} | {sl.pred[0] for sl in program.streaming_literals}
    tau: list[tuple[str, str]] = []
    literal_map: dict = {}
    triggers: list[Window] = []
    rules = []
    for index, rule in enumerate(program.rules):
        body = []
        counters = 0
        for item in rule.body:
            if isinstance(item, PlainLiteral):
                body.append(item.ast)
                continue
            alone = _binds_alone(item, rule)
            counted = _counted(item, alone)
            key = _key(item, counted)
            if key not in fresh:
                name = None
                while name is None or name in taken:
                    per_pred[item.pred[0]] = per_pred.get(item.pred[0], 0) + 1
                    name = f"{prefix}{item.pred[0]}_aux{per_pred[item.pred[0]]}"
                taken.add(name)
                fresh[key] = FreshPredicate(name, key[0], key[1], key[2], key[3])
            fp = fresh[key]
            literal_map[id(item)] = fp
            loc = item.atom.location
            args = list(_arguments(item.atom))
            if counted:
                counter = f"_SRN{counters}"
                counters += 1
                if counter in variables(rule.head) or any(
                        counter in variables(b.ast if isinstance(b, PlainLiteral) else b.atom) for b in rule.body):
                    raise ProgramError(f"the variable name {counter} is reserved", file=rule.loc.file,
                                       line=rule.loc.line, col=rule.loc.col, hint="rename the variable")
                atom = ast.SymbolicAtom(ast.Function(loc, fp.name, args + [ast.Variable(loc, counter)], 0))
                body.extend(_counted_literals(item, atom, counter, alone))
            else:
                if fp.mode == "count_var":
                    args.append(ast.Variable(loc, item.count))
                atom = ast.SymbolicAtom(ast.Function(loc, fp.name, args, 0) if args else
                                        ast.Function(loc, fp.name, [], 0))
                negated = item.negated != (item.op == "at_most")
                body.append(ast.Literal(loc, ast.Sign.Negation if negated else ast.Sign.NoSign, atom))
            positive = item.positive_text() if counted else _positive_text(item)
            entry = (positive, str(atom))
            if entry not in tau:
                tau.append(entry)
        if rule.trigger is not None:
            if rule.trigger not in triggers:
                triggers.append(rule.trigger)
            loc = rule.head.location
            tick = ast.Function(loc, TICK_PREDICATE, [ast.SymbolicTerm(loc, Number(triggers.index(rule.trigger)))], 0)
            body.append(ast.Literal(loc, ast.Sign.NoSign, ast.SymbolicAtom(tick)))
        rules.append(FlatRule(rule.head, tuple(body), rule.temp, index, rule.kind))
    return Rewriting(tuple(rules), program.facts, tuple(tau), tuple(fresh.values()), literal_map, tuple(triggers))


def _positive_text(sl: StreamingLiteral) -> str:
    if sl.op == "at_most" and isinstance(sl.count, int):   # tau maps the streaming atom the literal negates
        return f"{sl.atom} at least {sl.count + 1} in {sl.window}"
    return sl.positive_text()


def _arguments(term):
    if term.ast_type == ast.ASTType.Function:
        return term.arguments
    return []
