"""Atoms become rows (predicate, text, argument texts) with the text assembled from the arguments' texts; clingo's
own printing is the oracle, on hand-picked corner cases and on random nested terms."""
from __future__ import annotations

import random

import pytest
from clingo import Function, Number, String, Symbol, parse_term

from srtopo.rules.partition import PartitionEvaluator
from srtopo.rules.stream import atom_fields, record_row

CORNERS = ['p', 'p("a\\"b\\n",-3)', 'p(f(g(1),"x"),(1,2),(1,))', 'q(#inf,#sup)', 'r("ü€😀")', 'p(-f(1))',
           's(())', 'p(a,-b)', 'p("x;y",(a,(b,)))', 'p(-2147483647)', 'p("ü",ab_1)']


def _random_term(rng: random.Random, depth: int) -> Symbol:
    pick = rng.randrange(6 if depth < 3 else 3)
    if pick == 0:
        return Number(rng.randint(-2**31 + 1, 2**31 - 1))
    if pick == 1:
        return String("".join(rng.choice('ab"\\\n\t;,()ü') for _ in range(rng.randrange(5))))
    if pick == 2:
        return Function(rng.choice(["a", "bc", "dé"]), [], rng.random() < 0.8)
    args = [_random_term(rng, depth + 1) for _ in range(rng.randrange(0 if pick == 3 else 1, 4))]
    return Function("" if pick == 3 else rng.choice(["f", "g"]), args, True if pick == 3 else rng.random() < 0.8)


@pytest.mark.parametrize("text", CORNERS)
def test_the_text_of_an_atom_is_what_clingo_prints(text):
    sym = parse_term(text)
    sig, atom, args = atom_fields(sym)
    assert atom == str(sym)
    assert args == [str(a) for a in sym.arguments]
    assert sig == f"{sym.name}/{len(sym.arguments)}"
    assert parse_term(atom) == sym


def test_random_nested_atoms_print_as_clingo_prints_them():
    rng = random.Random(11)
    for _ in range(2000):
        sym = Function(rng.choice(["p", "q_1", "ré"]), [_random_term(rng, 0) for _ in range(rng.randrange(4))],
                       rng.random() < 0.9)
        assert atom_fields(sym)[1] == str(sym)


def test_a_line_becomes_rows_of_parsed_atoms():
    kind, value, _stamp, rows, whole, reason = record_row('3 p("a;b", (1,)); q', "log")
    assert (value, whole, reason) == (3, True, None)
    assert rows == [("p/2", 'p("a;b",(1,))', ['"a;b"', "(1,)"]), ("q/0", "q", [])]


def test_integers_beyond_clingo_are_still_rejected_after_the_fast_path():
    assert record_row("1 p(2147483648)", "log")[-1] is not None
    assert record_row("1 p(-2147483649)", "log")[-1] is not None
    assert record_row("1 p(-2147483648)", "log")[-1] is None
    assert record_row('1 p("2147483648", 2147483647)', "log")[-1] is None


def test_a_partition_gives_argument_texts_only_where_asked():
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_program
    topology = compile_program(parse_program("a(X,Y) :- b(X,Z), c(Z,Y).\nd(X) :- a(X,_).\n"))
    rows = [("c", 0, "b(1,2)", False), ("c", 0, "c(2,3)", False)]
    full = PartitionEvaluator(topology, 0, 1).run(0, 0, rows)
    some = PartitionEvaluator(topology, 0, 1).run(0, 0, rows, frozenset({"d/1"}))
    assert [row[:3] + row[4:] for row in sorted(full)] == [(0, "a/2", "a(1,3)", ["1", "3"]), (0, "d/1", "d(1)", ["1"])]
    assert sorted(some, key=str) == [row[:4] + ((row[4] if row[1] == "d/1" else None),) for row in sorted(full)]
