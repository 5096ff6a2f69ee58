"""Streamlog on Spark from the command line and across runs: the bundled example gives the local runner's output,
a stream that grows between two runs on one checkpoint gives, over both runs, the output of one local run over
the whole stream (the state is carried in the checkpoint, nothing is evaluated twice), and hostile lines are
rejected one each on both runners."""
from __future__ import annotations

import json
from pathlib import Path

from srtopo.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = str(ROOT / "examples" / "shortest-paths.sl")
FIRST = ("first(T,X) :- msg(T,X), not previous(T,X).\n"
         "previous(T,X) :- msg(T,_), msg(T0,X), T0 < T.\n#show first/2.\n")


def _models(capsys) -> list:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _written(out: Path) -> list:
    """Every model a Spark run wrote under ``out`` (batch=N and batch=final), in time order."""
    rows = [json.loads(line) for part in sorted(out.glob("batch=*")) for f in sorted(part.glob("*.json"))
            for line in f.read_text().splitlines() if line.strip()]
    return sorted(rows, key=lambda r: r["time"])


def test_the_bundled_example_gives_the_local_output(spark, capsys):
    assert main(["streamlog", "--program", PROGRAM, "--stream", str(ROOT / "examples" / "arcs.txt")]) == 0
    local = _models(capsys)
    assert main(["streamlog", "--program", PROGRAM, "--stream", str(ROOT / "examples" / "arcs.txt"),
                 "--engine", "spark", "--once"]) == 0
    assert _models(capsys) == local and len(local) == 5


def test_a_growing_stream_over_two_runs_on_one_checkpoint_equals_one_local_run(spark, tmp_path, capsys):
    program = tmp_path / "first.sl"
    program.write_text(FIRST)
    folder = tmp_path / "in"
    folder.mkdir()
    lines = [f"msg({t},{'abc'[t % 3]})." for t in range(1, 13)] + ["msg(13,z)."]
    (folder / "part-1.txt").write_text("\n".join(lines[:6]) + "\n")
    spark_args = ["streamlog", "--program", str(program), "--stream", str(folder), "--engine", "spark", "--once",
                  "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    assert main(spark_args) == 0
    (folder / "part-2.txt").write_text("\n".join(lines[6:]) + "\n")
    assert main(spark_args) == 0
    capsys.readouterr()
    assert main(["streamlog", "--program", str(program), "--stream", str(folder)]) == 0
    local = _models(capsys)
    assert _written(tmp_path / "out") == local
    assert [m["time"] for m in local] == [1, 2, 3, 13]


def test_hostile_lines_are_rejected_one_each_on_both_runners(spark, tmp_path, capsys):
    program = tmp_path / "first.sl"
    program.write_text(FIRST)
    stream = tmp_path / "s.txt"
    stream.write_bytes(b"msg(1,red).\n\xff\xfe garbage\nmsg(2,x\nmsg(99999999999,red).\nmsg(2,blue).\n"
                       b"msg(1,late).\nmsg(3,red).\n")
    outputs, rejected, echoed = [], [], []
    for runner in (["--engine", "local"], ["--engine", "spark", "--once"]):
        out = tmp_path / ("rejected-" + runner[1] + (".jsonl" if runner[1] == "local" else ""))
        assert main(["streamlog", "--program", str(program), "--stream", str(stream), "--rejected-out", str(out),
                     *runner]) == 0
        outputs.append(_models(capsys))
        files = [out] if out.is_file() else sorted(out.rglob("*.json"))
        # the durable form names the stream as it was given too, on both runners
        rejected.append(sorted((r["line"], r["source"], r["reason"])
                               for f in files for r in map(json.loads, f.read_text().splitlines())))
        assert main(["streamlog", "--program", str(program), "--stream", str(stream), *runner]) == 0
        echoed.append(sorted(line for line in capsys.readouterr().err.splitlines() if "rejected line" in line))
    assert outputs[0] == outputs[1] == [{"time": 1, "atoms": ["first(1,red)"]}, {"time": 2, "atoms": ["first(2,blue)"]}]
    assert rejected[0] == rejected[1] and [(line, source) for line, source, _ in rejected[0]] == [
        (n, str(stream)) for n in (2, 3, 4, 6)]
    # on stderr each record names the stream as it was given, on both runners
    assert echoed[0] == echoed[1] and len(echoed[0]) == 4 and all(f" of {stream}: " in line for line in echoed[0])
