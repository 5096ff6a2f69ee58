"""A stream whose time points are given (JSON lines, timestamped N-Triples) starts at its earliest record, as a log
starts at its first line: epoch seconds, or times near 2^62, give on every runner the models the same stream gives
shifted to start at 0 (the unrolled-ASP oracle's), and what a run does depends on the time points its records
reach and its windows' reach, never on their distance from zero or from each other."""
from __future__ import annotations

import json

import pytest
from clingo import parse_term

from srtopo.concepts import RDF_TYPE
from srtopo.io.sources import AtomLog, Lines
from srtopo.io.tnt import format_tnt
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner, get_runner
from srtopo.testing import run_topology
from tests.rules.conftest import oracle

PROGRAM = ("c(X) :- b(X).\n"
           "steady(X) :- b(X) always in [2].\n"       # at the first time point: no earlier one to miss
           "quiet :- not b(_) in [1].\n"              # derived at the empty time points too
           "#trigger_frequency(3) beat :- c(_) in [5].\n")
#: time points relative to the stream's first: atoms (7 is a record without atoms)
POINTS = {0: ["b(1)"], 1: ["b(1)", "b(2)"], 3: ["b(2)"], 7: []}
#: a time point used only where a test shows that the run ends with the fix (without it, it ran for hours)
HUGE = [1_700_000_000, 2 ** 62 - 10]


def _expected(offset: int) -> dict:
    timeline = [[parse_term(a) for a in POINTS.get(t, [])] for t in range(max(POINTS) + 1)]
    models = oracle(parse_program(PROGRAM), timeline, periods=(3,))
    return {offset + t: sorted(str(a) for a in atoms) for t, atoms in enumerate(models)}


def _lines(offset: int) -> list[str]:
    return [json.dumps({"time": offset + t, "atoms": atoms}) for t, atoms in sorted(POINTS.items())]


@pytest.mark.parametrize("offset", [100_000] + HUGE)
@pytest.mark.parametrize("runner", ["local", "spark"])
def test_a_json_stream_far_from_zero_gives_the_models_of_the_same_stream_from_zero(runner, offset, request):
    options = None
    if runner == "spark":
        request.getfixturevalue("spark")
        options = SparkOptions(partitions=2)
    topology = compile_program(parse_program(PROGRAM), strategy="restart")
    result = run_topology(get_runner(runner), topology, [Lines(tuple(_lines(offset)), batches=2, name="<s>")],
                          options=options)
    assert {m.time: list(m.atoms) for m in result.models} == _expected(offset)     # every time point from the first
    assert not result.rejected


@pytest.mark.parametrize("runner", ["local", "spark"])
def test_a_tnt_stream_at_epoch_seconds_starts_at_its_first_statement(runner, tmp_path, request):
    options = None
    if runner == "spark":
        request.getfixturevalue("spark")
        options = SparkOptions(partitions=2)
    epoch, x = 1_700_000_000, "http://x/"
    path = tmp_path / "s.tnt"
    path.write_text(format_tnt(epoch, x + "bob", RDF_TYPE, x + "Student") + "\n"
                    + format_tnt(epoch + 2, x + "bob", RDF_TYPE, x + "Faculty") + "\n", encoding="utf-8")
    program = (f'student(X) :- triple(X, "{RDF_TYPE}", "{x}Student") in [5 sec].\n'
               f'clash(X) :- student(X), triple(X, "{RDF_TYPE}", "{x}Faculty").\n#show clash/1.\n')
    result = run_topology(get_runner(runner), compile_program(parse_program(program)), [AtomLog(str(path), "tnt")],
                          lateness=0, options=options)
    assert [(m.time, list(m.atoms)) for m in result.models] == [
        (epoch, []), (epoch + 1, []), (epoch + 2, ['clash("http://x/bob")'])]


@pytest.mark.parametrize("driver_lines", [0, 2000])
def test_spark_derives_rows_for_the_time_points_it_outputs_not_for_every_one_of_a_gap(spark, driver_lines):
    """``quiet`` holds at every empty time point of a gap of 20,000: the Spark job (in executor tasks or on the
    driver) jumps over the gap as the local runner does, and derives rows only for the time points it outputs
    and those its windows read on, not one per time point of the gap."""
    gap = 20_000
    lines = [json.dumps({"time": 5, "atoms": ["b(1)"], "end": True}),
             json.dumps({"time": 5 + gap, "atoms": ["b(2)"], "end": True})]
    topology = compile_program(parse_program(PROGRAM), strategy="restart")
    config = RunConfig(lateness=0, print_empty=False, options=SparkOptions(partitions=2, driver_lines=driver_lines))
    result = SparkRunner().run(topology, [Lines(tuple(lines), name="<s>")], config)
    local = LocalRunner().run(topology, [Lines(tuple(lines), name="<s>")], RunConfig(lateness=0, print_empty=False))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    assert [m.time for m in result.models] == [5, 5 + gap]
    derived = sum(s.outputs or 0 for s in result.counters.stages)
    assert 0 < derived < 50, derived
