"""Lateness of rule streams on both runners: random programs over random out-of-order streams of log lines (each
its time point whole) or JSON records (fragments, or whole with ``"end": true``), one or two sources, a random
allowed lateness and largest gap, and a random cut into micro-batches. Both runners must reject exactly the
records that the record-by-record definition (``tests.oracle.late_or_ahead``) rejects, and give, at every time
point, the unrolled-ASP oracle's model of the accepted records."""
from __future__ import annotations

import json
import random

import pytest
from clingo import parse_term

from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import SparkOptions, get_runner
from srtopo.testing import lines, run_topology
from tests.oracle import late_or_ahead
from tests.rules.conftest import oracle, random_case
from tests.rules.test_spark_rules import prefixed

#: seeds per runner: many on the local runner, a few on Spark (each Spark run is a query of its own)
SEEDS = {"local": 8, "spark": 2}
PROGRAMS = 8


def _records(rng: random.Random, points: list[list[str]], kind: str) -> list[tuple[int, bool, list[str]]]:
    """(time point, whole, atoms) records of a source in time order: one log line per time point, or JSON
    fragments of it, the last one of a time point sometimes saying it is the end."""
    out = []
    for t, atoms in enumerate(points):
        if not atoms and rng.random() < 0.5:
            continue
        if kind == "log":
            out.append((t, True, atoms))
            continue
        cut = rng.randint(0, len(atoms))
        for i, part in enumerate((atoms[:cut], atoms[cut:])):
            if part or i:
                out.append((t, i == 1 and rng.random() < 0.5, part))
    return out


def _text(record, kind: str, origin: int) -> str:
    t, whole, atoms = record
    if kind == "log":
        return f"{origin + t} " + "; ".join(atoms)
    return json.dumps({"time": t, "atoms": atoms, **({"end": True} if whole else {})})


def _case(seed: int):
    rng = random.Random(7000 + seed)
    texts, points, cases = [], [], []
    for k in range(PROGRAMS):
        text, stream = random_case(rng.randrange(10 ** 6))
        p = f"c{k}_"
        texts.append(prefixed(text, p))
        cases.append((p, text))
        for t, atoms in enumerate(stream):
            while len(points) <= t:
                points.append([])
            points[t] += [prefixed(a, p) for a in atoms]
    program_text = "\n".join(texts)
    n_sources = rng.choice((1, 2))
    kinds = [rng.choice(("log", "jsonl")) for _ in range(n_sources)]
    per_source_points = [[[] for _ in points] for _ in range(n_sources)]
    for t, atoms in enumerate(points):
        for a in atoms:
            per_source_points[rng.randrange(n_sources)][t].append(a)
    lateness = rng.choice((0, 1, 2, None))
    max_gap = rng.choice((None, 4, 50))
    sources, rejected, accepted = [], set(), {}
    for k, kind in enumerate(kinds):
        records = _records(rng, per_source_points[k], kind)
        for _ in range(len(records) // 3):            # out of order: some records move back
            i = rng.randrange(len(records))
            records.insert(max(0, i - rng.choice((1, 2, 4))), records.pop(i))
        if rng.random() < 0.5 and records:            # a mistyped time far ahead
            records.insert(rng.randrange(len(records)), (len(points) + 60, True, [prefixed("e(1)", "c0_")]))
        origin = rng.choice((0, 1000))
        text = [_text(r, kind, origin) for r in records]
        name = f"<s{k}>"
        sources.append(lines(text, batches=rng.randint(1, 4), name=name))
        first = records[0][0] if records else 0      # a log's first line is its time point 0
        timed = []
        for n, (t, whole, atoms) in enumerate(records, start=1):
            t = t - first if kind == "log" else t
            if t < 0:
                rejected.add((name, n))               # before the first line: not a time point of the log
                continue
            timed.append((n, t, whole, atoms))
        gone = late_or_ahead([(n, t, whole) for n, t, whole, _ in timed], lateness, max_gap)
        rejected |= {(name, n) for n in gone}
        for n, t, _whole, atoms in timed:
            if n not in gone:
                accepted.setdefault(t, []).extend(atoms)
    first = min(accepted, default=0)                  # the stream starts at its earliest accepted record
    horizon = max(accepted, default=-1) + 1
    timeline = [[parse_term(a) for a in accepted.get(t, [])] for t in range(first, horizon)]
    # the programs share no predicate (each its own prefix): the oracle of the whole is the union of each one's
    # oracle on its own atoms, and grounding them apart does not match every rule against all eight's atoms
    expected = {t: set() for t in range(first, horizon)}
    for p, text in cases:
        own = [[a for a in atoms if a.name.startswith(p)] for atoms in timeline]
        for t, model in enumerate(oracle(parse_program(prefixed(text, p)), own), start=first):
            assert all(a.name.startswith(p) for a in model), f"{p}: the oracle derived another program's atoms"
            expected[t] |= model
    return program_text, sources, lateness, max_gap, rejected, expected


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["local", "spark"])
def test_both_runners_reject_the_records_of_the_definition_and_give_the_oracles_models(runner, request):
    options = None
    if runner == "spark":
        request.getfixturevalue("spark")
        options = SparkOptions(partitions=2)
    found = 0
    for seed in range(SEEDS[runner]):
        program_text, sources, lateness, max_gap, rejected, expected = _case(seed)
        topology = compile_program(parse_program(program_text), strategy="restart")
        result = run_topology(get_runner(runner), topology, sources, lateness=lateness, max_gap=max_gap,
                              options=options)
        got = {(r.source, r.line) for r in result.rejected}
        where = f"seed {seed} (lateness {lateness}, max gap {max_gap}, batches {[s.batches for s in sources]})"
        assert got == rejected, f"{where}: rejected beyond the definition {sorted(got - rejected)}, " \
                                f"accepted what it rejects {sorted(rejected - got)}"
        models = {m.time: set(m.atoms) for m in result.models}
        assert sorted(models) == sorted(expected), where
        for t, want in expected.items():
            assert models[t] == {str(a) for a in want}, f"{where}, time point {t}"
        found += len(rejected)
    assert found, "no record was rejected: the comparison would be vacuous"


EXAMPLE = "b(X) :- a(X) in [2].\n"
LOG = "0 a(0)\n2 a(2)\n1 a(1)\n3 a(3)\n"


@pytest.mark.parametrize("runner", ["local", "spark"])
def test_a_record_one_time_point_behind_is_late_with_lateness_0_and_accepted_with_1(runner, tmp_path, request,
                                                                                     capsys):
    """The log 0, 2, 1, 3: the third line is one time point behind its source's latest, so it is rejected with
    --lateness 0 and accepted with --lateness 1, on both runners, which then derive the same atoms."""
    from srtopo.cli import main
    extra = []
    if runner == "spark":
        request.getfixturevalue("spark")
        extra = ["--engine", "spark", "--once"]
    (tmp_path / "p.idlvsr").write_text(EXAMPLE)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "s.log").write_text(LOG)
    for lateness, kept in ((0, [0, 2, 3]), (1, [0, 1, 2, 3])):
        timeline = [[parse_term(f"a({t})")] if t in kept else [] for t in range(4)]
        want = oracle(parse_program(EXAMPLE), timeline)
        rejected = tmp_path / f"rejected-{lateness}"
        capsys.readouterr()
        code = main(["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "in" / "s.log"),
                     "--lateness", str(lateness), "--rejected-out", str(rejected), *extra])
        assert code == 0
        models = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
        assert [(m["time"], m["atoms"]) for m in models] == \
               [(t, sorted(str(a) for a in atoms)) for t, atoms in enumerate(want) if t in kept]
        records = [json.loads(x) for x in _rejected_lines(rejected)]
        if lateness == 0:
            assert [(r["line"], r["reason"]) for r in records] == [
                (3, "late: time point 1 is more than 0 behind time point 2, the latest of its source")]
        else:
            assert records == []


def _rejected_lines(path) -> list[str]:
    """A rejected-records file (the local runner) or directory of per-batch files (Spark)."""
    if not path.exists():
        return []
    if path.is_file():
        return path.read_text().splitlines()
    return [x for f in sorted(path.rglob("*.json")) for x in f.read_text().splitlines()]
