"""What a chain's program sees, checked by hand on a small university TBox (tests/chain/cases.py): the
entailments of one statement (subclass, equivalent class, sub-property, domain, range, inverse), statements
withheld because a report is due at their time for their subject or for their object, keep against drop, and a
time point whose every statement is withheld (still a time point: evaluated and printed). Every case runs on
every runner variant."""
from __future__ import annotations

import pytest

from srtopo.chain import chain
from srtopo.consistency import choose_topology, load_tbox
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import RunConfig
from srtopo.testing import lines, unsupported
from tests.chain.cases import PROGRAM, TBOX, TYPE, atom, line


@pytest.fixture(scope="module")
def tbox(tmp_path_factory):
    path = tmp_path_factory.mktemp("tbox") / "u.ttl"
    path.write_text(TBOX, encoding="utf-8")
    return load_tbox(str(path))


def chained(tbox, inconsistent="drop", program=PROGRAM):
    return chain(choose_topology(tbox, method="ntm"), compile_program(parse_program(program)), tbox, inconsistent)


def run(runner_variant, topology, stream, window=5, lateness=0, batches=1, print_empty=False, tmp_path=None):
    runner, options = runner_variant
    source = lines(stream, batches=batches)
    why = unsupported(runner, topology, [source])
    if why:
        pytest.skip(why)
    config = RunConfig(window=window, lateness=lateness, options=options, print_empty=print_empty,
                       checkpoint=str(tmp_path / "ckpt") if tmp_path is not None else None)
    return runner.run(topology, [source], config)


def models(result) -> dict[int, set[str]]:
    return {m.time: set(m.atoms) for m in result.models}


def test_entailments_of_one_statement(runner_variant, tbox, tmp_path):
    stream = [line(0, "g", TYPE, "GradStudent"),          # subclass, twice up, and the equivalent class
              line(1, "a", "takesGrad", "c"),             # sub-property, its domain and range (through takes)
              line(2, "t", "teaches", "c2"),              # inverse, domain, range
              line(3, "c3", "taughtBy", "t3"),            # the inverse read the other way round
              line(4, "x", "advisor", "y"),               # a property without axioms: itself only
              line(4, "x", TYPE, "Unknown"),              # a class the TBox does not know: itself only
              line(5, "p", "name", '"Ann"'),              # a data property: itself only
              line(5, "q", "takes", '"not an individual"')]     # a literal object: itself only
    result = run(runner_variant, chained(tbox), stream, tmp_path=tmp_path)
    assert models(result) == {
        0: {atom("g", TYPE, "GradStudent"), atom("g", TYPE, "Student"), atom("g", TYPE, "Pupil"),
            atom("g", TYPE, "Person")},
        1: {atom("a", "takesGrad", "c"), atom("a", "takes", "c"), atom("a", TYPE, "Student"),
            atom("a", TYPE, "Pupil"), atom("a", TYPE, "Person"), atom("c", TYPE, "Course")},
        2: {atom("t", "teaches", "c2"), atom("c2", "taughtBy", "t"), atom("t", TYPE, "Teacher"),
            atom("t", TYPE, "Person"), atom("c2", TYPE, "Course")},
        3: {atom("c3", "taughtBy", "t3"), atom("t3", "teaches", "c3"), atom("t3", TYPE, "Teacher"),
            atom("t3", TYPE, "Person"), atom("c3", TYPE, "Course")},
        4: {atom("x", "advisor", "y"), atom("x", TYPE, "Unknown")},
        5: {atom("p", "name", '"Ann"'), atom("q", "takes", '"not an individual"')}}
    assert not result.reports


def test_a_role_assertion_whose_object_is_inconsistent_is_withheld(runner_variant, tbox, tmp_path):
    stream = [line(0, "a", TYPE, "Student"),
              line(1, "c", TYPE, "Course"), line(1, "c", TYPE, "Person"),   # c: Person and Course at 1
              line(1, "a", "takes", "c"),                # a takes c at 1: c is inconsistent there
              line(1, "b", TYPE, "Student"),             # about b: kept
              line(2, "a", "takes", "d"),                # about consistent individuals: kept
              line(3, "c", TYPE, "Person")]              # c again at 3, within the window of the Course at 1
    result = run(runner_variant, chained(tbox), stream, tmp_path=tmp_path)
    assert sorted(r.key for r in result.reports) == [(f"http://ex.org/u#c", 1), (f"http://ex.org/u#c", 3)]
    got = models(result)
    assert got[1] == {atom("b", TYPE, "Student"), atom("b", TYPE, "Pupil"), atom("b", TYPE, "Person")}
    assert got[2] == {atom("a", "takes", "d"), atom("a", TYPE, "Student"), atom("a", TYPE, "Pupil"),
                      atom("a", TYPE, "Person"), atom("d", TYPE, "Course")}
    assert got[3] == {"quiet"}        # its one statement withheld: still a time point, evaluated and printed
    assert result.counters.extra["withheld"] == 4 and result.counters.extra["withheld_points"] == 2


def test_keep_withholds_nothing(runner_variant, tbox, tmp_path):
    stream = [line(1, "c", TYPE, "Course"), line(1, "c", TYPE, "Person"), line(1, "a", "takes", "c")]
    kept = run(runner_variant, chained(tbox, "keep"), stream, tmp_path=tmp_path / "keep")
    dropped = run(runner_variant, chained(tbox, "drop"), stream, tmp_path=tmp_path / "drop")
    assert [r.key for r in kept.reports] == [r.key for r in dropped.reports] == [("http://ex.org/u#c", 1)]
    assert models(kept)[1] == {atom("c", TYPE, "Course"), atom("c", TYPE, "Person"), atom("a", "takes", "c"),
                               atom("a", TYPE, "Student"), atom("a", TYPE, "Pupil"), atom("a", TYPE, "Person")}
    assert models(dropped) == {1: {"quiet"}}
    assert kept.counters.extra["withheld"] == 0 and dropped.counters.extra["withheld"] == 3


def test_an_empty_time_point_after_withholding_is_counted_by_windows(runner_variant, tbox, tmp_path):
    """Time point 2 loses its one statement: a window over the last two time points at 3 reads 2 and 3, so
    ``always`` does not hold at 3 as it would if 2 were skipped."""
    program = """seen(X) :- triple(X, P, O).
steady(X) :- seen(X) always in [1].
#show steady/1.
"""
    stream = [line(0, "a", TYPE, "Student"), line(1, "a", TYPE, "Student"),
              line(2, "a", TYPE, "Course"), line(2, "a", TYPE, "Student"),     # a is inconsistent at 2
              line(3, "a", TYPE, "Student")]
    result = run(runner_variant, chained(tbox, program=program), stream, window=0, tmp_path=tmp_path)
    steady = ('steady("http://ex.org/u#a")',)
    assert [(m.time, m.atoms) for m in result.models] == [(0, steady), (1, steady), (2, ()), (3, ())]


def test_a_time_point_is_handed_to_the_program_once_its_reports_are_final(runner_variant, tbox, tmp_path):
    """With a lateness of 2, a statement may still come two time points behind the latest: the conflict at 1
    completed by the tuple that arrives after time 3 still withholds the statement at 1."""
    stream = [line(1, "c", TYPE, "Course"), line(1, "a", "takes", "c"), line(3, "b", TYPE, "Student"),
              line(1, "c", TYPE, "Person"),      # two behind the latest: accepted, completes the conflict at 1
              line(4, "b", TYPE, "Student")]
    result = run(runner_variant, chained(tbox), stream, lateness=2, batches=2, tmp_path=tmp_path)
    assert [r.key for r in result.reports] == [("http://ex.org/u#c", 1)]
    assert models(result)[1] == {"quiet"}


def test_rejected_lines_are_those_of_check_and_of_the_program(runner_variant, tbox, tmp_path):
    """A line check rejects, a statement before time point 0, and a literal clingo cannot hold (accepted by the
    consistency side, rejected by the program's): one rejected record each, in the same words on every runner."""
    bad_literal = f'2\t<http://ex.org/u#p> <http://ex.org/u#name> "\\uD800" .'
    stream = [line(0, "a", TYPE, "Student"), "not a line", f"-1\t<http://ex.org/u#a> <{TYPE}> <http://ex.org/u#Person> .",
              line(1, "b", TYPE, "Student"), bad_literal, line(3, "c", TYPE, "Student")]
    result = run(runner_variant, chained(tbox), stream, tmp_path=tmp_path)
    rejected = sorted((r.line, r.reason) for r in result.rejected)
    assert rejected == [(2, "does not start with an integer event time"),
                        (3, "event time before 0: a program's time points start at 0"),
                        (5, 'the literal "\\uD800" has an escape that is not a character')]
    assert [r.text for r in sorted(result.rejected, key=lambda r: r.line)][2] == bad_literal
    assert models(result)[2] == {"quiet"}         # the time point of the rejected literal: reached, nothing kept
    assert sorted(models(result)) == [0, 1, 2, 3]
