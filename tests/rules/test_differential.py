"""Both clingo strategies against the independent unrolled-ASP oracle (conftest.oracle)."""
from __future__ import annotations

import functools

import pytest
from clingo import parse_term

from srtopo.rules.parse import parse_file, parse_program
from srtopo.rules.log import read_records
from srtopo.rules.points import time_points
from tests.rules.conftest import oracle, random_case, run_reasoner

CORPUS = ["example3", "example4", "example5", "at_least", "at_most", "count", "carPassing", "coolingSystem",
          "recursive_in", "recursive_always", "UTrafficMonitoring", "PV-system"]


def _timeline(path) -> list[list]:
    with open(path, encoding="utf-8") as handle:
        return [atoms for _t, _stamp, atoms in time_points(read_records(handle))]


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_program_matches_oracle(examples_dir, name):
    program = parse_file(examples_dir / "programs" / f"{name}.idlvsr")
    timeline = _timeline(examples_dir / "logs" / f"{name}.log")
    expected = oracle(program, timeline)
    assert any(expected), "the oracle derives nothing: the comparison would be vacuous"
    for strategy in ("restart", "incremental", "incremental-strict", "auto"):
        assert run_reasoner(program, timeline, strategy) == expected, strategy


def test_pv_system_gaps_are_empty_time_points(examples_dir):
    # log timestamps 12:15:51, :56, 16:00, :03 -> time points 0, 5, 9, 12 with empty ones in between
    timeline = _timeline(examples_dir / "logs" / "PV-system.log")
    assert len(timeline) == 13 and [i for i, t in enumerate(timeline) if t] == [0, 5, 9, 12]


@functools.cache
def _random(seed: int):
    """The random case of ``seed``: text, stream, Program, timeline and the oracle's models (once per process)."""
    text, stream = random_case(seed)
    program = parse_program(text, f"random-{seed}")
    timeline = [[parse_term(a) for a in atoms] for atoms in stream]
    return text, stream, program, timeline, oracle(program, timeline)


@pytest.mark.parametrize("block", range(10))
def test_random_stratified_programs_match_oracle(block):
    for seed in range(block * 12, block * 12 + 12):      # 120 programs, fixed seeds
        text, stream, program, timeline, expected = _random(seed)
        for strategy in ("restart", "incremental-strict", "incremental"):
            got = run_reasoner(program, timeline, strategy)
            assert got == expected, f"seed {seed}, {strategy}:\n{text}\nstream {stream}"


def test_random_programs_are_not_trivial():
    derived = 0
    for seed in range(120):
        _text, stream, _program, _timeline, out = _random(seed)
        given = {parse_term(a) for s in stream for a in s}
        derived += any(out_t - given for out_t in out)
    assert derived >= 60
