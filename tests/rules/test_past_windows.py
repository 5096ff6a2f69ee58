"""Negation through a window over earlier time points only (``{1}``) closes no cycle at the current time point:
what the window reads is the history, fixed before the time point is evaluated. Such programs are accepted
(docs/reasoning.md, "What may depend on what"), in the stratified part and in the choice part, and give the
answers worked out by hand."""
import pytest

from srtopo.errors import ProgramError
from srtopo.io.sources import Timeline
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalRunner, RunConfig

#: p(1) at time points 0, 1, 2 and 4; p(2) at 3
POINTS = (("p(1)",), ("p(1)",), ("p(1)",), ("p(2)",), ("p(1)",))


def _models(text: str, strategy: str) -> list[set]:
    topology = compile_program(parse_program(text), strategy=strategy)
    result = LocalRunner().run(topology, [Timeline(POINTS)], RunConfig(lateness=0, print_empty=True))
    return [set(m.atoms) for m in result.outputs]


@pytest.mark.parametrize("strategy", ["restart", "incremental", "auto"])
def test_a_toggle_through_the_previous_time_point(strategy):
    # on(t) iff p(1) at t and not on(t-1)
    on = ["on" in m for m in _models("on :- p(1), not on in {1}.\n", strategy)]
    assert on == [True, False, True, False, True]


@pytest.mark.parametrize("strategy", ["restart", "incremental", "forget-lemmas", "progress", "rl", "auto"])
def test_a_choice_part_reading_its_own_past(strategy):
    # b(t) iff p(1) and not a(t-1); a(t) iff p(1) and not b(t): a is never true, b whenever p(1) holds
    models = _models("a :- p(1), not b.\nb :- p(1), not a in {1}.\n", strategy)
    assert [m - {"p(1)", "p(2)"} for m in models] == [{"b"}, {"b"}, {"b"}, set(), {"b"}]
    # s(X) may be chosen; it must be when it was false at t-1 (then u(X) holds)
    models = _models("{ s(X) } :- p(X).\nu(X) :- p(X), not s(X) in {1}.\ns(X) :- u(X).\n", strategy)
    assert {"s(1)", "u(1)"} <= models[0] and "u(1)" not in models[1]
    for t in range(1, 5):
        previous = models[t - 1]
        for x in ("1", "2"):
            if f"p({x})" in models[t]:
                assert (f"u({x})" in models[t]) == (f"s({x})" not in previous)
                assert f"u({x})" not in models[t] or f"s({x})" in models[t]


def test_negation_through_a_window_that_reads_the_current_time_point_is_still_refused():
    with pytest.raises(ProgramError, match="not stratified"):
        compile_program(parse_program("on :- p(1), not on in {0,1}.\n"))
