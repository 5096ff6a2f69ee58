"""Rewrite an I-DLV-sr program into the flat program P' and the mapping tau ("I-DLV-sr: A Stream Reasoning System based on I-DLV",
section 4.1).

Each non-degenerate streaming literal ``p(t) OP in W`` becomes a fresh atom ``p_auxK(t)`` (``p_auxK(t, X)``
for ``count X``); ``at most c`` becomes ``not p_auxK(t)`` with p_auxK meaning ``at least c+1``. Literals with
the same predicate, operator and window share a fresh predicate. Fresh names carry a reserved prefix
(``__sr_`` by default) so they can never collide with user or stream predicates; ``prefix=""`` prints the
paper's names.
"""
from __future__ import annotations

from dataclasses import dataclass

from clingo import ast

from srtopo.rules.ir import (
    GENERATED_PREFIX,
    Fact,
    PlainLiteral,
    Program,
    Signature,
    StreamingLiteral,
    Window,
    rule_text,
    term_signature,
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

    @property
    def head_pred(self) -> Signature:
        return term_signature(self.head.atom.symbol)

    def __str__(self) -> str:
        return rule_text(self.head, self.body, self.temp)

    def asp(self, head: ast.AST | None = None) -> str:
        """Plain ASP text (no #temp) clingo can read; optionally with another head."""
        head = self.head if head is None else head
        if not self.body:
            return f"{head}."
        return f"{head} :- {'; '.join(str(b) for b in self.body)}."


@dataclass(frozen=True)
class Rewriting:
    rules: tuple[FlatRule, ...]
    facts: tuple[Fact, ...]
    tau: tuple[tuple[str, str], ...]              # ("b(X) always in [2]", "b_aux1(X)") in order of appearance
    fresh: tuple[FreshPredicate, ...]
    literal_map: dict                              # id(StreamingLiteral) in the program -> FreshPredicate

    def __str__(self) -> str:
        return "\n".join([str(f) for f in self.facts] + [str(r) for r in self.rules])



def _key(sl: StreamingLiteral):
    if sl.op == "at_most":
        return (sl.pred, "at_least", sl.count + 1, sl.window)
    if sl.op == "count":
        return (sl.pred, "count_var", None, sl.window) if isinstance(sl.count, str) else \
            (sl.pred, "count_eq", sl.count, sl.window)
    if sl.op == "always":
        return (sl.pred, "always", None, sl.window)
    return (sl.pred, "at_least", sl.count, sl.window)


def rewrite(program: Program, prefix: str = GENERATED_PREFIX) -> Rewriting:
    fresh: dict = {}
    per_pred: dict[str, int] = {}
    taken = {p[0] for p in program.head_preds} | {sl.pred[0] for sl in program.streaming_literals}
    tau: list[tuple[str, str]] = []
    literal_map: dict = {}
    rules = []
    for index, rule in enumerate(program.rules):
        body = []
        for item in rule.body:
            if isinstance(item, PlainLiteral):
                body.append(item.ast)
                continue
            key = _key(item)
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
            if fp.mode == "count_var":
                args.append(ast.Variable(loc, item.count))
            atom = ast.SymbolicAtom(ast.Function(loc, fp.name, args, 0) if args else
                                    ast.Function(loc, fp.name, [], 0))
            negated = item.negated != (item.op == "at_most")
            body.append(ast.Literal(loc, ast.Sign.Negation if negated else ast.Sign.NoSign, atom))
            positive = _positive_text(item)
            entry = (positive, str(atom))
            if entry not in tau:
                tau.append(entry)
        rules.append(FlatRule(rule.head, tuple(body), rule.temp, index))
    return Rewriting(tuple(rules), program.facts, tuple(tau), tuple(fresh.values()), literal_map)


def _positive_text(sl: StreamingLiteral) -> str:
    if sl.op == "at_most":   # tau maps the streaming atom the literal negates
        return f"{sl.atom} at least {sl.count + 1} in {sl.window}"
    return sl.positive_text()


def _arguments(term):
    if term.ast_type == ast.ASTType.Function:
        return term.arguments
    return []
