"""Parser and analysis: corpus syntax, located errors, unsupported constructs, safety, stratification."""
from __future__ import annotations

import pytest

from srtopo.errors import ProgramError
from srtopo.rules.analysis import analyse
from srtopo.rules.ir import StreamingLiteral
from srtopo.rules.parse import parse_file, parse_program

SUPPORTED = ["example3", "example4", "example5", "at_least", "at_most", "count", "carPassing",
             "coolingSystem", "recursive_in", "recursive_always", "UTrafficMonitoring", "PV-system"]


@pytest.mark.parametrize("name", SUPPORTED)
def test_corpus_programs_parse_and_analyse(examples_dir, name):
    program = parse_file(examples_dir / "programs" / f"{name}.idlvsr")
    analyse(program)
    assert program.rules


@pytest.mark.parametrize("name, construct, line", [
    ("now_example", "@now", 2), ("exe_trigger", "#trigger_frequency", 1), ("external_atoms", "&sub", 1)])
def test_extensions_are_reported_as_unsupported(examples_dir, name, construct, line):
    path = examples_dir / "programs" / f"{name}.idlvsr"
    with pytest.raises(ProgramError) as info:
        parse_file(path)
    assert str(info.value).startswith("unsupported: ")
    assert construct in str(info.value) and f"{path}:{line}" in str(info.value)


def test_streaming_literal_forms():
    program = parse_program("h(X,N) :- p(X) at least 2 in {0,1,3}, q(X) always in [3 sec], r(X) count N in[20],"
                            " not s(X) in [2], t(X) at most 1 in [1], u (X) in {4}.")
    lits = [b for b in program.rules[0].body if isinstance(b, StreamingLiteral)]
    assert [(l.op, l.count, str(l.window), l.negated) for l in lits] == [
        ("at_least", 2, "{0,1,3}", False), ("always", None, "[3 sec]", False), ("count", "N", "[20]", False),
        ("at_least", 1, "[2]", True), ("at_most", 1, "[1]", False), ("at_least", 1, "{4}", False)]
    assert lits[1].window.distances() == frozenset({0, 1, 2, 3})
    assert not lits[4].positive and not lits[3].harmless and lits[0].harmless and not lits[2].harmless


def test_show_without_period_and_temp_and_aggregates():
    program = parse_program("#temp n(X) :- a count X in [3].\ntot(T) :- #sum{N,C: n(N), c(C)} = T.\n"
                            "#show n/1\n#show tot/1\n")
    assert program.shows == (("n", 1), ("tot", 1))
    assert program.rules[0].temp and not program.rules[1].temp


def test_syntax_error_has_file_line_col():
    with pytest.raises(ProgramError) as info:
        parse_program("a(X) :- b(X).\nc(X) :- b(X) at least 2 in [x].\n", "prog.idlvsr")
    assert (info.value.file, info.value.line) == ("prog.idlvsr", 2)
    with pytest.raises(ProgramError) as info:
        parse_program("a(X) :- b(X).\n\n  c(X) :- b(X)) .\n", "p.idlvsr")
    assert (info.value.file, info.value.line, info.value.col) == ("p.idlvsr", 3, 15)


def test_reserved_prefix_is_rejected():
    with pytest.raises(ProgramError, match="reserved prefix"):
        parse_program("__sr_x(1) :- b(1).")


def test_unsafe_rule_is_rejected_naming_rule_and_variable():
    with pytest.raises(ProgramError) as info:
        analyse(parse_program("a(X) :- b(Y).\n", "u.idlvsr"))
    assert "a(X) :- b(Y)." in str(info.value) and "X" in str(info.value) and info.value.line == 1
    with pytest.raises(ProgramError, match="unsafe"):
        analyse(parse_program("a(X) :- c(Y), not b(X) in [2]."))
    with pytest.raises(ProgramError, match="unsafe"):
        analyse(parse_program("a(X) :- c(Y), b(X) at most 2 in [2]."))     # at most is negative
    analyse(parse_program("b(Y) :- a(X), Y = X+1, Y < 3.\ntot(T) :- #sum{N: c(N)} = T."))  # ASP-Core-2 bindings


def test_unstratified_program_is_rejected_with_the_cycle():
    with pytest.raises(ProgramError) as info:
        analyse(parse_program("a(X) :- c(X), not b(X).\nb(X) :- a(X) in [2].\n", "s.idlvsr"))
    message = str(info.value)
    assert "not stratified" in message and "a(X) :- c(X), not b(X)." in message
    assert "a/1 -> b/1 -> a/1" in message
    with pytest.raises(ProgramError, match="count"):
        analyse(parse_program("a(X) :- a(X) count 2 in [2]."))
    # harmless recursion through windows is allowed (recursive_in / recursive_always)
    analyse(parse_program("a(X) :- b(X) always in [3], c(X-1).\nb(X) :- c(X).\nc(X) :- a(X)."))


def test_integers_beyond_32_bits_are_located_errors_not_wrapped():
    for text, col in (("big(4294967296).\n", 5), ("d(X) :- b(X), X > 4294967296.\n", 19)):
        with pytest.raises(ProgramError, match="beyond clingo's 32-bit integers") as info:
            parse_program(text, "p.idlvsr")
        assert (info.value.line, info.value.col) == (1, col)
    parse_program("c(X) :- b(X), X > -2147483648, X < 2147483647.\nname(\"4294967296\").\n")


def test_a_byte_order_mark_before_a_program_is_not_part_of_it(tmp_path):
    path = tmp_path / "bom.idlvsr"
    path.write_bytes(b"\xef\xbb\xbfc(X) :- b(X).\n")
    assert [str(r) for r in parse_file(path).rules] == ["c(X) :- b(X)."]
