"""Atoms become rows (predicate, text, argument texts) with the text assembled from the arguments' texts; clingo's
own printing is the oracle, on hand-picked corner cases and on random nested terms."""
from __future__ import annotations

import random

import pytest
from clingo import Function, Number, String, Symbol, parse_term

from srtopo.rules.partition import PartitionEvaluator
from srtopo.logic.atoms import atom_fields
from srtopo.rules.log import record_row

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


def test_the_spark_parse_pass_times_and_rejects_lines_as_the_local_reader_does():
    """One grammar: ``parse_pass`` (what a Spark batch runs in its executors) gives every line the local reader's
    time point or rejection reason, and its record and statistics rows once per partition of the first
    segment."""
    import json

    from srtopo.rules.partition import CURRENT, RECORD, REJECTED, STATS, parse_pass
    from srtopo.rules.log import parse_line, read_records
    from srtopo.rules.timestamps import stamp_kind, stamp_value, unit_micros
    lines = ["2024-01-01T00:00:00 a(1)", "2024-01-01T00:00:03 a(2); b(x)", "", "2024-01-01T00:00:01 ",
             "7 a(3)", "2024-01-01T00:00:05+01:00 a(4)", "2023-12-31T23:59:58 a(5)", "2024-01-01T00:00:09 p(",
             "2024-01-01T00:00:04.5 c(\"é\")"]
    rejected = []
    local = {r.line: r.time for r in read_records(lines, rejected=rejected)}
    reasons = {r.line: r.reason for r in rejected}
    stamp = parse_line(lines[0], "log")[1]      # the local reader's time point 0: the first record's timestamp
    origin = {0: (stamp_kind(stamp), stamp_value(stamp))}
    rows = list(parse_pass(((0, "f", i, text, "log", False, None) for i, text in enumerate(lines, start=1)),
                           origin, unit_micros(1), None, 3))
    timed = {r[8]: r[1] for r in rows if r[0] == CURRENT}
    assert timed == local
    assert {r[8]: r[12] for r in rows if r[0] == REJECTED} == reasons
    assert sorted(reasons) == [5, 6, 7, 8] and sorted(local) == [1, 2, 4, 9] and local[9] == 4
    # a record's first row carries its text (the partition holding it reports the record if it is rejected)
    assert sorted(r[8] for r in rows if r[0] == CURRENT and r[11] is not None) == [1, 2, 4, 9]
    records = [r for r in rows if r[0] == RECORD]
    assert sorted((r[8], r[13]) for r in records) == [(n, p) for n in (1, 2, 4, 9) for p in range(3)]
    assert all(r[5] for r in records)      # log lines: each its time point whole
    stats = [r for r in rows if r[0] == STATS]
    assert [r[13] for r in stats] == [0, 1, 2]
    assert json.loads(stats[0][11]) == {"malformed": 4}


_PIECES = ["a", "b1", "c'", "_d", "Dx", "not", "0", "00", "-0", "7", "-12", "2147483647", "-2147483647",
           "2147483648", "-2147483648", "9999999999", "abcdefghi9", '""', '"x y"', '"a,b"', '"a;b"', '"é"', '"t\tab"',
           '"q\\"u"', "f(1)", "(1,2)", "#inf", "X", " 3", "4 ", "1;2"]


def _random_atom_text(rng: random.Random) -> str:
    name = rng.choice(["p", "q_1", "r'", "not", "Pq", "__x", "_p", "é"])
    if rng.random() < 0.2:
        return name + rng.choice(["", "()", " "])
    args = [rng.choice(_PIECES) for _ in range(rng.randrange(1, 4))]
    return f"{name}(" + rng.choice([",", ",", ", "]).join(args) + ")"


def test_lines_of_printed_atoms_give_the_rows_clingo_parsing_gives():
    """The Spark parse pass reads the fields of atoms written as clingo prints them off the text; on random
    lines of near-canonical atoms (spaces, leading zeros, big integers, strings with separators and escapes,
    variables, names clingo refuses) it gives exactly the rows, or the rejection, of parsing every atom."""
    from srtopo.logic.atoms import canonical_fields, RecordError
    from srtopo.rules.log import parse_line
    rng = random.Random(5)
    fast = accepted = 0
    for _ in range(3000):
        atoms = [_random_atom_text(rng) for _ in range(rng.randrange(0, 4))]
        line = "5 " + rng.choice([";", "; ", " ;"]).join(atoms) + rng.choice(["", ";", "; @end"])
        try:
            _kind, _value, _stamp, parsed, _end = parse_line(line, "log")
            expected = ([atom_fields(a) for a in parsed], None)
        except RecordError as error:
            expected = (None, error.message)
        got = record_row(line, "log")
        assert (got[3], got[5]) == expected, line
        accepted += expected[1] is None
        fast += canonical_fields([a.strip() for a in atoms if a.strip()]) is not None
    assert accepted > 300 and fast > 300     # the generator reaches lines both paths accept, and the fast path
