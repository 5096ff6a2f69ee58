"""Lateness on every runner variant: random out-of-order streams (punctuation included) over one or two sources,
a random allowed lateness and a random cut into micro-batches. Every variant must reject exactly the lines that
the record-by-record definition (``tests.oracle.late_or_ahead``) calls late, and report what the brute-force
oracle reports on the accepted tuples: how the input is cut into batches changes nothing."""
from __future__ import annotations

import random

import pytest

from srtopo.concepts import RDF_TYPE
from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.io.tnt import format_tnt
from srtopo.testing import lines, run_topology, unsupported
from tests.oracle import late_or_ahead, oracle_reports
from tests.randomgen import merge, prefixed, random_stream, random_tbox

#: seeds per variant: many on the local runner, a few on Spark (each Spark run is a query of its own)
SEEDS = {"local": 16, "spark": 2}


def _case(seed: int, most_batches: int = 4):
    """(topology, per-source lines, lateness, window, batches per source, the oracle's expectations)."""
    rng = random.Random(9000 + seed)
    parts, stream, tboxes = [], [], []
    for i in range(3):
        tbox = random_tbox(rng, n_roles=0)
        p = f"urn:c{i}:"
        a = analyse(tbox)
        topology = compile_ntm(a) if rng.random() < 0.5 else compile_ltm(a, [1] * len(a.groups) or [0])
        parts.append(prefixed(topology, p))
        tboxes.append((p, tbox))
        stream += [(p + s, p + c, t) for s, c, t in random_stream(rng, tbox, n=rng.randint(20, 50), horizon=40)]
    stream.sort(key=lambda x: x[2])
    text = [format_tnt(t, s, RDF_TYPE, c) for s, c, t in stream]
    for _ in range(len(text) // 4):                  # out of order: some lines move far back, some a little
        i = rng.randrange(len(text))
        j = max(0, i - rng.choice((1, 2, 3, 10, 40)))
        text.insert(j, text.pop(i))
    for _ in range(rng.randint(0, 3)):               # punctuation: no later tuple of this source below T
        i = rng.randrange(len(text))
        text.insert(i, f"# watermark {stream[min(len(stream) - 1, i)][2] - rng.randint(0, 4)}")
    n_sources = rng.choice((1, 2))
    per_source = [[] for _ in range(n_sources)]
    for line in text:
        per_source[rng.randrange(n_sources)].append(line)
    lateness = rng.choice((0, 1, 2, None))
    window = rng.choice((3, 5, None))
    batches = [rng.randint(1, most_batches) for _ in range(n_sources)]

    late, accepted = set(), []
    for k, src_lines in enumerate(per_source):
        records = []
        for n, line in enumerate(src_lines, start=1):
            if line.startswith("#"):
                records.append((n, int(line.split()[-1]), "floor"))
            else:
                records.append((n, int(line.split("\t")[0]), False))
        rejected = late_or_ahead(records, lateness)
        late |= {(f"<s{k}>", n) for n in rejected}
        for n, line in enumerate(src_lines, start=1):
            if not line.startswith("#") and n not in rejected:
                t, rest = line.split("\t")
                s, _p, c, _dot = rest.split(" ")
                accepted.append((s[1:-1], c[1:-1], int(t)))
    expected = {p: oracle_reports(tbox.pis, [ni.pair for ni in tbox.nis],
                                  [(s[len(p):], c[len(p):], t) for s, c, t in accepted if s.startswith(p)], window)
                for p, tbox in tboxes}
    return merge(parts), per_source, lateness, window, batches, late, expected


def test_every_runner_rejects_the_late_lines_of_the_definition_whatever_the_batches(runner_variant):
    runner, options = runner_variant
    found_late = 0
    for seed in range(SEEDS[runner.name]):
        topology, per_source, lateness, window, batches, late, expected = _case(seed, 4 if runner.name == "local" else 3)
        sources = [lines(src, batches=b, name=f"<s{k}>") for k, (src, b) in enumerate(zip(per_source, batches))]
        reason = unsupported(runner, topology, sources)
        if reason:
            pytest.skip(reason)
        result = run_topology(runner, topology, sources, window=window, lateness=lateness, options=options)
        got = {(r.source, r.line) for r in result.rejected}
        assert got == late, f"seed {seed} (lateness {lateness}, batches {batches}): rejected {sorted(got - late)} " \
                            f"beyond the definition, accepted {sorted(late - got)} it calls late"
        assert all(r.reason.startswith("late: event time ") for r in result.rejected)
        assert result.counters.late == len(late) and result.counters.malformed == 0
        for p, want in expected.items():
            mine = {(s[len(p):], t) for s, t in result.keys if s.startswith(p)}
            assert mine == want, f"seed {seed}, case {p} (lateness {lateness}, window {window}, batches {batches})"
        found_late += len(late)
    assert found_late, "no case had a late line: the comparison would be vacuous"


def test_the_reasons_say_how_far_behind_and_below_which_punctuation(runner_variant):
    """Each source is measured against its own earlier lines: a line 1 behind its source's latest is accepted
    with lateness 1 whatever the other source sent, and one below its source's punctuation is late."""
    runner, options = runner_variant
    ex = "http://ex.org/r#"
    from srtopo.consistency.tbox import TBox
    topology = compile_ntm(analyse(TBox.build([], [(ex + "A", ex + "B")])))
    a = [format_tnt(t, ex + "x", RDF_TYPE, ex + "A") for t in (5, 9, 8, 7, 10)] + ["# watermark 12",
                                                                                   format_tnt(11, ex + "y", RDF_TYPE, ex + "A")]
    b = [format_tnt(t, ex + "x", RDF_TYPE, ex + "B") for t in (9, 30, 8)]
    sources = [lines(a, batches=2, name="a"), lines(b, batches=2, name="b")]
    reason = unsupported(runner, topology, sources)
    if reason:
        pytest.skip(reason)
    result = run_topology(runner, topology, sources, window=1, lateness=1, options=options)
    assert sorted((r.source, r.line, r.reason) for r in result.rejected) == [
        ("a", 4, "late: event time 7 is more than 1 behind event time 9, the latest of its source"),
        ("a", 7, "late: event time 11 is below 12, the punctuation of its source"),
        ("b", 3, "late: event time 8 is more than 1 behind event time 30, the latest of its source")]
    assert result.keys == {(ex + "x", 9), (ex + "x", 10)}
