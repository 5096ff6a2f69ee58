"""Parser and analysis: corpus syntax, located errors, unsupported constructs, safety, stratification."""
from __future__ import annotations

import pytest

from srtopo.errors import ProgramError
from srtopo.rules.analysis import analyse
from srtopo.rules.ir import ExternalLiteral, StreamingLiteral
from srtopo.rules.parse import parse_file, parse_program

SUPPORTED = ["example3", "example4", "example5", "at_least", "at_most", "count", "carPassing",
             "coolingSystem", "recursive_in", "recursive_always", "UTrafficMonitoring", "PV-system", "now_example",
             "exe_trigger", "external_atoms"]


@pytest.mark.parametrize("name", SUPPORTED)
def test_corpus_programs_parse_and_analyse(examples_dir, name):
    program = parse_file(examples_dir / "programs" / f"{name}.idlvsr")
    analyse(program)
    assert program.rules


def test_extensions_parse_into_the_ir(examples_dir):
    now = parse_file(examples_dir / "programs" / "now_example.idlvsr")
    assert str(now.rules[0]) == "a(X,_NW) :- b(X) at most X in [2 sec], not c(X), __sr_now(_NW)."
    assert now.rules[0].text.startswith("a(X,@now)")            # messages quote the program as written
    trigger = parse_file(examples_dir / "programs" / "exe_trigger.idlvsr")
    assert (trigger.rules[0].trigger.size, trigger.rules[0].trigger.unit) == (4, "sec")
    assert trigger.rules[1].trigger is None
    external = parse_file(examples_dir / "programs" / "external_atoms.idlvsr")
    lit = external.rules[0].body[2]
    assert isinstance(lit, ExternalLiteral) and str(lit) == "&sub(J,Y;X)" and str(lit.ast) == "X = @__sr_x_1_sub(J,Y)"
    analyse(external)


def test_external_atom_forms_and_safety():
    program = parse_program("a :- b(X), not &f(X;).\nc(U,V) :- b(X), &g(X,1;U,V).\nd(Y) :- b(X), &h(;Y).\n")
    assert [str(b.ast) for r in program.rules for b in r.body if isinstance(b, ExternalLiteral)] == [
        "not 1 = @__sr_x_0_f(X)", "(U,V) = @__sr_x_2_g(X,1)", "Y = @__sr_x_1_h"]
    analyse(program)
    with pytest.raises(ProgramError, match=r"unsafe: variable X \(in the input terms of '&f\(X;Y\)'\)"):
        analyse(parse_program("a(Y) :- &f(X;Y).\n"))
    with pytest.raises(ProgramError, match="external atom inside"):
        parse_program("a :- #count{X: b(X), &f(X;)} > 1.\n")
    with pytest.raises(ProgramError, match="cannot be a rule head"):
        parse_program("&f(1;) :- a.\n")


def test_rule_directives_and_variable_counting_terms():
    program = parse_program("#trigger_frequency(10 min) w(L) :- #max{X: m(X)} = L.\n"
                            "#temp #trigger_frequency(2) v :- a at least N in [3], n(N).\n")
    assert program.rules[0].trigger.unit == "min" and program.rules[1].temp and program.rules[1].trigger.size == 2
    analyse(program)
    with pytest.raises(ProgramError, match="counting term"):
        analyse(parse_program("v :- a at least N in [3].\n"))
    with pytest.raises(ProgramError, match="malformed #trigger_frequency"):
        parse_program("#trigger_frequency(0 sec) v :- a.\n")
    with pytest.raises(ProgramError, match="unsupported: directive #const"):
        parse_program("#const n = 3.\n")


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
    # the I-DLV-sr README: a positive 'at most' binds its atom's variables (to the atoms its window observes)
    analyse(parse_program("a(X) :- c(Y), b(X) at most 2 in [2]."))
    with pytest.raises(ProgramError, match="unsafe"):
        analyse(parse_program("a(X) :- c(Y), not b(X) at least 2 in [2]."))
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


@pytest.mark.parametrize("literal, said", [("b(X) at least -1 in [3]", "'at least' must be a positive integer, got -1"),
                                           ("b(X) at most -2 in [3]", "'at most' must be a non-negative integer"),
                                           ("b(X) count -2 in [3]", "'count' must be a non-negative integer")])
def test_a_negative_counting_constant_is_named_not_a_bare_syntax_error(literal, said):
    with pytest.raises(ProgramError, match=said) as info:
        parse_program(f"c(X) :- {literal}.\n")
    assert info.value.line == 1 and info.value.col is not None


def test_a_program_that_is_not_utf8_is_named_with_its_line(tmp_path):
    from srtopo.streamlog.program import load_program
    path = tmp_path / "p.idlvsr"
    path.write_bytes(b"c(X) :- b(X).\n% caf\xe9\n")
    for load in (parse_file, load_program):
        with pytest.raises(ProgramError, match="not UTF-8") as info:
            load(str(path))
        assert info.value.line == 2 and info.value.file == str(path)
