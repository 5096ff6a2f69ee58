"""No command and no runner writes where it reads: an output that is an input, lies inside one, holds one, or is
another output is refused in one line with status 2, before anything is opened for writing, and every file is
left as it was."""
import shutil
from pathlib import Path

import pytest

from srtopo.cli import main
from srtopo.consistency import compile_ntm, load_tbox
from srtopo.errors import UsageError
from srtopo.io.paths import refuse_clashes, spec_path
from srtopo.io.sources import TntFiles
from srtopo.runners import RunConfig, SparkOptions, get_runner

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def folder(tmp_path):
    for name in ("tex.ttl", "tex-stream.tnt", "queens.idlvsr", "queens.log", "shortest-paths.sl", "arcs.txt"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(capsys, folder, argv, words):
    before = _snapshot(folder)
    assert main([a.replace("@", str(folder) + "/") for a in argv]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and all(w in err[0] for w in words), err
    assert _snapshot(folder) == before      # nothing written, truncated or created


CHECK = ["check", "--tbox", "@tex.ttl", "--stream", "@tex-stream.tnt", "--window", "3"]
REASON = ["reason", "--program", "@queens.idlvsr", "--stream", "@queens.log"]
STREAMLOG = ["streamlog", "--program", "@shortest-paths.sl", "--stream", "@arcs.txt"]


@pytest.mark.parametrize("argv, words", [
    (CHECK + ["--out", "@tex-stream.tnt"], ["--out", "is the --stream input"]),
    (CHECK + ["--out", "@tex.ttl"], ["--out", "is the --tbox input"]),
    (CHECK + ["--rejected-out", "@tex-stream.tnt"], ["--rejected-out", "--stream"]),
    (CHECK + ["--out", "@x.jsonl", "--rejected-out", "@x.jsonl"], ["--out and --rejected-out are one path"]),
    (CHECK + ["--out", "@tex-stream.tnt", "--engine", "spark", "--once"], ["is the --stream input"]),
    (CHECK + ["--checkpoint", "@tex-stream.tnt", "--engine", "spark", "--once"], ["--checkpoint", "--stream"]),
    (CHECK + ["--engine", "spark", "--once", "--out", "@o", "--metrics-out", "@o/m.jsonl"],
     ["--metrics-out", "inside the --out directory"]),
    (CHECK + ["--engine", "spark", "--once", "--out", "@o", "--checkpoint", "@o"], ["--out and --checkpoint"]),
    (CHECK + ["--engine", "spark", "--once", "--checkpoint", "@"], ["inside the --checkpoint directory"]),
    (CHECK + ["--also-stream", "@arcs.txt", "--out", "@arcs.txt"], ["is the --also-stream input"]),
    (CHECK + ["--topology", "@t.json", "--out", "@t.json"], ["is the --topology input"]),
    (REASON + ["--out", "@queens.log"], ["is the --stream input"]),
    (REASON + ["--out", "@queens.idlvsr"], ["is the --program input"]),
    (REASON + ["--rejected-out", "@queens.log"], ["is the --stream input"]),
    (STREAMLOG + ["--rejected-out", "@arcs.txt"], ["--rejected-out", "is the --stream input"]),
    (STREAMLOG + ["--out", "@shortest-paths.sl"], ["is the --program input"]),
    (STREAMLOG + ["--out", "@o.jsonl", "--rejected-out", "@o.jsonl"], ["one path"]),
])
def test_every_command_refuses_an_output_that_meets_an_input_or_another_output(capsys, folder, argv, words):
    _refused(capsys, folder, argv, words)


def test_a_link_to_the_input_and_a_folder_read_whole_are_refused_too(capsys, folder):
    (folder / "link.tnt").symlink_to(folder / "tex-stream.tnt")
    _refused(capsys, folder, CHECK + ["--out", "@link.tnt"], ["is the --stream input"])
    (folder / "hard.tnt").hardlink_to(folder / "tex-stream.tnt")
    _refused(capsys, folder, CHECK + ["--out", "@hard.tnt"], ["is the --stream input"])
    (folder / "d").mkdir()
    shutil.copy(folder / "tex-stream.tnt", folder / "d" / "s.tnt")
    argv = ["check", "--tbox", "@tex.ttl", "--stream", "@d", "--window", "3", "--out", "@d/reports.jsonl"]
    _refused(capsys, folder, argv, ["lies inside the --stream directory"])
    _refused(capsys, folder, argv[:-1] + ["tnt:@d/reports.jsonl"], ["lies inside the --stream directory"])


def test_separate_paths_still_run(capsys, folder):
    assert main([a.replace("@", str(folder) + "/") for a in CHECK + ["--out", "@r.jsonl",
                                                                     "--rejected-out", "@bad.jsonl"]]) == 0
    assert (folder / "r.jsonl").read_text().count("\n") > 0
    capsys.readouterr()


@pytest.mark.parametrize("variant", ["local", "spark"])
def test_the_api_refuses_the_same_before_writing(request, tmp_path, variant):
    if variant == "spark":
        request.getfixturevalue("spark")
    stream = tmp_path / "s.tnt"
    shutil.copy(EXAMPLES / "tex-stream.tnt", stream)
    before = stream.read_bytes()
    topology = compile_ntm(load_tbox(str(EXAMPLES / "tex.ttl")))
    options = SparkOptions(once=True) if variant == "spark" else None
    for config in (RunConfig(window=3, out=str(stream), options=options),
                   RunConfig(window=3, out=str(tmp_path / "a"), rejected_out=str(tmp_path / "a"), options=options)):
        with pytest.raises(UsageError):
            get_runner(variant).run(topology, [TntFiles(str(stream))], config)
        assert stream.read_bytes() == before and not (tmp_path / "a").exists()


def test_spec_paths():
    assert spec_path("tnt:d/x") == "d/x" and spec_path("rdf[turtle]:d") == "d" and spec_path("file:/a") == "/a"
    assert spec_path("-") is None and spec_path("tcp://h:1") is None and spec_path("hdfs://n/a") is None
    refuse_clashes([("--stream", "a/b")], [("--out", "a/bc"), ("--rejected-out", "a/b.bad")])   # prefixes only
