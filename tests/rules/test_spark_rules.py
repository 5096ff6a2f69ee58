"""Rule topologies on Spark: the same models as the local runner and the unrolled-time oracle.

Many random programs run in ONE Spark query: each case's predicates carry a prefix (``c7_p0``), the programs
are merged into one (their components never depend on each other) and each case's models are read back by
prefix. Out-of-order input within the allowed lateness, several sources and keyed as well as one-partition
stages are all exercised."""
from __future__ import annotations

import json
import random
import re

import pytest
from clingo import parse_term

from srtopo.io.sources import AtomLog
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_file, parse_program
from srtopo.rules.log import read_records
from srtopo.rules.points import time_points
from srtopo.runners import LocalRunner, RunConfig, SparkOptions, get_runner
from srtopo.testing import lines, run_topology, timeline
from tests.rules.conftest import IDLVSR, oracle, random_case

SPARK = SparkOptions(partitions=2)
#: every micro-batch in executor tasks (the default evaluates small ones on the driver: ``rules.batch``)
EXECUTORS = SparkOptions(partitions=2, driver_lines=0)
#: per block of random programs: where its micro-batches are evaluated, and the ``driver_lines`` giving that
BLOCK_PLANS = [({"executors"}, 0), ({"driver"}, 2000), ({"executors"}, 0), ({"driver", "executors"}, 6)]
_NAME = re.compile(r"\b([a-z][A-Za-z0-9_]*)\(")


def prefixed(text: str, prefix: str) -> str:
    """Every predicate of a random program or atom renamed ``prefix + name`` (the programs use f(...) syntax)."""
    return _NAME.sub(lambda m: f"{prefix}{m.group(1)}(", text)


def spark_run(spark, topology, sources, lateness=None, options=SPARK, **kw):
    return run_topology(get_runner("spark"), topology, sources, lateness=lateness, options=options, **kw)


def models_by_time(result) -> dict[int, frozenset]:
    return {m.time: frozenset(m.atoms) for m in result.models}


def disordered_json_lines(points: list[list[str]], lateness: int, rng: random.Random) -> list[str]:
    """Each time point's atoms split over up to three records, and the records shuffled so that none arrives
    after a record more than ``lateness`` time points later (key = time + uniform(0, lateness))."""
    records = []
    for t, atoms in enumerate(points):
        atoms = list(atoms)
        rng.shuffle(atoms)
        cuts = sorted(rng.sample(range(len(atoms) + 1), min(2, len(atoms) + 1)))
        for part in (atoms[:cuts[0]], atoms[cuts[0]:cuts[-1]], atoms[cuts[-1]:]):
            if part or rng.random() < 0.3:
                records.append((t + rng.uniform(0, lateness), json.dumps({"time": t, "atoms": part})))
        records.append((t + rng.uniform(0, lateness), json.dumps({"time": t, "atoms": []})))
    return [text for _key, text in sorted(records)]


def _merged_random_cases(seeds):
    texts, points, cases = [], [], []
    for seed in seeds:
        text, stream = random_case(seed)
        if seed % 4 == 0:       # a join on two variables: the stage holding it runs in one partition
            text += "\npair(X) :- e(X), f(Y) in [1], Y < X."
        p = f"c{seed}_"
        program = parse_program(text, f"random-{seed}")
        expected = oracle(program, [[parse_term(a) for a in s] for s in stream])
        cases.append((p, len(stream), expected, text))
        texts.append(prefixed(text, p))
        for t, atoms in enumerate(stream):
            while len(points) <= t:
                points.append([])
            points[t] += [prefixed(a, p) for a in atoms]
    return "\n".join(texts), points, cases


@pytest.mark.parametrize("block", range(4))
def test_random_programs_match_the_oracle_on_spark_and_local(spark, block):
    """120 random stratified programs (30 per query), out of order within the lateness, over two sources;
    evaluated in executor tasks, on the driver, and both in one query (batch by batch, by size)."""
    rng = random.Random(block)
    program_text, points, cases = _merged_random_cases(range(block * 30, block * 30 + 30))
    topology = compile_program(parse_program(program_text, f"merged-{block}"), strategy="restart")
    lateness = 2
    records = disordered_json_lines(points, lateness, rng)
    first, second = [], []
    for r in records:
        (first if rng.random() < 0.5 else second).append(r)
    sources = [lines(first, batches=3, name="first"), lines(second, batches=2, name="second")]
    plans, driver_lines = BLOCK_PLANS[block]
    result = spark_run(spark, topology, sources, lateness=lateness,
                       options=SparkOptions(partitions=2, driver_lines=driver_lines))
    assert {b.detail["evaluated_on"] for b in result.batches} == plans
    local = LocalRunner().run(topology, sources, RunConfig(lateness=lateness))
    assert result.rejected == [] and local.rejected == []
    got, want = models_by_time(result), models_by_time(local)
    assert got == want
    assert sorted(got) == list(range(len(points)))
    for p, n, expected, text in cases:
        for t in range(n):
            mine = {a for a in got[t] if a.startswith(p)}
            assert mine == {prefixed(str(a), p) for a in expected[t]}, f"case {p} at {t}:\n{text}"
    assert any(s.key.keyed for s in topology.stages) or block, "no keyed stage exercised"


def test_merged_random_programs_have_keyed_and_one_partition_stages():
    program_text, _points, _cases = _merged_random_cases(range(30))
    keyed = [s.key.keyed for s in compile_program(parse_program(program_text)).stages]
    assert any(keyed) and not all(keyed)


CORPUS = ["example3", "example4", "example5", "at_least", "at_most", "count", "carPassing", "coolingSystem",
          "recursive_in", "recursive_always", "UTrafficMonitoring", "PV-system"]


def _corpus_timeline(examples_dir, name):
    with open(examples_dir / "logs" / f"{name}.log", encoding="utf-8") as handle:
        return [atoms for _t, _s, atoms in time_points(read_records(handle))]


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_programs_on_spark_give_the_local_and_oracle_models(spark, examples_dir, name):
    program = parse_file(examples_dir / "programs" / f"{name}.idlvsr")
    topology = compile_program(program)
    log = str(examples_dir / "logs" / f"{name}.log")
    result = spark_run(spark, topology, [AtomLog(log)], lateness=0)
    local = LocalRunner().run(topology, [AtomLog(log)], RunConfig(lateness=0))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    expected = oracle(program, _corpus_timeline(examples_dir, name))
    shows = program.shows
    for model, atoms in zip(result.models, expected):
        want = sorted(str(a) for a in atoms
                      if shows is None or (a.name, len(a.arguments)) in set(shows))
        assert list(model.atoms) == want, model.time


@pytest.mark.parametrize("name, log, extra", [
    ("now_example", "now_examples.log", {"now_format": "sec"}), ("exe_trigger", "exe_trigger.log", {}),
    ("external_atoms", "external_atoms.log", {"scripts": ("external_definition/external_atoms.py",)})])
def test_idlvsr_extensions_on_spark_give_the_local_models(spark, examples_dir, name, log, extra):
    """@now (its origin from the batch's first timestamp), the trigger ticks and the external atoms' functions
    are the evaluator's own, in every partition task; a keyed stage reads @now too (now_example's second stage)."""
    from srtopo.rules.compile import Options
    extra = dict(extra, scripts=tuple(str(examples_dir / s) for s in extra.get("scripts", ())))
    topology = compile_program(parse_file(examples_dir / "programs" / f"{name}.idlvsr"), options=Options(**extra))
    path = str(examples_dir / "logs" / log)
    result = spark_run(spark, topology, [AtomLog(path)], lateness=0)
    local = LocalRunner().run(topology, [AtomLog(path)], RunConfig(lateness=0))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    assert any(a.startswith(("a(", "d(", "w(")) for m in local.models for a in m.atoms)


ICLP = IDLVSR / "ICLP2021-Experiments"
#: the suite's slice of the ICLP2021 campaign (``python -m experiments.bench_rules check`` runs every
#: input): keyed stages (Content Caching, Heavy Join) and one-partition stages (Photo-voltaic's reachability)
ICLP_SMALL = [
    ("ContentCaching/events_variation_test/I-DLV-sr/50/Program/cat_w05.idlvsr",
     "ContentCaching/events_variation_test/I-DLV-sr/50/Log/tp60etp50ce1.log", True),
    ("HeavyJoin/I-DLV-sr/50/Program/encoding_w2.idlvsr", "HeavyJoin/I-DLV-sr/50/Log/tp30etp25ce1.log", True),
    ("Photo-voltaicSystem/I-DLV-sr/G20x20S15n11970/Program/G20x20S15n11970.idlvsr",
     "Photo-voltaicSystem/I-DLV-sr/G20x20S15n11970/Log/tp60G20x20S15n11970nostro.log", False),
]


@pytest.mark.parametrize("program_path,log_path,keyed", ICLP_SMALL,
                         ids=["content-caching-50", "heavy-join-50", "photo-voltaic-20x20"])
def test_iclp_inputs_on_spark_give_the_local_models(spark, program_path, log_path, keyed):
    if not (ICLP / program_path).exists():
        pytest.skip("ICLP2021 inputs not present in ../shared/data")
    topology = compile_program(parse_file(ICLP / program_path))
    assert all(stage.key.keyed == keyed for stage in topology.stages)
    log = AtomLog(str(ICLP / log_path))
    result = spark_run(spark, topology, [log], lateness=0, options=EXECUTORS if keyed else SPARK)
    local = LocalRunner().run(topology, [log], RunConfig(lateness=0))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    assert sum(len(m.atoms) for m in local.models) > 0


def test_late_and_malformed_records_are_rejected_with_the_local_reasons(spark):
    """Batch 2 brings a record for time point 2, more than the lateness 1 behind its source's latest (5), and a
    malformed one; both runners reject the same lines for the same reasons and give the same models."""
    topology = compile_program(parse_program("c(X) :- b(X) in [1]."))
    records = [json.dumps({"time": t, "atoms": [f"b({t})"]}) for t in range(6)]
    batch2 = [json.dumps({"time": 2, "atoms": ["b(99)"]}), "{\"time\": 7, \"atoms\": [\"b(\"]}",
              json.dumps({"time": 8, "atoms": ["b(8)"]})]
    source = lines(records + batch2, batches=2)
    result = spark_run(spark, topology, [source], lateness=1)
    local = LocalRunner().run(topology, [source], RunConfig(lateness=1))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    assert [(r.line, r.reason) for r in result.rejected] == [(r.line, r.reason) for r in local.rejected]
    assert [r.line for r in result.rejected] == [7, 8]
    assert result.rejected[0].reason == "late: time point 2 is more than 1 behind time point 5, the latest of its source"
    assert (result.counters.late, result.counters.malformed) == (1, 1)
    assert [m.time for m in result.models] == list(range(9))


def test_log_timestamps_and_a_gap_give_the_local_time_points(spark, tmp_path):
    log = tmp_path / "sensor.log"
    log.write_text("2021-05-17T13:38:27 temp(s1,30); temp(s2,10)\n"
                   "2021-05-17T13:38:29 temp(s1,31)\n"
                   "2021-05-17T13:38:30 temp(s1,\n"
                   "2021-05-17T13:38:32 temp(s2,40); temp(s1,35)\n", encoding="utf-8")
    program = "hot(S) :- temp(S,V) always in [2 sec], V > 20.\nwarm(S) :- temp(S,V) in [1 sec], V > 25."
    topology = compile_program(parse_program(program))
    assert all(s.key.keyed for s in topology.stages)
    result = spark_run(spark, topology, [AtomLog(str(log))], lateness=0)
    local = LocalRunner().run(topology, [AtomLog(str(log))], RunConfig(lateness=0))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    assert [m.time for m in result.models] == list(range(6))
    assert result.models[0].timestamp == "2021-05-17T13:38:27" and result.models[1].timestamp is None
    assert [(r.line, r.reason) for r in result.rejected] == [(r.line, r.reason) for r in local.rejected]
    assert len(result.rejected) == 1 and result.rejected[0].line == 3


def test_a_careless_log_gives_the_same_rejections_and_models_on_both_runners(spark, tmp_path):
    """A byte-order mark, a non-ASCII name, bytes that are not UTF-8, an integer beyond 32 bits and a timestamp
    mistyped far into the future: each bad line is one rejected record with the same reason on both runners,
    and the good lines around them give the same models."""
    log = tmp_path / "careless.log"
    log.write_bytes(b"\xef\xbb\xbf0 b(1)\n1 b(caf\xc3\xa9)\n2 b(\xff\xfe)\n3 b(1099511627776)\n"
                    b"99999999999999999999 b(2)\n4 b(\"caf\xc3\xa9\")\n")
    topology = compile_program(parse_program("c(X) :- b(X).\nd(X) :- b(X) at least 1 in [2]."))
    result = spark_run(spark, topology, [AtomLog(str(log))], lateness=0)
    local = LocalRunner().run(topology, [AtomLog(str(log))], RunConfig(lateness=0))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    assert [(r.line, r.reason) for r in result.rejected] == [(r.line, r.reason) for r in local.rejected]
    assert [r.line for r in local.rejected] == [2, 3, 4, 5]
    assert local.rejected[3].reason == "timestamp 99999999999999999999 is beyond 2^62"
    assert [m.time for m in local.models] == [0, 1, 2, 3, 4]
    assert local.models[-1].atoms == ('b("café")', 'c("café")', 'd("café")')


def test_the_papers_example_with_every_time_point_in_its_own_batch(spark):
    topology = compile_program(parse_program("c(X) :- b(X) at least 2 in {0,1,3}."))
    points = [["a(2)", "b(5)"], ["a(3)", "c(7)"], ["b(5)"], ["a(3)"]]
    result = spark_run(spark, topology, [timeline(points, batches=4)], lateness=0)
    assert [set(m.atoms) for m in result.models] == [{"a(2)", "b(5)"}, {"a(3)", "c(7)"}, {"b(5)"},
                                                      {"a(3)", "c(5)"}]


def test_a_log_line_completes_its_time_point_in_its_own_batch(spark, tmp_path):
    """One log line per micro-batch: each batch evaluates the time point its line brought (I-DLV-sr evaluates a
    line on arrival), where JSON records, which may be followed by more of their time point, wait one batch."""
    from srtopo.io.tnt import write_tnt
    topology = compile_program(parse_program("c(X) :- b(X) at least 2 in {0,1,3}."))
    log_lines = [f"{t} " + "; ".join(p) for t, p in enumerate([["a(2)", "b(5)"], ["a(3)", "c(7)"], ["b(5)"], ["a(3)"]])]
    write_tnt(str(tmp_path / "log"), log_lines, per_file=1)
    result = spark_run(spark, topology, [AtomLog(str(tmp_path / "log"), files_per_batch=1)], lateness=0)
    assert [m.time for m in result.models] == [0, 1, 2, 3]
    assert [b.outputs for b in result.batches if b.batch != "final"] == [1, 1, 1, 1]
    records = [json.dumps({"time": t, "atoms": p.split(" ", 1)[1].split("; ")}) for t, p in enumerate(log_lines)]
    write_tnt(str(tmp_path / "json"), records, per_file=1)
    result = spark_run(spark, topology, [AtomLog(str(tmp_path / "json"), files_per_batch=1)], lateness=0)
    assert [b.outputs for b in result.batches if b.batch != "final"] == [0, 1, 1, 1]
    assert [m.time for m in result.models] == [0, 1, 2, 3]     # the last one at the end of input


def test_t_duplicate_fragments_on_spark_give_the_local_models(spark, tmp_path):
    """Fragmented time points (I-DLV-sr's --t-duplicate): a time point ends with '@end;' or a later one."""
    from srtopo.io.tnt import write_tnt
    topology = compile_program(parse_program("two(X) :- p(X) at least 2 in {0,1}.\nq(X) :- p(X), r(X)."))
    text = ["0 p(1);", "0 r(1); @end;", "1 p(1);", "1 p(2);", "1 r(2);", "4 p(2); @end;", "5 p(3)", "5 r(3)"]
    write_tnt(str(tmp_path / "log"), text, per_file=1)
    source = AtomLog(str(tmp_path / "log"), files_per_batch=1, duplicates=True)
    result = spark_run(spark, topology, [source], lateness=0)
    local = LocalRunner().run(topology, [source], RunConfig(lateness=0))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    assert [sorted(m.atoms) for m in local.models] == [
        ["p(1)", "q(1)", "r(1)"], ["p(1)", "p(2)", "q(2)", "r(2)", "two(1)"], [], [], ["p(2)"],
        ["p(3)", "q(3)", "r(3)"]]
    assert not result.rejected and not local.rejected


def test_one_rdf_stream_feeds_a_consistency_check_and_a_program(spark, tmp_path):
    """The same timestamped N-Triples file: the DL-Lite check reports bob at 3 (Student and Faculty are
    disjoint in T_ex); a program over triple/3 atoms finds the same clash, on Spark as on the local runner."""
    from pathlib import Path

    from srtopo.concepts import RDF_TYPE
    from srtopo.consistency.compile import compile_ntm
    from srtopo.consistency.owl import load_tbox
    from srtopo.io.sources import TntFiles
    from srtopo.io.tnt import format_tnt
    ns, x = "http://example.org/tex#", "http://x/"
    tex = str(Path(__file__).resolve().parents[2] / "examples" / "tex.ttl")
    path = tmp_path / "s.tnt"
    path.write_text(format_tnt(1, x + "bob", RDF_TYPE, ns + "Student") + "\n"
                    + format_tnt(3, x + "bob", RDF_TYPE, ns + "Faculty") + "\n"
                    + format_tnt(3, x + "ann", x + "teaches", x + "c1") + "\n", encoding="utf-8")
    check = run_topology(LocalRunner(), compile_ntm(load_tbox(tex)), [TntFiles(str(path))], window=5)
    assert check.keys == {(x + "bob", 3)}
    program = (f'student(X) :- triple(X, "{RDF_TYPE}", "{ns}Student") in [5 sec].\n'
               f'clash(X) :- student(X), triple(X, "{RDF_TYPE}", "{ns}Faculty").\n'
               f'teaches(X, C) :- triple(X, "{x}teaches", C).\n#show clash/1.\n#show teaches/2.')
    topology = compile_program(parse_program(program))
    result = spark_run(spark, topology, [AtomLog(str(path))], lateness=0)
    local = LocalRunner().run(topology, [AtomLog(str(path))], RunConfig(lateness=0))
    assert [m.to_dict() for m in result.models] == [m.to_dict() for m in local.models]
    # the stream starts at its first statement's time point, 1
    assert [(m.time, list(m.atoms)) for m in local.models] == [
        (1, []), (2, []), (3, ['clash("http://x/bob")', 'teaches("http://x/ann","http://x/c1")'])]
