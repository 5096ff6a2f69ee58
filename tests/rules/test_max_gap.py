"""A mistyped timestamp far ahead (2031 for 2021) is one rejected record, not the end of the stream: without the
guard it closes every time point up to it and every later good line is late. Both runners reject the same
lines; ``--max-gap none`` accepts any gap, and streams whose time points are given may start anywhere."""
from __future__ import annotations

import json

import pytest

from srtopo.io.sources import AtomLog
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import SparkOptions, get_runner
from srtopo.ir.run import RunConfig
from tests.rules.conftest import reason_cli

PROGRAM = "hot(S) :- temp(S,T), T > 30.\nalarm(S) :- hot(S) in [2 sec].\n"


def _log(typos: dict[int, str]) -> list[str]:
    """40 lines a second apart; line n (1-based) replaced by typos[n]."""
    lines = [f"2021-03-05T10:{i // 60:02d}:{i % 60:02d} temp(a,{31 if i % 3 else 20}); temp(b,{20 + i})"
             for i in range(40)]
    for n, stamp in typos.items():
        lines[n - 1] = stamp + " " + lines[n - 1].split(" ", 1)[1]
    return lines


TYPOS = {12: "2031-03-05T10:00:11", 25: "2021-03-07T10:00:24"}     # ten years, two days ahead


def _run(runner_name: str, lines: list[str], folder, **kwargs):
    folder.mkdir(parents=True)
    (folder / "s.log").write_text("\n".join(lines) + "\n")
    spec = str(folder) if runner_name == "spark" else str(folder / "s.log")
    runner = get_runner(runner_name)
    options = SparkOptions() if runner_name == "spark" else runner.options_type()
    # the time points no record reached are not output: without the guard, ten years of them would be
    return runner.run(compile_program(parse_program(PROGRAM)), [AtomLog(spec)],
                      RunConfig(lateness=0, options=options, print_empty=False, **kwargs))


@pytest.mark.parametrize("runner_name", ["local", "spark"])
def test_a_far_ahead_timestamp_is_one_rejected_record_and_the_good_lines_give_the_clean_models(runner_name, tmp_path,
                                                                                               request):
    if runner_name == "spark":
        request.getfixturevalue("spark")
    clean_lines = _log({})
    clean = _run(runner_name, [x for n, x in enumerate(clean_lines, 1) if n not in TYPOS], tmp_path / "clean")
    dirty = _run(runner_name, _log(TYPOS), tmp_path / "dirty")
    assert [m.to_dict() for m in dirty.models] == [m.to_dict() for m in clean.models]
    assert len(clean.models) == 38 and not clean.rejected
    assert sorted(r.line for r in dirty.rejected) == sorted(TYPOS)
    assert all(r.reason.startswith("ahead: ") and "--max-gap" in r.reason for r in dirty.rejected)


def test_without_the_guard_the_typo_makes_every_later_line_late(tmp_path):
    """What the guard prevents (the local runner): the typo closes ten years of time points."""
    got = _run("local", _log({12: TYPOS[12]}), tmp_path / "off", max_gap=None)
    late = [r for r in got.rejected if r.reason.startswith("late: ")]
    assert [r.line for r in late] == list(range(13, 41))
    assert got.models[-1].time == 315_532_811


def test_the_gap_is_measured_from_the_latest_time_point_of_the_source(tmp_path):
    """With --max-gap 10: a record 10 time points after its source's latest is accepted, 11 is not; a stream of
    given time points may start anywhere (its first record is never ahead)."""
    lines = ["2021-03-05T10:00:00 temp(a,1)", "2021-03-05T10:00:10 temp(a,2)", "2021-03-05T10:00:21 temp(a,3)",
             "2021-03-05T10:00:20 temp(a,4)"]
    got = _run("local", lines, tmp_path / "log", max_gap=10)
    assert [m.time for m in got.models] == [0, 10, 20]
    assert [(r.line, r.reason.split(" (")[0]) for r in got.rejected] == [
        (3, "ahead: time point 21 is more than 10 time points after time point 10, the latest of its source")]
    given = ['{"time": 1000000, "atoms": ["temp(a,1)"], "end": true}',
             '{"time": 1000010, "atoms": ["temp(a,2)"], "end": true}',
             '{"time": 1000021, "atoms": ["temp(a,3)"], "end": true}']
    got = _run("local", given, tmp_path / "jsonl", max_gap=10)
    assert [m.time for m in got.models] == [1000000, 1000010] and [r.line for r in got.rejected] == [3]


def test_the_spark_passes_reject_late_and_far_ahead_records_with_the_local_words():
    """The parse pass times the records; the first segment judges them in their source's order from the clock the
    previous batch left (latest time point 3, a log line: whole), with the words of the local runner."""
    from srtopo.ir.lateness import SourceClock
    from srtopo.rules.partition import CURRENT, RECORD, REJECTED, STATS, BatchPlan, judge, parse_pass
    from srtopo.rules.log import parse_line
    from srtopo.rules.timestamps import stamp_kind, stamp_value, unit_micros
    lines = ["2021-03-05T10:00:00 a(1)", "2021-03-05T10:00:13 a(2)", "2021-03-05T10:00:25 a(3)",
             '{"time": 99, "atoms": ["a(4)"]}', '{"time": 14, "atoms": ["a(5)"]}']
    stamp = parse_line(lines[0], "log")[1]
    origin = {0: (stamp_kind(stamp), stamp_value(stamp))}
    rows = list(parse_pass(((0, "f", i, text, "detect", False, None) for i, text in enumerate(lines, start=1)),
                           origin, unit_micros(1), None, 1))
    assert {r[8]: r[1] for r in rows if r[0] == CURRENT} == {1: 0, 2: 13, 3: 25, 4: 99, 5: 14}
    records = [(r[6], None, r[7], r[8], r[1], r[5], int(r[4][1])) for r in rows if r[0] == RECORD]
    stats = [(r[6], r[11]) for r in rows if r[0] == STATS]
    plan = BatchPlan(3, {"0": SourceClock(3, True).to_json()}, 1, 0, max_gap=10)
    hi, meta, rejected = judge(plan, records, stats)
    local = SourceClock(3, True)
    assert rejected == {(0, "f", 1): local.late(0, 0), (0, "f", 3): SourceClock(13).ahead(25, 10),
                        (0, "f", 4): SourceClock(13).ahead(99, 10)}
    assert rejected[(0, "f", 1)] == "late: time point 0 is more than 0 behind time point 3, the latest of its source"
    assert (hi, meta["late"], meta["malformed"], meta["atoms"]) == (13, 1, 2, 2)
    assert meta["clocks"] == {"0": [14, False, None]}     # a JSON record: time point 14 may get more


def test_a_running_spark_query_hands_a_batch_over_in_time_order():
    """A batch's models come back partition by partition (2, 5, 8, 0, 1, ... was printed); the sink gets them
    in time order, as the local runner emits them."""
    from srtopo.io.sinks import MemorySink
    from srtopo.runners.spark.rules import JOB
    from srtopo.runners.spark.runner import _hand_over
    sink = MemorySink()
    rows = [{"time": t, "atoms": [f"p({t})"]} for t in (2, 5, 8, 0, 1, 3)]
    assert _hand_over(sink, rows, None, {}, JOB) == 6
    assert [m.time for m in sink.outputs] == [0, 1, 2, 3, 5, 8]


def test_the_cli_takes_none_and_refuses_a_gap_below_one(tmp_path, capsys):
    log = "\n".join(_log({12: TYPOS[12]})) + "\n"
    code, models = reason_cli(tmp_path, PROGRAM, log)
    assert code == 0 and len(models) == 39 and "ahead: time point 315532811" in capsys.readouterr().err
    code, models = reason_cli(tmp_path, PROGRAM, log, "--max-gap", "none")
    assert code == 0 and models[-1]["time"] == 315_532_811 and len(models) == 12
    with pytest.raises(SystemExit) as exit_:
        reason_cli(tmp_path, PROGRAM, log, "--max-gap", "0")
    assert exit_.value.code == 2 and "--max-gap: expected a whole number >= 1 or 'none'" in capsys.readouterr().err
    with pytest.raises(Exception, match="largest gap"):
        RunConfig(max_gap=0)
    assert json.dumps(models[0])
