"""Programs with a choice part on Spark: every strategy answers every time point validly, says "no answer" exactly
where a fresh clingo finds none, and a replayed batch hands over the answers it wrote rather than new ones.

Answers are checked by the problems' own checkers (n-Queens Completion, Partner Units: no solver involved) and
unsatisfiable time points by a fresh clingo on the time point's facts (``tests.rules.test_choice``)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from experiments.reconfig import pup, queens
from srtopo.io.sources import AtomLog
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import SparkOptions, get_runner
from srtopo.testing import run_topology
from tests.rules.test_choice import pairs, satisfiable

#: the strategies of "Managing caching strategies for stream reasoning with reinforcement learning" the
#: project offers for a choice part, besides restart
STRATEGIES = ("restart", "incremental", "forget-lemmas", "progress", "rl", "auto")
N = 8


def qc_lines() -> list[str]:
    lines = queens.log_lines(queens.qc_stream(N, steps=16, seed=7))
    lines[3] = "3 given(1,1); given(2,2)"           # two queens on a diagonal: no completion
    lines[9] = "9 given(1,1); given(8,8)"           # no completion keeps both corners of a diagonal
    return lines


def write_batches(folder: Path, lines: list[str], per_file: int) -> AtomLog:
    """The log cut into files of ``per_file`` lines, one file per micro-batch."""
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(0, len(lines), per_file):
        path = folder / f"part-{k // per_file:03d}.log"
        path.write_text("\n".join(lines[k:k + per_file]) + "\n")
        os.utime(path, (1_700_000_000 + k, 1_700_000_000 + k))     # listed in order
    return AtomLog(str(folder), "log", files_per_batch=1)


def given_of(line: str) -> set:
    return {tuple(int(x) for x in a.strip()[6:-1].split(",")) for a in line.split(" ", 1)[1].split(";")}


def check_qc(models, lines) -> None:
    assert [m.time for m in models] == list(range(len(lines)))
    for model, line in zip(models, lines):
        given = given_of(line)
        facts = [f"given({r},{c})" for r, c in sorted(given)]
        assert model.satisfiable == satisfiable(queens.program(N), facts), line
        if model.satisfiable:
            assert queens.check(N, given, pairs(model.atoms, "queen")) == [], line
        else:
            assert model.atoms == ()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_answers_qc_validly_on_spark(spark, tmp_path, strategy):
    lines = qc_lines()
    topology = compile_program(parse_program(queens.program(N), "qc.lp"))
    # half of the strategies in executor tasks, half on the driver (``rules.batch``)
    driver_lines = 0 if STRATEGIES.index(strategy) % 2 else 2000
    result = run_topology(get_runner("spark"), topology, [write_batches(tmp_path / "in", lines, 6)], lateness=0,
                          options=SparkOptions(partitions=2, strategy=strategy, driver_lines=driver_lines))
    assert {b.detail["evaluated_on"] for b in result.batches} == {"executors" if driver_lines == 0 else "driver"}
    check_qc(result.models, lines)
    assert sum(1 for m in result.models if not m.satisfiable) == 2


@pytest.mark.parametrize("strategy", ["rl"])
def test_partner_units_on_spark_every_answer_checked(spark, tmp_path, strategy):
    n = 4
    instance = pup.double_instance(n)
    stream = pup.pup_stream(n, steps=12, seed=n, alpha=0.7)
    lines = pup.log_lines(stream)
    topology = compile_program(parse_program(pup.program(n), "pup.lp"))
    result = run_topology(get_runner("spark"), topology, [write_batches(tmp_path / "in", lines, 3)], lateness=0,
                          options=SparkOptions(partitions=2, strategy=strategy))
    assert [m.time for m in result.models] == list(range(len(lines)))
    for model, off in zip(result.models, stream):
        assert model.satisfiable
        assert pup.check(instance, off, pairs(model.atoms, "zone2unit"), pairs(model.atoms, "sensor2unit")) == []


def test_a_replayed_batch_hands_over_the_answers_its_entry_holds(spark, tmp_path):
    """A batch written, then not committed by Spark (a crash between the two), is replayed on restart: the
    models are read back from its entry, not solved again (another answer set could come out). The entry is
    given a different, valid answer before the restart: that is the one handed over."""
    lines = qc_lines()[:8]
    topology = compile_program(parse_program(queens.program(N), "qc.lp"))
    source = write_batches(tmp_path / "in", lines, 4)
    checkpoint = str(tmp_path / "ck")
    options = SparkOptions(partitions=2, strategy="incremental")
    first = run_topology(get_runner("spark"), topology, [source], lateness=0, checkpoint=checkpoint,
                         options=options)
    check_qc(first.models, lines)
    commits = sorted(p for p in (tmp_path / "ck" / "query" / "commits").iterdir() if p.name.isdigit())
    last = int(commits[-1].name)
    commits[-1].unlink()                                        # the crash: batch `last` was never committed
    (commits[-1].parent / f".{last}.crc").unlink(missing_ok=True)
    entry = tmp_path / "ck" / "store" / f"{last:010d}" / "kind=model"
    rows = [json.loads(x) for f in sorted(entry.glob("*.json")) for x in f.read_text().splitlines()]
    assert rows
    changed = rows[0]["time"]
    given = given_of(lines[changed])
    other = _another_completion(given, set(pairs(rows[0]["atoms"], "queen")))
    rows[0]["atoms"] = sorted(f"queen({r},{c})" for r, c in other)
    for f in entry.glob("*.json"):
        f.unlink()
    (entry / "part-00000.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    shutil.rmtree(tmp_path / "ck" / "store" / "final", ignore_errors=True)
    again = run_topology(get_runner("spark"), topology, [source], lateness=0, checkpoint=checkpoint,
                         options=options)
    handed = {m.time: m for m in again.models}
    assert set(pairs(handed[changed].atoms, "queen")) == other
    check_qc([handed[t] for t in sorted(handed)], lines[min(handed):])


def _another_completion(given: set, answer: set) -> set:
    """A completion of the given queens other than ``answer`` (by clingo, with the answer excluded)."""
    import clingo
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], queens.program(N) + "".join(f"given({r},{c}).\n" for r, c in sorted(given))
            + ":- " + ", ".join(f"queen({r},{c})" for r, c in sorted(answer)) + ".\n")
    ctl.ground([("base", [])])
    found = []
    ctl.solve(on_model=lambda m: found.append({(s.arguments[0].number, s.arguments[1].number)
                                               for s in m.symbols(shown=True)}) or False)
    assert found, "the time point has one completion only"
    return found[0]


#: a choice part that splits into one problem per sensor (``rules.keys.choice_key``): a sensor is on unless it
#: is hot or was hot at the previous time point; a sensor that is broken and may not be on has no mode, so the
#: time point has no answer set
KEYED = """1 { mode(S,on); mode(S,off) } 1 :- sensor(S).
:- mode(S,on), hot(S).
:- mode(S,on), hot(S) in {1}.
:- mode(S,off), broken(S).
:~ mode(S,off). [1@1,S]
#show mode/2.
"""


def keyed_stream(seed: int, points: int, sensors: int) -> list[list[str]]:
    import random
    rng = random.Random(seed)
    out = []
    for _t in range(points):
        atoms = [f"sensor({s})" for s in range(sensors)]
        atoms += [f"hot({s})" for s in range(sensors) if rng.random() < 0.3]
        atoms += [f"broken({s})" for s in range(sensors) if rng.random() < 0.04]
        out.append(atoms)
    return out


def keyed_oracle(points: list[list[str]], sensors: int) -> list[tuple]:
    """(satisfiable, shown atoms) per time point, by hand: the unique optimal answer of each sensor's problem."""
    out, hot_before = [], set()
    for atoms in points:
        hot = {int(a[4:-1]) for a in atoms if a.startswith("hot(")}
        broken = {int(a[7:-1]) for a in atoms if a.startswith("broken(")}
        off = hot | hot_before
        hot_before = hot
        if broken & off:
            out.append((False, ()))
            continue
        out.append((True, tuple(sorted(f"mode({s},{'off' if s in off else 'on'})" for s in range(sensors)))))
    return out


def test_a_choice_part_that_splits_by_key_runs_one_problem_per_key_partition(spark, tmp_path):
    from srtopo.runners import LocalOptions
    sensors = 9
    points = keyed_stream(5, 24, sensors)
    expected = keyed_oracle(points, sensors)
    assert 0 < sum(1 for ok, _atoms in expected if not ok) < len(points)
    topology = compile_program(parse_program(KEYED, "keyed.lp"))
    stage = topology.stages[-1]
    assert stage.choice and stage.key.name == "S"
    # a window over the chosen atoms ties the keys together across time points: one partition
    tied = compile_program(parse_program(KEYED.replace("hot(S) in {1}", "mode(S,on) in {1}"), "tied.lp"))
    assert tied.stages[-1].choice and not tied.stages[-1].key.keyed
    lines = [f"{t} " + "; ".join(atoms) for t, atoms in enumerate(points)]
    source = write_batches(tmp_path / "in", lines, 6)
    local = run_topology(get_runner("local"), topology, [source], lateness=0,
                         options=LocalOptions(strategy="incremental"))
    assert [(m.satisfiable, m.atoms) for m in local.models] == expected
    for strategy, partitions in (("incremental", 3), ("restart", 2)):
        result = run_topology(get_runner("spark"), topology, [source], lateness=0,
                              options=SparkOptions(partitions=partitions, strategy=strategy, driver_lines=0))
        assert [(m.satisfiable, m.atoms) for m in result.models] == expected, (strategy, partitions)
