"""The reconfiguration streams of "Managing caching strategies for stream reasoning with reinforcement learning":
generators follow the mutation schemas, every instance is solvable (clingo, as an independent solver, finds an
answer the checker accepts), and the checkers reject broken answers."""
import random
from collections import Counter

import clingo
import pytest

from experiments.reconfig import pup, queens
from experiments.reconfig.zipf import Zipf


def solve(program: str, facts: list[str]) -> list[clingo.Symbol] | None:
    """One answer set's shown atoms of program + facts (None: unsatisfiable)."""
    ctl = clingo.Control(["--warn=none", "1"])
    ctl.add("base", [], program + "\n".join(f + "." for f in facts) + "\n")
    ctl.ground([("base", [])])
    found = []
    result = ctl.solve(on_model=lambda m: found.append(m.symbols(shown=True)))
    return found[0] if result.satisfiable else None


def atoms_of(line: str) -> list[str]:
    body = line.split(" ", 1)[1].strip() if " " in line else ""
    return [a.strip() for a in body.split(";") if a.strip()]


@pytest.mark.parametrize("alpha", [2.2, 0.7])
def test_zipf_picks_follow_the_ranking(alpha):
    rng = random.Random(3)
    zipf = Zipf(range(40), alpha, rng)
    picks = Counter(zipf.pick(rng) for _ in range(20000))
    top = set(zipf.ranked[:8])
    share = sum(c for item, c in picks.items() if item in top) / 20000
    assert abs(share - zipf.share_of_picks(0.2)) < 0.02
    assert picks[zipf.ranked[0]] > picks[zipf.ranked[-1]]
    assert zipf.pick(rng, allowed=lambda x: x == 5) == 5
    assert zipf.pick(rng, allowed=lambda x: False) is None


@pytest.mark.parametrize("n", [4, 5, 8, 14, 22, 30, 41])
def test_complete_placement_is_valid(n):
    placement = queens.complete_placement(n, random.Random(n))
    assert queens.check(n, [], placement) == []


def test_rotation_is_a_quarter_turn_counterclockwise():
    n = 5
    assert queens.rotate({(1, 5)}, n) == {(1, 1)}
    assert queens.rotate({(1, 1)}, n) == {(5, 1)}
    board = queens.complete_placement(n, random.Random(1))
    assert queens.rotate(queens.rotate(queens.rotate(queens.rotate(board, n), n), n), n) == board
    assert queens.check(n, [], queens.rotate(board, n)) == []


def test_qc_stream_follows_its_schema():
    n = 14
    stream = queens.qc_stream(n, steps=64, seed=2)
    assert len(stream) == 64 and len(stream[0]) == int(0.4 * n)
    for step in range(1, 64):
        before, after = stream[step - 1], stream[step]
        mutation = queens.SCHEMA[(step - 1) % 4]
        if mutation == "m1":
            assert after == queens.rotate(before, n)
        elif mutation == "m2":
            assert before < after and len(after - before) == 1 or after == before
        else:
            assert after in (before, stream[0])
    assert any(stream[i] == stream[0] for i in range(4, 64, 4))     # restores happen


@pytest.mark.parametrize("n,seed", [(8, 1), (14, 2)])
def test_every_qc_instance_is_completable_and_checked(n, seed):
    stream = queens.qc_stream(n, steps=24, seed=seed)
    lines = queens.log_lines(stream)
    for given, line in zip(stream, lines):
        answer = solve(queens.program(n), atoms_of(line))
        assert answer is not None, line
        placed = {(a.arguments[0].number, a.arguments[1].number) for a in answer}
        assert queens.check(n, given, placed) == []
        # broken answers are caught: a queen dropped, a given queen moved, two queens on a diagonal
        some = sorted(placed)[0]
        assert queens.check(n, given, placed - {some})
        if given:
            g = sorted(given)[0]
            assert queens.check(n, given, (placed - {g}) | {(g[0], (g[1] % n) + 1)})
        (r1, c1), (r2, c2) = sorted(placed)[:2]        # rows 1 and 2: move the second onto the first's diagonal
        c = c1 + 1 if c1 < n else c1 - 1
        assert any("diagonal" in p for p in queens.check(n, given, (placed - {(r2, c2)}) | {(r2, c)}))


def test_double_instance_shape():
    for n in (2, 6, 11, 20):
        instance = pup.double_instance(n)
        assert len(instance.zones) == 2 * n and len(instance.sensors) == 3 * n - 2
        assert len(instance.relation) == 2 * (3 * n - 2)       # a door between two rooms
        per_zone = Counter(z for z, _s in instance.relation)
        assert set(per_zone.values()) <= {2, 3}               # corner rooms have 2 doors, the others 3
        assert len(instance.units) == -(-(3 * n - 2) // 2)


def test_pup_stream_follows_its_schema():
    stream = pup.pup_stream(8, steps=80, seed=4)
    for step in range(1, 80):
        (bz, bs), (az, as_) = stream[step - 1], stream[step]
        mutation = pup.SCHEMA[(step - 1) % 4]
        if mutation == "m1":
            assert bs == as_ and bz < az and len(az - bz) == 1
        elif mutation == "m2":
            assert bz == az and bs < as_ and len(as_ - bs) == 1
        else:
            assert (az, as_) in ((bz, bs), (frozenset(), frozenset()))
    assert max(len(z) + len(s) for z, s in stream) >= 2


@pytest.mark.parametrize("n", [4, 6])
def test_every_pup_instance_is_solvable_and_checked(n):
    instance = pup.double_instance(n)
    stream = pup.pup_stream(n, steps=16, seed=n)
    for off, line in zip(stream, pup.log_lines(stream)):
        answer = solve(pup.program(n), atoms_of(line))
        assert answer is not None, line
        zones = {(a.arguments[0].number, a.arguments[1].number) for a in answer if a.name == "zone2unit"}
        sensors = {(a.arguments[0].number, a.arguments[1].number) for a in answer if a.name == "sensor2unit"}
        assert pup.check(instance, off, zones, sensors) == []
        assert {z for z, _u in zones} == set(instance.zones) - off[0]
        # broken answers are caught: a zone unassigned, a switched-off sensor assigned, a unit over capacity
        assert pup.check(instance, off, set(list(zones)[1:]), sensors)
        off_s = sorted(set(instance.sensors) - {s for s, _u in sensors})
        if off_s:
            assert pup.check(instance, off, zones, sensors | {(off_s[0], 1)})
        crowded = {(z, 1) for z, _u in zones}
        assert pup.check(instance, off, crowded, sensors)
