"""The one walker over clingo ASTs skips the attributes that never hold a node: which those are is checked
against clingo's own constructors, and the walk against a plain descent of every attribute."""
from __future__ import annotations

import inspect

from clingo import ast

from srtopo.logic.syntax import LEAF_ATTRIBUTES, walk

PROGRAM = """#const k = 2.
#program base.
p(T,X) :- a(T,X), not b(T,_), X != k, #count{ Z,T0 : c(T0,Z), T0 < T } > 1, q(Y) : r(T,Y), not s(Y).
1 { h(X) : a(_,X) } 2 :- -t(X), |X| > 0, X = 1..3.
:- p(T,X), #sum+{ V : v(V) ; W : w(W) } >= @f(X, "s").
#show p/2. #show h(X) : p(_,X). #external e(1). #heuristic h(1). [1,level]
#minimize{ 1,X : h(X) }.
&diff{ x - y } <= 3 :- a(1,2).
"""


def _every_node(node):
    """Every node, reading every attribute (the walk as it was before it skipped any)."""
    if isinstance(node, ast.AST):
        yield node
        for key in node.keys():
            yield from _every_node(getattr(node, key))
    elif isinstance(node, (list, tuple)) or type(node).__name__ == "ASTSequence":
        for child in node:
            yield from _every_node(child)


def test_the_skipped_attributes_are_those_clingo_never_gives_a_node():
    """An attribute is skipped when no AST constructor of clingo takes a node (or a sequence of nodes) for it."""
    can_hold, leaf = set(), set()
    for kind in ast.ASTType:
        make = getattr(ast, kind.name, None)
        if make is None:
            continue
        for name, parameter in inspect.signature(make).parameters.items():
            (can_hold if "AST" in str(parameter.annotation) else leaf).add(name)
    assert LEAF_ATTRIBUTES == leaf - can_hold


def test_the_walk_visits_every_node_in_the_same_order():
    statements = []
    ast.parse_string(PROGRAM, statements.append)
    assert len(statements) > 8
    for node in (statements, *statements):
        got = [(n.ast_type, str(n)) for n in walk(node)]
        assert got == [(n.ast_type, str(n)) for n in _every_node(node)]
    assert {n.ast_type for n in walk(statements)} >= {ast.ASTType.ConditionalLiteral, ast.ASTType.BodyAggregate,
                                                     ast.ASTType.TheoryAtom, ast.ASTType.Interval,
                                                     ast.ASTType.Aggregate, ast.ASTType.Minimize}
