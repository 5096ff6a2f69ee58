"""The partition key of rule stages, by hand: which programs can run in key partitions and by what."""
from __future__ import annotations

import pytest

from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program


def keys(text: str) -> list[str]:
    return [str(s.key) for s in compile_program(parse_program(text), strategy="restart").stages]


def test_heavy_join_is_keyed_by_the_join_variable():
    assert keys("a(X,Y) :- b(X,Z) in [2 sec], c(Z,Y) in [2 sec].") == ["Z (b/2 arg 2, c/2 arg 1)"]      # a(X,Y) does not carry Z


def test_a_per_sensor_program_is_keyed_by_the_sensor():
    # one macro-node, so one stage: hot is read back by alarm and keyed like temp
    assert keys("hot(S) :- temp(S,V) always in [3 sec], V > 20.\nalarm(S) :- hot(S), not off(S).") == \
        ["S (alarm/1 arg 1, hot/1 arg 1, off/1 arg 1, temp/2 arg 1)"]


@pytest.mark.parametrize("text", [
    "reach(X,Z) :- link(X,Z).\nreach(X,Z) :- reach(X,Y), link(Y,Z).",     # reachability: no common position
    "a(X) :- X = 1..3, not b(X).",                                         # the key only under negation
    "n(C) :- #count{X: b(X)} = C.",                                        # aggregate over every key
    "p :- q(X), not r.",                                                   # a 0-ary input
    "a(X) :- b(X), c(1).",                                                 # a constant where the key must be
])
def test_stages_without_a_common_key_run_in_one_partition(text):
    assert keys(text) == ["one partition"] * len(keys(text))


def test_aggregates_over_one_key_keep_the_key():
    assert keys("n(X,C) :- a(X), #count{Y: b(X,Y)} = C.") == ["X (a/1 arg 1, b/2 arg 1, n/2 arg 1)"]


def test_count_windows_key_on_the_observed_arguments():
    assert keys("busy(L) :- car(L,P) count N in [5 sec], N > 3.") == ["L (busy/1 arg 1, car/2 arg 1)"]
