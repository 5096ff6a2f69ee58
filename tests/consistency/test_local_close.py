"""The local runner writes a report once its time is closed (no tuple that could still be accepted can change
it), so the violation it names does not depend on arrival order or on when a source ends."""
from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.local import ConsistencyChecker
from srtopo.consistency.nis import analyse
from srtopo.consistency.tbox import TBox
from srtopo.ir.records import StreamTuple
from srtopo.runners import LocalRunner
from srtopo.testing import run_topology, tuples

EX = "http://ex.org/c#"
A, B, C = EX + "A", EX + "B", EX + "C"
#: DJ(A, B) and DJ(A, C): A with B and A with C violate different NIs, A/B first
TBOX = TBox.build([], [(A, B), (A, C)])


def _tuple(subject, concept, time):
    return StreamTuple(subject, concept, time, concept)


def test_a_report_waits_for_its_time_to_close():
    """Lateness 0: a report at t is written by the first tuple that raises its source past t, and it names the
    least violation even when a better one arrived after the first one (both at t)."""
    checker = ConsistencyChecker(compile_ntm(analyse(TBOX)), window=5, lateness=0)
    assert checker.push(_tuple("x", A, 3)) == []
    assert checker.push(_tuple("x", C, 3)) == []       # A/C at 3: open, not written
    assert checker.push(_tuple("x", B, 3)) == []       # A/B at 3: the least so far
    (report,) = checker.push(_tuple("y", C, 4))        # the source is past 3: 3 is closed
    assert (report.subject, report.time, report.ni, report.evidence) == ("x", 3, (A, B), ((A, 3), (B, 3)))
    assert checker.push(_tuple("x", B, 6)) == []
    assert [(r.subject, r.time) for r in checker.finish()] == [("x", 6)]


def test_a_source_that_ends_first_closes_nothing_another_can_still_reach():
    """Two sources, no lateness: the first ends after one batch; the second then sends an earlier tuple that gives
    the report at 5 a better violation (A/B instead of A/C). One report, naming A/B."""
    first = tuples([("x", A, 5), ("x", C, 5)], batches=1, name="first")
    second = tuples([("y", C, 1), ("x", B, 4)], batches=2, name="second")
    result = run_topology(LocalRunner(), compile_ntm(analyse(TBOX)), [first, second], window=3)
    assert [(r.subject, r.time, r.ni, r.evidence) for r in result.reports] == [("x", 5, (A, B), ((B, 4), (A, 5)))]
