"""Keyed Streamlog stages on Spark, in key partitions: the output of 1, 2 and 3 partitions equals the local
runner's (which equals the whole-stream oracle); two skewed sources with punctuation over several micro-batches
and a restart over a growing stream give one local run's output; hostile lines give the local runner's rejected
records, one each."""
from __future__ import annotations

import json
import os
from pathlib import Path

from srtopo.cli import main
from srtopo.runners import LocalOptions, SparkOptions, get_runner
from srtopo.streamlog import parse_program
from srtopo.streamlog.compile import compile_program
from srtopo.testing import run_topology
from tests.runners.test_streamlog import per_source
from tests.streamlog.test_differential import EXAMPLES, oracle, random_case
from tests.streamlog.test_partition import SENSORS, sensor_feed

ROOT = Path(__file__).resolve().parents[2]


def test_keyed_programs_in_one_to_three_partitions_equal_the_local_runner(spark):
    """Each case a streaming query of a few micro-batches (experiments/streamlog_campaign.py runs every keyed
    random program in two and three partitions)."""
    spark_runner, local_runner = get_runner("spark"), get_runner("local")
    text, _features, feeds = random_case(83)          # keyed by X (streamlog.keys)
    cases = [(text, feeds[1], 2, 2, 3), (EXAMPLES["union-a"][0], EXAMPLES["union-a"][2](1), 2, 1, 1),
             (SENSORS, sensor_feed(3), 2, 3, 2)]
    for text, feed, nsources, batches, partitions in cases:
        topology = compile_program(parse_program(text, "case.sl"))
        assert topology.stages[0].key.keyed
        local = run_topology(local_runner, topology, per_source(feed, nsources), options=LocalOptions())
        expected = [(m.time, m.atoms) for m in local.models]
        assert expected == oracle(text, [x for _s, _n, x in feed if not x.startswith("#")]) and expected
        result = run_topology(spark_runner, topology, per_source(feed, nsources, batches),
                              options=SparkOptions(partitions=partitions))
        assert [(m.time, m.atoms) for m in result.models] == expected, (partitions, text)
        assert not result.rejected
        assert result.counters.outputs == len(expected) and result.counters.records == local.counters.records
        assert result.counters.stages[0].tasks == partitions


def _write(folder: Path, name: str, lines: list, mtime: int) -> None:
    path = folder / name
    path.write_bytes(b"".join((x if isinstance(x, bytes) else x.encode("utf-8")) + b"\n" for x in lines))
    os.utime(path, (mtime, mtime))          # the order Spark lists the files in


def _written(out: Path) -> list:
    return sorted((json.loads(line) for part in sorted(out.glob("batch=*")) for f in sorted(part.glob("*.json"))
                   for line in f.read_text().splitlines() if line.strip()), key=lambda m: m["time"])


def _rejected(path: Path) -> list:
    files = [path] if path.is_file() else sorted(path.rglob("*.json"))
    return sorted((r["source"], r["line"], r["text"], r["reason"])
                  for f in files for r in map(json.loads, f.read_text(encoding="utf-8").splitlines()))


def test_skewed_sources_hostile_lines_and_a_restart_over_a_growing_stream(spark, tmp_path, capsys):
    """Two directories of readings (one source ahead of the other, punctuation, lines that cannot be used), read
    two files per micro-batch in three partitions; the second run continues on the checkpoint after more files
    arrived. Both runs' models together, and their rejected records, are the local runner's over everything."""
    program = tmp_path / "sensors.sl"
    program.write_text("small(3).\n" + SENSORS)
    feed = sensor_feed(7, sensors=30)
    hostile = [b"reading(4,s1,\xff\xfe).", "reading(5,s1,3", "reading(7,s2,99999999999999999999).",
               "small(2).", "#punct 3.", "reading(x,s1,2)."]
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        d.mkdir()
    per = [[line for s, _n, line in feed if s == k] for k in range(2)]
    chunks = [[p[len(p) * i // 4:len(p) * (i + 1) // 4] for i in range(4)] for p in per]
    chunks[0][1] = chunks[0][1][:3] + hostile + chunks[0][1][3:]
    # a fact mistyped far ahead: rejected (--max-gap), and the rest of its stream taken, on the second run too
    chunks[0][1].append("reading(99999999,s3,1).")

    def files(upto: int, start: int = 0):
        for k, d in enumerate(dirs):
            for i in range(start, upto):
                _write(d, f"part-{i}.txt", chunks[k][i], 1_600_000_000 + i)
    files(2)
    args = ["streamlog", "--program", str(program), "--stream", str(dirs[0]), "--also-stream", str(dirs[1]),
            "--engine", "spark", "--once", "--partitions", "3", "--files-per-batch", "1",
            "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out"),
            "--rejected-out", str(tmp_path / "rejected")]
    assert main(args) == 0
    files(4, 2)
    assert main(args) == 0
    capsys.readouterr()
    local_args = ["streamlog", "--program", str(program), "--stream", str(dirs[0]), "--also-stream", str(dirs[1]),
                  "--rejected-out", str(tmp_path / "rejected.jsonl")]
    assert main(local_args) == 0
    local = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert _written(tmp_path / "out") == local and len(local) > 20
    expected = _rejected(tmp_path / "rejected.jsonl")
    assert _rejected(tmp_path / "rejected") == expected
    far = [r for r in expected if "ahead: timestamp 99999999" in r[3]]
    assert len(far) == 1 and len(expected) == len(hostile) + 1
    assert not any("earlier than" in r[3] for r in expected)
    # the checkpoint holds three partitions' states: another number of partitions is refused, in one line
    assert main(args[:args.index("--partitions")] + ["--partitions", "2"] + args[args.index("--partitions") + 2:]) == 2
    assert "holds the state of 3 partition(s)" in capsys.readouterr().err
