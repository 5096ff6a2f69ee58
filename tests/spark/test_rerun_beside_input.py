"""A Spark run reads exactly the file it is given, whatever lies beside it: its own checkpoint and ``out``
directories (``out/batch=N`` looks like a partitioned table to Spark's file source), and a second run on the same
folders resumes instead of failing."""
import json
from pathlib import Path

import pytest

from srtopo.concepts import RDF_TYPE
from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.consistency.tbox import TBox
from srtopo.io.sources import AtomLog, TntFiles
from srtopo.io.tnt import format_tnt
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner

EX = "http://ex.org/r#"
TBOX = TBox.build([(EX + "Student", EX + "Person")], [(EX + "Person", EX + "Course")])
#: names a glob would read otherwise: brackets, braces, stars, a backslash, a space, no extension
NAMES = ["stream.tnt", "s[1] {a,b}*?.tnt", "back\\slash and space", "plain"]


def _lines(times):
    return "".join(format_tnt(t, EX + "x", RDF_TYPE, EX + ("Student" if t % 2 else "Course")) + "\n" for t in times)


def test_check_twice_with_checkpoint_and_out_beside_the_file(spark, tmp_path):
    stream = tmp_path / "stream.tnt"
    stream.write_text(_lines(range(0, 6)))
    (tmp_path / "decoy.tnt").write_text(_lines(range(100, 110)))     # beside it: never read
    topology = compile_ntm(analyse(TBOX))
    config = RunConfig(window=1, checkpoint=str(tmp_path / "ck"), out=str(tmp_path / "out"),
                       options=SparkOptions(once=True))
    first = SparkRunner().run(topology, [TntFiles(str(stream))], config)
    expected = LocalRunner().run(topology, [TntFiles(str(stream))], RunConfig(window=1))
    assert first.keys == expected.keys == {(EX + "x", t) for t in range(1, 6)}
    assert first.counters.records == 6
    second = SparkRunner().run(topology, [TntFiles(str(stream))], config)     # the same folders again
    assert second.resumed and second.counters.records == 0 and second.keys == first.keys
    with open(stream, "a", encoding="utf-8") as handle:      # the file grew: a file source reads files once
        handle.write(_lines([6]))
    third = SparkRunner().run(topology, [TntFiles(str(stream))], config)
    assert third.counters.records == 0


@pytest.mark.parametrize("name", NAMES[1:])
def test_a_file_name_is_never_read_as_a_pattern(spark, tmp_path, name):
    stream = tmp_path / name
    stream.write_text(_lines(range(0, 4)))
    (tmp_path / "s1 a.tnt").write_text(_lines(range(50, 54)))        # what the name would match as a glob
    (tmp_path / "out" / "batch=3").mkdir(parents=True)                # a partition directory beside it
    (tmp_path / "out" / "batch=3" / "part-0.json").write_text("{}\n")
    result = SparkRunner().run(compile_ntm(analyse(TBOX)), [TntFiles(str(stream))],
                               RunConfig(window=1, options=SparkOptions(once=True)))
    assert result.keys == {(EX + "x", t) for t in range(1, 4)} and result.counters.records == 4


@pytest.mark.parametrize("folder", ["d[1]", "d {a,b}*?"])
def test_a_folder_name_is_never_read_as_a_pattern(spark, tmp_path, folder, capsys):
    """A stream folder whose name has glob characters is that folder (it read nothing, or the folders the
    pattern matched); its rejected lines name its files as the local runner does."""
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "s.tnt").write_text(_lines(range(0, 4)) + "not a line\n")
    (tmp_path / "d1").mkdir()                                           # what d[1] matches as a glob
    (tmp_path / "d1" / "s.tnt").write_text(_lines(range(50, 54)))
    topology = compile_ntm(analyse(TBOX))
    source = TntFiles(str(tmp_path / folder))
    result = SparkRunner().run(topology, [source], RunConfig(window=1, options=SparkOptions(once=True)))
    local = LocalRunner().run(topology, [source], RunConfig(window=1))
    assert result.keys == local.keys == {(EX + "x", t) for t in range(1, 4)} and result.counters.records == 4
    assert [(r.source, r.line) for r in result.rejected] == [(r.source, r.line) for r in local.rejected] == [
        (str(tmp_path / folder / "s.tnt"), 5)]
    assert "keeps watching" not in capsys.readouterr().err          # --once reads what is there and stops


def test_reason_twice_with_checkpoint_and_out_beside_the_log(spark, tmp_path):
    log = tmp_path / "in.log"
    log.write_text("".join(f"{t} b({t % 3});\n" for t in range(5)))
    (tmp_path / "other.log").write_text("0 b(99);\n")
    topology = compile_program(parse_program("c(X) :- b(X) in [1]."))
    config = RunConfig(lateness=0, checkpoint=str(tmp_path / "ck"), out=str(tmp_path / "out"),
                       options=SparkOptions(once=True))
    first = SparkRunner().run(topology, [AtomLog(str(log))], config)
    local = LocalRunner().run(topology, [AtomLog(str(log))], RunConfig(lateness=0))
    assert [(m.time, m.atoms) for m in first.outputs] == [(m.time, m.atoms) for m in local.outputs]
    assert "c(99)" not in {a for m in first.outputs for a in m.atoms}
    second = SparkRunner().run(topology, [AtomLog(str(log))], config)     # reads nothing new; the answer stands
    assert second.resumed and second.counters.records == 0
    assert [(m.time, m.atoms) for m in second.outputs] == [(m.time, m.atoms) for m in first.outputs]


@pytest.mark.parametrize("runner", [LocalRunner, SparkRunner])
@pytest.mark.parametrize("flag", ["out", "rejected_out", "checkpoint"])
def test_an_output_inside_the_stream_directory_is_refused_before_anything_runs(tmp_path, runner, flag):
    from srtopo.errors import UsageError
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.log").write_text("0 b(1);\n")
    topology = compile_program(parse_program("c(X) :- b(X)."))
    config = RunConfig(lateness=0, **{flag: str(folder / "sub")})
    with pytest.raises(UsageError, match="inside the --stream directory"):
        runner().run(topology, [AtomLog(str(folder))], config)
    assert not (folder / "sub").exists()


def test_a_rejected_line_names_its_file_as_the_user_gave_it_on_both_runners(spark, tmp_path, monkeypatch):
    """In the records handed over and in Spark's rejected directory, on the columnar plan (Hadoop's listing names
    files as they are) and the fused one (Spark's text reader percent-encodes them: ``a%20b%2541.tnt``)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a b%41.tnt").write_text(_lines([1]) + "not a line\n")
    (tmp_path / "s.tnt").write_text("also not a line\n" + _lines([2]))
    topology = compile_ntm(analyse(TBOX))
    runners = (("local", LocalRunner(), None), ("columnar", SparkRunner(), SparkOptions(once=True)),
               ("fused", SparkRunner(), SparkOptions(once=True, physical_plan="fused", driver_tuples=0)))
    for k, (source, expected) in enumerate(((TntFiles("s.tnt"), ("s.tnt", 1)),
                                            (TntFiles("d"), (str(Path("d") / "a b%41.tnt"), 2)))):
        got, durable = {}, {}
        for name, runner, options in runners:
            folder = tmp_path / f"rejected-{name}-{k}"
            result = runner.run(topology, [source], RunConfig(window=1, options=options, rejected_out=str(folder)))
            got[name] = [(r.source, r.line) for r in result.rejected]
            files = [folder] if folder.is_file() else sorted(folder.rglob("*.json"))
            durable[name] = [(r["source"], r["line"]) for f in files for r in map(json.loads, f.read_text(
                encoding="utf-8").splitlines())]
        assert got == durable == {"local": [expected], "columnar": [expected], "fused": [expected]}


def test_a_checkpoint_whose_first_log_write_was_cut_short_starts(spark, tmp_path):
    """A run stopped while Spark wrote the offsets of its first batch leaves a temporary file there; Spark 4
    refused to start batch 0 over it ("should be empty on batch 0") and the checkpoint was unusable."""
    stream = tmp_path / "in" / "s.tnt"
    stream.parent.mkdir()
    stream.write_text(_lines(range(0, 4)))
    (tmp_path / "ck" / "query" / "offsets").mkdir(parents=True)
    (tmp_path / "ck" / "query" / "offsets" / ".0.5e1f1d5c-cut-short.tmp").write_text("v1\n")
    topology = compile_ntm(analyse(TBOX))
    result = SparkRunner().run(topology, [TntFiles(str(stream))], RunConfig(
        window=1, checkpoint=str(tmp_path / "ck"), out=str(tmp_path / "out"), options=SparkOptions(once=True)))
    assert result.keys == {(EX + "x", t) for t in range(1, 4)}
