"""Streamlog topologies on every runner, through the runner protocol: random sequential programs and the slides'
examples, on one source and on two skewed sources with punctuation held in memory, cut into micro-batches,
against the oracle of ``tests.streamlog.test_differential`` (the whole program and every fact solved once by
clingo). Spark runs a slice here (each case is a streaming query); ``experiments/streamlog_campaign.py`` runs
the full set on Spark."""
from __future__ import annotations

import functools

import pytest

from srtopo.ir.topology import Topology
from srtopo.streamlog import parse_program
from srtopo.streamlog.compile import compile_program
from srtopo.testing import lines, run_topology, unsupported
from tests.streamlog.test_differential import EXAMPLES, STREAMS, first_difference, oracle, program_of, random_case

SEEDS = range(0, 240, 6)     # 40 programs, each on one and on two sources
#: the programs Spark runs in the suite (each case is a streaming query of a few micro-batches)
SPARK_SEEDS = SEEDS[::8]


def per_source(feed: list, nsources: int, batches: int = 1) -> list:
    """The feed's lines of each source, in that source's order, as records held in memory."""
    return [lines([text for s, _n, text in feed if s == k], name=STREAMS[k], batches=batches)
            for k in range(nsources)]


def on_spark(runner_variant) -> bool:
    runner, options = runner_variant
    if options.physical_plan not in (None, "fused", "indexed"):
        pytest.skip("a physical plan is a consistency topology's: Streamlog runs one way on each runner")
    return runner.name == "spark"


@functools.cache
def topology_of(text: str, union: str) -> Topology:
    """The compiled topology of a program (frozen; compiled once per test process for its one- and two-source
    runs)."""
    return compile_program(program_of(text), union=union)


def run_case(runner_variant, text: str, feed: list, nsources: int, union: str = "synchronized", batches: int = 1):
    runner, options = runner_variant
    topology = topology_of(text, union)
    sources = per_source(feed, nsources, batches)
    why = unsupported(runner, topology, sources)
    assert why is None, why
    return run_topology(runner, topology, sources, options=options)


def check(result, text: str, feed: list, where: str, oracle_text: str | None = None) -> None:
    assert not result.rejected, f"well-formed lines were rejected: {result.rejected}\n{where}"
    got = [(m.time, m.atoms) for m in result.models]
    expected = oracle(oracle_text or text, [x for _s, _n, x in feed if not x.startswith("#")])
    assert got == expected, f"{first_difference(got, expected)}\n{where}\nprogram:\n{text}"
    assert result.counters.outputs == len(expected)


def test_random_programs_match_the_oracle(runner_variant):
    spark = on_spark(runner_variant)
    for seed in SPARK_SEEDS if spark else SEEDS:
        text, _features, feeds = random_case(seed)
        for nsources, feed in enumerate(feeds, start=1):
            batches = 1 + seed % 3          # Spark: one to three micro-batches, the state carried between them
            check(run_case(runner_variant, text, feed, nsources, batches=batches), text, feed,
                  f"seed {seed}, {nsources} source(s), {batches} batch(es)")


def test_sort_merge_waits_for_facts_and_loses_nothing(runner_variant):
    spark = on_spark(runner_variant)
    for seed in SEEDS[::16] if spark else SEEDS[::4]:
        text, _features, feeds = random_case(seed)
        check(run_case(runner_variant, text, feeds[1], 2, "sort-merge", batches=2), text, feeds[1],
              f"seed {seed}, sort-merge")


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_the_slides_examples(runner_variant, name):
    text, oracle_text, make_feed, nsources = EXAMPLES[name]
    for seed in range(1 if on_spark(runner_variant) else 3):
        feed = make_feed(seed)
        check(run_case(runner_variant, text, feed, nsources), text, feed, f"{name}, seed {seed}", oracle_text)


def test_a_streamlog_topology_survives_its_json_form():
    text, _features, _feeds = random_case(3)
    topology = compile_program(parse_program(text, "case.sl"), retain=5)
    assert Topology.from_dict(topology.to_dict()) == topology
    assert topology.kind == "streamlog" and topology.stages[0].retain == 5
