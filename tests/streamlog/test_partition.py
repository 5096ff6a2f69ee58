"""Key partitions of a Streamlog stage (``streamlog.partition``), driven in one process as the Spark job drives
them: each batch's lines routed (source by source, in each source's order), every partition restored from its
state of the batch before, the partitions' models merged. The merged output and the rejected records must equal
one ``Streamlog`` over the same lines (itself checked against the whole-stream oracle in test_differential),
for 1, 2 and 3 partitions."""
from __future__ import annotations

import functools
import json
import random

import pytest

from srtopo.io.tnt import NotUtf8
from srtopo.streamlog import Streamlog, parse_program
from srtopo.streamlog.keys import partition_key
from srtopo.streamlog.partition import KeyPartition, Routing, keyed, merge
from tests.streamlog.test_differential import EXAMPLES, STREAMS, oracle, program_of, random_case

SENSORS = ("avg(T,S,A) :- reading(T,S,_), A = #sum{ V,T0 : reading(T0,S,V), T - 3 < T0, T0 <= T }.\n"
           "high(T,S) :- avg(T,S,A), A > 150, not low(T,S).\n"
           "low(T,S) :- reading(T,S,V), V < 5.\n"
           "seen(T,S) :- reading(T,S,_), reading(T0,S,_), T0 < T.\n"
           "#show avg/3.\n#show high/2.\n#show seen/2.\n")


def local(text: str, feed: list, nsources: int, union: str = "synchronized", retain=None):
    """Models and rejected records of one evaluator fed in the feed's order, then finished."""
    engine = Streamlog(program_of(text), STREAMS[:nsources], union, retain)
    models = [m for s, n, line in feed for m in engine.push(s, line, n)] + engine.finish()
    return [(m.time, m.atoms) for m in models], engine.rejected


def partitioned(text: str, feed: list, nsources: int, partitions: int, batches: int,
                union: str = "synchronized", retain=None):
    """The feed cut into ``batches`` consecutive slices, each slice's lines handed over source by source (as a
    Spark micro-batch does), every partition rebuilt from its JSON state between batches."""
    program = program_of(text)
    key = partition_key(program)
    assert keyed(program, key, union, retain)
    routing = Routing.of(program, key, partitions)
    states = [None] * partitions
    parts, rejected = [], []
    size = -(-len(feed) // batches) if feed else 1
    slices = [feed[i:i + size] for i in range(0, len(feed), size)] or [[]]
    for k, piece in enumerate(slices + [None]):
        for p in range(partitions):
            engine = KeyPartition(program, STREAMS[:nsources], union, retain, routing, p, rejected.append)
            if states[p] is not None:
                engine.restore(json.loads(states[p]))
            if piece is None:
                parts += engine.finish()
                continue
            for s, n, line in sorted(piece, key=lambda x: (x[0], x[1])):
                for part, what, ts in routing.rows(line):
                    if part == p:
                        parts += engine.receive(s, what, ts, line, n)
            states[p] = json.dumps(engine.state())
    order = {(STREAMS[s], n): i for i, (s, n, _line) in enumerate(sorted(feed, key=lambda x: (x[0], x[1])))}
    rejected.sort(key=lambda r: order[(r.source, r.line)])
    return [(m.time, m.atoms) for m in merge(parts)], rejected


@functools.cache
def keyed_cases():
    """The random programs of test_differential that are keyed, with their feeds, and the keyed slides' examples
    (made when a test first asks: analysing 240 programs took seconds of every collection that imports this)."""
    out = []
    for seed in range(240):
        text, _features, feeds = random_case(seed)
        program = program_of(text)
        if keyed(program, partition_key(program), "synchronized", None):
            out += [(f"seed {seed}/{n}", text, feed, n) for n, feed in enumerate(feeds, start=1)]
    for name, (text, _oracle_text, make_feed, nsources) in EXAMPLES.items():
        program = program_of(text)
        if keyed(program, partition_key(program), "synchronized", None):
            out += [(f"{name} {seed}", text, make_feed(seed), nsources) for seed in range(3)]
    return out


@pytest.mark.slow
def test_there_are_enough_keyed_cases():
    cases = keyed_cases()
    assert len(cases) >= 40 and len({text for _w, text, _f, _n in cases}) >= 20


@pytest.mark.slow
def test_keyed_partitions_equal_one_evaluator_and_the_oracle():
    for where, text, feed, nsources in keyed_cases():
        expected, _ = local(text, feed, nsources)
        assert expected == oracle(text, [x for _s, _n, x in feed if not x.startswith("#")]), where
        for partitions, batches in ((1, 1), (2, 3), (3, 2)):
            got, rejected = partitioned(text, feed, nsources, partitions, batches)
            assert got == expected, f"{where}, {partitions} partitions, {batches} batches\n{text}"
            assert not rejected, where


def sensor_feed(seed: int, sensors: int = 12, hostile: bool = False) -> list:
    """Two skewed streams of readings with punctuation; with ``hostile``, lines of every kind a stream may hold
    that cannot be used."""
    rng = random.Random(seed)
    per = []
    for k in range(2):
        lines, t = [], rng.randint(0, 3) + 4 * k
        for _ in range(25):
            lines += [f"reading({t},s{rng.randint(1, sensors)},{rng.randint(0, 99)})." for _ in range(rng.randint(1, 4))]
            following = t + rng.choice((0, 1, 1, 2))
            if rng.random() < 0.2:
                lines.append(f"#punctuation {following}.")
            if hostile and rng.random() < 0.3:
                lines.append(rng.choice([NotUtf8("reading(\ufffd,s1,3)."), "reading(5,s1,3", "reading(x,s1,2).",
                                         f"reading({t},s1,99999999999999999999).", "#comment.", "small(3).",
                                         f"reading({t - 2},s2,1).", "reading(99999999,s3,1).", "% skipped", "",
                                         "reading(3).", f"other({t},s4)."]))
            t = following
        per.append(lines)
    return sorted([(k, n, line) for k, lines in enumerate(per) for n, line in enumerate(lines, start=1)],
                  key=lambda x: (x[1], x[0]))


@pytest.mark.parametrize("union", ["synchronized", "sort-merge"])
def test_hostile_lines_are_rejected_once_as_one_evaluator_rejects_them(union):
    text = "small(3).\n" + SENSORS
    for seed in range(4):
        feed = sensor_feed(seed, hostile=True)
        expected, expected_rejected = local(text, feed, 2, union)
        assert len(expected_rejected) > 3
        for partitions in (2, 3):
            got, rejected = partitioned(text, feed, 2, partitions, 3, union)
            assert got == expected
            assert [r.to_dict() for r in rejected] == sorted((r.to_dict() for r in expected_rejected),
                                                             key=lambda r: (r["source"], r["line"]))


def test_retain_with_anchored_rules_rebuilds_at_the_same_timestamps():
    """With retain, a rule looking further back than the kept history sees what one evaluator sees."""
    text = ("seen(T,S) :- reading(T,S,_), reading(T0,S,_), T0 < T.\n"
            "big(T,S) :- reading(T,S,V), #count{ T0 : reading(T0,S,V0), T0 < T } > 3.\n#show seen/2.\n#show big/2.\n")
    for seed in range(3):
        feed = sensor_feed(seed, sensors=5)
        expected, _ = local(text, feed, 2, retain=4)
        assert expected != local(text, feed, 2)[0], "retain changes nothing: the case is vacuous"
        for partitions in (2, 3):
            assert partitioned(text, feed, 2, partitions, 4, retain=4)[0] == expected


def test_what_is_not_split():
    sensors = parse_program(SENSORS, "s.sl").check()
    key = partition_key(sensors)
    assert keyed(sensors, key, "synchronized", None) and keyed(sensors, key, "sort-merge", 10)
    assert not keyed(sensors, key, "plain", None)
    later = parse_program("next(T,S) :- reading(T0,S,_), T = T0 + 1.\n", "n.sl").check()
    assert keyed(later, partition_key(later), "synchronized", None)
    assert not keyed(later, partition_key(later), "synchronized", 5)
