"""A Streamlog rule as the step solver grounds it: goals at the current timestamp read the predicate, goals at
earlier timestamps read its history copy ``__sl_old_<name>``.

The step program is the bistate program with timestamps kept: ``minpath(now,...)`` is what the step derives,
``__sl_old_minpath(T0,...)`` what earlier steps derived (fed to the Control by the evaluator). Reading earlier
facts under the predicate's own name would make ``minpath`` depend on itself for clingo's grounder (it does not
see ``T0 < now``), so a rule recursive through negation across timestamps would become one component grounded
over the whole history each step, its atoms left to the solver. With the history apart, the step's components
are those of the bistate program, stratified: grounding alone decides them, and a step costs the joins of what
is new with the history, not a pass over it.

A goal no later than the head (``T0 <= T``) reads both: a positive one gives two rule variants (``T0 = now`` on
the predicate, or the history copy), a negated one two negated literals. Inside a conditional literal or an
aggregate element the same split gives two conditional literals (their conjunction) or two elements (their union;
the tuples of one ground atom are the same, so nothing is counted twice).
"""
from __future__ import annotations

import itertools

from clingo import ast

from srtopo.logic.syntax import term_signature
from srtopo.streamlog.order import EARLIER, EQUAL, NOT_LATER, TimeOrder
from srtopo.streamlog.program import _order, now_term

OLD = "__sl_old_"
_T = ast.ASTType
_OPS = ast.ComparisonOperator


def old_name(name: str) -> str:
    return OLD + name


def _compare(loc, left, op, right):
    return ast.Literal(loc, ast.Sign.NoSign, ast.Comparison(left, [ast.Guard(op, right)]))


def _old(lit):
    """The literal reading the history copy of its predicate."""
    sym = lit.atom.symbol
    return lit.update(atom=lit.atom.update(symbol=ast.Function(sym.location, old_name(sym.name), list(sym.arguments),
                                                               sym.external)))


class _Splitter:
    """Splits the goals of one rule. ``relation(ts_term, order)``: how a goal's timestamp compares with now."""

    def __init__(self, temporal: set, relation):
        self.temporal = temporal
        self.relation = relation

    def _temporal(self, lit) -> bool:
        return (lit.ast_type == _T.Literal and lit.atom.ast_type == _T.SymbolicAtom
                and term_signature(lit.atom.symbol) in self.temporal)

    def literal(self, lit, order: TimeOrder) -> list[list]:
        """Alternatives for one literal of a conjunction (a rule body or a condition): a list of conjunctions."""
        if not self._temporal(lit):
            return [[lit]]
        ts = lit.atom.symbol.arguments[0]
        rel = self.relation(ts, order)
        if rel == EQUAL:
            return [[lit]]
        if rel == EARLIER:
            return [[_old(lit)]]
        # no later than now (or, in a rejected program, unknown): the predicate at now and the history copy
        if lit.sign != ast.Sign.NoSign:          # absent now and absent before
            return [[lit, _old(lit)]]
        return [[lit, _compare(lit.location, ts, _OPS.Equal, now_term(lit.location))], [_old(lit)]]

    def conjunction(self, lits: list, order: TimeOrder) -> list[list]:
        """Every way to split the temporal literals of a conjunction (a product of the alternatives)."""
        choices = [self.literal(lit, order) for lit in lits]
        return [[x for part in combo for x in part] for combo in itertools.product(*choices)]

    def body_literal(self, lit, order: TimeOrder) -> list[list]:
        """Alternatives for one literal of a rule body, aggregates and conditional literals included."""
        if lit.ast_type == _T.ConditionalLiteral:
            return [self._conditional(lit, order)]
        if lit.ast_type == _T.Literal and lit.atom.ast_type == _T.BodyAggregate:
            elements = []
            for element in lit.atom.elements:
                local = order.copy()
                local_lits = [c for c in element.condition if c.ast_type == _T.Literal]
                for c in _comparisons(local_lits):
                    local.add_comparison(c)
                for condition in self.conjunction(list(element.condition), local):
                    elements.append(element.update(condition=condition))
            return [[lit.update(atom=lit.atom.update(elements=elements))]]
        return self.literal(lit, order)

    def _conditional(self, lit, order: TimeOrder) -> list:
        """``L : C`` as conditional literals whose conjunction means the same over the split history."""
        local = order.copy()
        for c in _comparisons(list(lit.condition)):
            local.add_comparison(c)
        head = lit.literal
        out = []
        for condition in self.conjunction(list(lit.condition), local):
            if not self._temporal(head):
                out.append(lit.update(condition=condition))
                continue
            options = self.literal(head, local)
            if head.sign != ast.Sign.NoSign or len(options) == 1 and len(options[0]) == 1:
                # a negated head is absent in every part; a head in one part is that part
                out.extend(lit.update(literal=h, condition=condition) for h in options[0])
                continue
            # a positive head that may be now or earlier: no instance of the condition lacks it in both
            loc = lit.location
            false = ast.Literal(loc, ast.Sign.NoSign, ast.BooleanConstant(0))
            negated = [head.update(sign=ast.Sign.Negation), _old(head.update(sign=ast.Sign.Negation))]
            out.append(lit.update(literal=false, condition=condition + negated))
        return out


def _comparisons(lits):
    return [c.atom for c in lits if c.ast_type == _T.Literal and c.sign == ast.Sign.NoSign
            and c.atom.ast_type == _T.Comparison]


def split_rule(node, temporal: set) -> list:
    """The rule (its head timestamp already bound to now) as rules whose goals read the predicate at now and the
    history copy before now; ``node`` still has its head timestamp ``head_ts`` for the timestamp analysis."""
    head_ts = node.head.atom.symbol.arguments[0]
    splitter = _Splitter(temporal, lambda ts, order: order.relation(ts, head_ts))
    return _product(node, splitter, _order(node.body))


def split_schedule(node, temporal: set) -> list:
    """A scheduling rule (its body read at any timestamp up to now): every temporal goal may be now or earlier;
    the variants where every positive goal is earlier are left out, since an earlier step derived what they
    schedule."""
    splitter = _Splitter(temporal, lambda ts, order: NOT_LATER)
    out = []
    positive = [k for k, lit in enumerate(node.body) if splitter._temporal(lit) and lit.sign == ast.Sign.NoSign]
    choices = [splitter.body_literal(lit, _order(node.body)) for lit in node.body]
    for combo in itertools.product(*choices):
        if positive and all(_reads_old(combo[k]) for k in positive):
            continue
        out.append(node.update(body=[x for part in combo for x in part]))
    return out


def _reads_old(part: list) -> bool:
    return any(x.ast_type == _T.Literal and x.atom.ast_type == _T.SymbolicAtom
               and x.atom.symbol.ast_type == _T.Function and x.atom.symbol.name.startswith(OLD) for x in part)


def _product(node, splitter: _Splitter, order: TimeOrder) -> list:
    choices = [splitter.body_literal(lit, order) for lit in node.body]
    return [node.update(body=[x for part in combo for x in part]) for combo in itertools.product(*choices)]


__all__ = ["OLD", "old_name", "split_rule", "split_schedule"]
