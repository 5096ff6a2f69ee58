"""Seed 000 (I-DLV-sr paper), Examples 1-6: the streaming models, P4' and tau, graphs and macro-nodes."""
from __future__ import annotations

import pytest
from clingo import ast, parse_term

from srtopo.rules.analysis import analyse, maximal_macro_nodes, orderings
from srtopo.rules.evaluate import Reasoner
from srtopo.rules.parse import parse_program
from srtopo.rules.rewrite import rewrite

STRATEGIES = ("restart", "incremental", "incremental-strict", "auto")


def models(text: str, stream: list[list[str]], strategy: str) -> list[set[str]]:
    reasoner = Reasoner(parse_program(text), strategy=strategy)
    return [set(reasoner.shown(reasoner.step([parse_term(a) for a in s]).atoms)) for s in stream]


SIGMA_1 = [["a(2)", "b(5)"], ["a(3)", "c(7)"], ["b(5)"], ["a(3)"]]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_example_1_and_2_at_least_over_a_set_window(strategy):
    # b(5) at least 2 in {0,1,3} holds at time point 3, so r1 adds c(5) to the last set (Example 2)
    out = models("c(X) :- b(X) at least 2 in {0,1,3}.", SIGMA_1, strategy)
    assert out[3] == {"a(3)", "c(5)"}
    assert out[0] == {"a(2)", "b(5)"} and out[1] == {"a(3)", "c(7)"} and out[2] == {"b(5)"}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_example_3_restricted_program(strategy):
    out = models("c(X) :- b(X).\nd(X) :- c(X) in [1].", [["b(5)"], ["c(7)"]], strategy)
    assert out[0] == {"b(5)", "c(5)", "d(5)"}          # R(P2, <S0>)
    assert out[1] == {"c(7)", "d(7)", "d(5)"}          # the streaming model stated in the paper


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_example_4_temp_is_not_persistent(strategy):
    reasoner = Reasoner(parse_program("#temp c(X) :- b(X).\nd(X) :- c(X) in [1]."), strategy=strategy)
    first = reasoner.step([parse_term("b(5)")])
    assert set(map(str, first.atoms)) == {"b(5)", "c(5)", "d(5)"}
    assert set(map(str, frozenset().union(*reasoner.history[0].values()))) == {"b(5)", "d(5)"}  # P(P3,<S0>)
    second = reasoner.step([parse_term("c(7)")])
    assert set(map(str, second.atoms)) == {"c(7)", "d(7)"}


P4 = """a(X) :- b(X) always in [2].
b(Y) :- a(X) in [1], Y=X+1, c(Y).
d(X) :- b(X) at least 2 in [4].
e(X,Y) :- a(X), b(Y).
"""


def _norm(rule_text: str) -> str:
    out = []
    ast.parse_string(rule_text, out.append)
    return str(out[-1])


def test_example_5_rewriting_and_tau():
    rw = rewrite(parse_program(P4), prefix="")
    expected = ["a(X) :- b_aux1(X).", "b(Y) :- a_aux1(X), Y=X+1, c(Y).", "d(X) :- b_aux2(X).",
                "e(X,Y) :- a(X), b(Y)."]
    assert [_norm(r.asp()) for r in rw.rules] == [_norm(e) for e in expected]
    assert str(rw).splitlines()[0] == "a(X) :- b_aux1(X)."
    assert dict(rw.tau) == {"b(X) always in [2]": "b_aux1(X)", "a(X) in [1]": "a_aux1(X)",
                            "b(X) at least 2 in [4]": "b_aux2(X)"}


def test_generated_predicates_use_the_reserved_prefix():
    rw = rewrite(parse_program(P4))
    assert {fp.name for fp in rw.fresh} == {"__sr_b_aux1", "__sr_a_aux1", "__sr_b_aux2"}


def _names(component) -> frozenset:
    return frozenset(p.split("/")[0] for p in component)


def test_example_6_graphs_macro_nodes_and_orderings():
    an = analyse(parse_program(P4))
    sd = {(_names([p]), _names([q]), d["label"]) for p, q, d in an.sd.edges(data=True)}
    assert {(tuple(p)[0], tuple(q)[0], l) for p, q, l in sd} == {
        ("a", "b", "<"), ("b", "a", "<"), ("b", "d", "<"), ("a", "e", ""), ("b", "e", "")}
    sc = {(_names(a), _names(b), d["label"]) for a, b, d in an.sc.edges(data=True)}
    ab, d, e = frozenset("ab"), frozenset("d"), frozenset("e")
    assert sc == {(ab, d, "<"), (ab, e, "")}
    prec = {(_names(x), _names(y)) for x, y in an.prec}
    assert prec == {(ab, d)}                                     # {a,b} < {d}; everything else alongside
    found = {tuple(_names(c) for c in o) for o in orderings(an.sc, an.prec)}
    assert found == {(e, ab, d), (ab, e, d), (ab, d, e)}        # o1, o2 (= o4), o3
    by_order = {tuple(_names(c) for c in o): [_names(m) for m in maximal_macro_nodes(o, an.prec)]
                for o in orderings(an.sc, an.prec)}
    assert by_order[(e, ab, d)] == [frozenset("abe"), d]         # o1: {a,b,e}, {d}
    assert by_order[(ab, e, d)] == [frozenset("abe"), d]         # o2 induces the same splitting
    assert [_names(m) for m in an.macro_nodes] == [frozenset("abe"), d]
    # r1 and r2 are streaming-recursive, r3 and r4 are not
    assert an.recursive_rules == frozenset({0, 1})
