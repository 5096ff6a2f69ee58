"""Small rule micro-batches evaluated on the driver, large ones in executor tasks, in one stream: each plan
continues from the other's store entry (held in memory or read back after a restart), and the model lines are
byte for byte those of a run entirely in executor tasks, and the local runner's models."""
import json
import os
import random

from experiments.kill_campaign import PROGRAM, output_lines, sensor_lines
from srtopo.io.sources import AtomLog
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner

#: lines per file, one file per micro-batch; at most 10 lines go to the driver
FIRST_RUN, SECOND_RUN = (3, 40, 2), (4, 35, 5)
DRIVER_LINES = 10


def _write(folder, lines, sizes, start):
    folder.mkdir(exist_ok=True)
    at = 0
    for k, size in enumerate(sizes):
        path = folder / f"part-{start + k:03d}.log"
        path.write_text("\n".join(lines[at:at + size]) + "\n", encoding="utf-8")
        os.utime(path, (1_700_000_000 + start + k, 1_700_000_000 + start + k))    # listed in order
        at += size


def _run(topology, folder, checkpoint, out, driver_lines):
    return SparkRunner().run(topology, [AtomLog(str(folder), "log", files_per_batch=1)],
                             RunConfig(lateness=0, checkpoint=str(checkpoint), out=str(out),
                                       options=SparkOptions(partitions=2, driver_lines=driver_lines)))


def test_driver_and_executor_batches_continue_each_other_across_a_restart(spark, tmp_path):
    lines = sensor_lines(random.Random(11), 120)[:sum(FIRST_RUN + SECOND_RUN)]
    assert len(lines) == sum(FIRST_RUN + SECOND_RUN)
    for k in (1, 50, 85):       # a non-ASCII key with quotes, in driver batches and in an executors' one
        lines[k] += '; temp("capteur-é \\"1\\"",29)'
    for k in (2, 60):           # a malformed line: its time point is empty (no timestamp in its model line)
        lines[k] = lines[k].split(" ", 1)[0] + " temp(s1,"
    topology = compile_program(parse_program(PROGRAM))
    assert any(s.key.keyed for s in topology.stages) and any(not s.key.keyed for s in topology.stages)
    _write(tmp_path / "in", lines, FIRST_RUN, 0)
    first = _run(topology, tmp_path / "in", tmp_path / "ck", tmp_path / "out", DRIVER_LINES)
    _write(tmp_path / "in", lines[sum(FIRST_RUN):], SECOND_RUN, len(FIRST_RUN))
    second = _run(topology, tmp_path / "in", tmp_path / "ck", tmp_path / "out", DRIVER_LINES)
    assert second.resumed
    planned = ["driver" if size <= DRIVER_LINES else "executors" for size in FIRST_RUN + SECOND_RUN]
    assert [b.detail["evaluated_on"] for b in first.batches + second.batches] == planned

    reference = _run(topology, tmp_path / "in", tmp_path / "ref-ck", tmp_path / "ref", 0)
    assert {b.detail["evaluated_on"] for b in reference.batches} == {"executors"}
    got, expected = output_lines(tmp_path / "out"), output_lines(tmp_path / "ref")
    assert got == expected and set(got.values()) == {1}

    merged = tmp_path / "all.log"
    merged.write_text("\n".join(lines) + "\n", encoding="utf-8")
    local = LocalRunner().run(topology, [AtomLog(str(merged))], RunConfig(lateness=0))
    by_time = {m["time"]: m["atoms"] for m in map(json.loads, got)}
    assert by_time == {m.time: list(m.atoms) for m in local.models}
    assert any("alert(" in a for atoms in by_time.values() for a in atoms)
    assert any("capteur-é" in a for atoms in by_time.values() for a in atoms)


def _entries(store):
    """batch -> (meta, times of its history rows) of the entries left in a store."""
    out = {}
    for name in sorted(os.listdir(store)):
        meta_path = store / name / "_meta.json"
        if not name.isdigit() or not meta_path.exists():
            continue
        times = []
        for part in (store / name / "kind=history").glob("*.json"):
            times += [json.loads(line)["time"] for line in part.read_text(encoding="utf-8").splitlines() if line]
        out[int(name)] = (json.loads(meta_path.read_text(encoding="utf-8")), times)
    return out


def test_history_deltas_chain_and_snapshot_across_plans_and_a_restart(spark, tmp_path, monkeypatch):
    """An entry's history holds the time points it evaluated; the entries before it still in the windows' reach
    (5 time points here) are named in its meta, and every third one writes the whole history again. Runs of
    one or two time points per batch on the driver, a larger batch in executor tasks, and a restart that reads
    the chain back from the store give the local runner's models."""
    import srtopo.rules.batch as driver_batch
    import srtopo.runners.spark.rules as rules_job
    monkeypatch.setattr(rules_job, "CHAIN_LIMIT", 3)
    snapshots = []
    for owner, name, plan_at in ((driver_batch.DriverPasses, "run", 1), (rules_job.RulesJob, "_write", 2)):
        original = getattr(owner, name)

        def spy(*args, original=original, plan_at=plan_at, **kwargs):
            snapshots.append(args[plan_at].snapshot)
            return original(*args, **kwargs)
        monkeypatch.setattr(owner, name, spy)
    lines = sensor_lines(random.Random(5), 60)
    first, second = (1, 2, 1, 1, 2, 1, 12, 1, 1, 2), (1, 1, 2, 1, 12, 1, 1)
    topology = compile_program(parse_program(PROGRAM))
    _write(tmp_path / "in", lines, first, 0)
    one = _run(topology, tmp_path / "in", tmp_path / "ck", tmp_path / "out", DRIVER_LINES)
    entries = _entries(tmp_path / "ck" / "store")
    _write(tmp_path / "in", lines[sum(first):], second, len(first))
    two = _run(topology, tmp_path / "in", tmp_path / "ck", tmp_path / "out", DRIVER_LINES)
    assert two.resumed
    entries.update(_entries(tmp_path / "ck" / "store"))
    planned = ["driver" if size <= DRIVER_LINES else "executors" for size in first + second]
    assert [b.detail["evaluated_on"] for b in one.batches + two.batches] == planned
    assert True in snapshots and False in snapshots

    for batch, (meta, times) in entries.items():
        chain = meta["history"]
        assert len(chain) <= 3 and all(b in entries or b < min(entries) for b, _hi in chain)
        assert all(hi > meta["closed"] - 5 for _b, hi in chain) and meta["needs"] == min(
            [b for b, _hi in chain], default=batch)
        lo, hi = meta["record"]["evaluated"] or (meta["closed"] + 1, meta["closed"])
        if [b for b, _hi in chain] != [batch]:      # not a snapshot: only the time points it evaluated
            assert all(lo <= t <= hi for t in times)
        assert bool(times) == (bool(chain) and chain[-1][0] == batch)
    last = max(entries)
    assert all(b in entries for b, _hi in entries[last][0]["history"])     # the chain outlives older entries
    assert any(min(times) < (meta["record"]["evaluated"] or [0])[0] for meta, times in entries.values() if times)

    merged = tmp_path / "all.log"
    merged.write_text("\n".join(lines[:sum(first + second)]) + "\n", encoding="utf-8")
    local = LocalRunner().run(topology, [AtomLog(str(merged))], RunConfig(lateness=0))
    got = output_lines(tmp_path / "out")
    by_time = {m["time"]: m["atoms"] for m in map(json.loads, got)}
    assert by_time == {m.time: list(m.atoms) for m in local.models} and set(got.values()) == {1}
    assert any("alert(" in a for atoms in by_time.values() for a in atoms)


def test_a_store_whose_last_entry_holds_the_whole_history_goes_on(spark, tmp_path):
    """An entry written before histories were deltas holds the whole history in its own directory and names no
    chain: the next batches (on either plan) read it as it is."""
    lines = sensor_lines(random.Random(8), 40)
    first, second = (1, 2, 1, 2), (12, 1, 2, 1)
    topology = compile_program(parse_program(PROGRAM))
    _write(tmp_path / "in", lines, first, 0)
    _run(topology, tmp_path / "in", tmp_path / "ck", tmp_path / "out", DRIVER_LINES)
    store = tmp_path / "ck" / "store"
    entries = _entries(store)
    last = max(entries)
    meta = entries[last][0]
    assert meta["history"]
    whole = []
    for batch, _hi in meta["history"]:          # the chain's rows, as the earlier version kept them in one entry
        for part in (store / f"{batch:010d}" / "kind=history").glob("*.json"):
            whole += [line for line in part.read_text(encoding="utf-8").splitlines() if line]
    assert len(meta["history"]) > 1 and whole
    for batch in entries:
        if batch != last:
            for part in (store / f"{batch:010d}" / "kind=history").glob("*.json"):
                part.unlink()
    target = store / f"{last:010d}" / "kind=history"
    target.mkdir(exist_ok=True)
    for part in target.glob("*.json"):
        part.unlink()
    (target / "part-00000-legacy.json").write_text("\n".join(whole) + "\n", encoding="utf-8")
    del meta["history"], meta["needs"]
    (store / f"{last:010d}" / "_meta.json").write_text(json.dumps(meta), encoding="utf-8")

    _write(tmp_path / "in", lines[sum(first):], second, len(first))
    again = _run(topology, tmp_path / "in", tmp_path / "ck", tmp_path / "out", DRIVER_LINES)
    assert again.resumed
    assert [b.detail["evaluated_on"] for b in again.batches] == ["executors", "driver", "driver", "driver"]
    merged = tmp_path / "all.log"
    merged.write_text("\n".join(lines[:sum(first + second)]) + "\n", encoding="utf-8")
    local = LocalRunner().run(topology, [AtomLog(str(merged))], RunConfig(lateness=0))
    got = output_lines(tmp_path / "out")
    assert {m["time"]: m["atoms"] for m in map(json.loads, got)} == {m.time: list(m.atoms) for m in local.models}
