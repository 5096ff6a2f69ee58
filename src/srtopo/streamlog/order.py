"""Which timestamp of a rule is no later than which: difference constraints read from its comparisons.

A timestamp term is a variable or an integer plus a constant offset (``T``, ``T0+1``, ``T-2``, ``7``). Every
comparison between two such terms (``T0 < T``, ``T = T1 + 1``, ``T2 <= T``) is a difference constraint
``a <= b + w``; timestamps are integers, so ``a < b`` is ``a <= b - 1``. The tightest bound of ``goal - head`` is a
shortest path in the constraint graph (networkx Bellman-Ford: offsets may be negative).
"""
from __future__ import annotations

import networkx as nx
from clingo import SymbolType, ast

EQUAL = "="          # the goal's timestamp is the head's
NOT_LATER = "<="     # no later than the head's
EARLIER = "<"        # strictly earlier
UNKNOWN = "?"        # may be later than the head's

ZERO = "#0"          # the node of integer constants: 7 is ZERO + 7

_OPS = ast.ComparisonOperator
_FLIP = {_OPS.LessThan: _OPS.GreaterThan, _OPS.LessEqual: _OPS.GreaterEqual, _OPS.Equal: _OPS.Equal,
         _OPS.GreaterThan: _OPS.LessThan, _OPS.GreaterEqual: _OPS.LessEqual, _OPS.NotEqual: _OPS.NotEqual}


def linear(term) -> tuple[str, int] | None:
    """``(node, offset)`` of a timestamp term, or None when it is not a variable or integer plus a constant."""
    kind = term.ast_type
    if kind == ast.ASTType.Variable:
        return (term.name, 0) if term.name != "_" else None
    if kind == ast.ASTType.SymbolicTerm and term.symbol.type == SymbolType.Number:
        return ZERO, term.symbol.number
    if kind == ast.ASTType.UnaryOperation and term.operator_type == ast.UnaryOperator.Minus:
        inner = linear(term.argument)
        return (ZERO, -inner[1]) if inner and inner[0] == ZERO else None
    if kind == ast.ASTType.BinaryOperation and term.operator_type in (ast.BinaryOperator.Plus, ast.BinaryOperator.Minus):
        left, right = linear(term.left), linear(term.right)
        if left is None or right is None:
            return None
        sign = 1 if term.operator_type == ast.BinaryOperator.Plus else -1
        if right[0] == ZERO:
            return left[0], left[1] + sign * right[1]
        if left[0] == ZERO and sign == 1:
            return right[0], left[1] + right[1]
    return None


class TimeOrder:
    """Difference constraints among the timestamp terms of one rule (or one aggregate element)."""

    def __init__(self):
        self.graph = nx.DiGraph()
        self.graph.add_node(ZERO)

    def copy(self) -> "TimeOrder":
        other = TimeOrder()
        other.graph = self.graph.copy()
        return other

    def _bound(self, a: str, b: str, weight: int) -> None:
        """a <= b + weight (edge b -> a)."""
        old = self.graph.get_edge_data(b, a)
        if old is None or weight < old["weight"]:
            self.graph.add_edge(b, a, weight=weight)

    def add_comparison(self, comparison) -> None:
        """A comparison literal ``t0 op1 t1 op2 t2 ...`` (clingo's AST), each guard relative to the term before."""
        left = comparison.term
        for guard in comparison.guards:
            self.relate(left, guard.comparison, guard.term)
            left = guard.term

    def relate(self, left, op, right) -> None:
        a, b = linear(left), linear(right)
        if a is None or b is None:
            return
        (na, ca), (nb, cb) = a, b
        # na + ca  op  nb + cb
        if op in (_OPS.GreaterThan, _OPS.GreaterEqual):
            (na, ca), (nb, cb), op = (nb, cb), (na, ca), _FLIP[op]
        if op == _OPS.LessThan:
            self._bound(na, nb, cb - ca - 1)
        elif op == _OPS.LessEqual:
            self._bound(na, nb, cb - ca)
        elif op == _OPS.Equal:
            self._bound(na, nb, cb - ca)
            self._bound(nb, na, ca - cb)

    def _distance(self, source: str, target: str) -> float:
        if source not in self.graph or target not in self.graph:
            return float("inf")
        try:
            return nx.bellman_ford_path_length(self.graph, source, target)
        except nx.NetworkXNoPath:
            return float("inf")
        except nx.NetworkXUnbounded:      # contradictory comparisons: the rule never fires
            return float("-inf")

    def relation(self, goal, head) -> str:
        """How the goal's timestamp term compares with the head's: EQUAL, NOT_LATER, EARLIER or UNKNOWN."""
        g, h = linear(goal), linear(head)
        if g is None or h is None:
            return UNKNOWN
        (ng, cg), (nh, ch) = g, h
        if ng == nh:
            return EQUAL if cg == ch else (EARLIER if cg < ch else UNKNOWN)
        # goal <= head + up, head <= goal + down
        up = self._distance(nh, ng) + cg - ch
        if up > 0:
            return UNKNOWN
        if up < 0:
            return EARLIER
        down = self._distance(ng, nh) + ch - cg
        return EQUAL if down <= 0 else NOT_LATER
