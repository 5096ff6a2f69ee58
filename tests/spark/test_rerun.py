"""A second ``--once`` run on a checkpoint whose input the first run consumed reads nothing new: every kind exits
0, writes nothing new to ``--out`` and says in one line that nothing new was read."""
from __future__ import annotations

from pathlib import Path

import pytest

from srtopo.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _command(kind: str, tmp_path: Path) -> list[str]:
    if kind == "check":
        return ["check", "--tbox", str(EXAMPLES / "tex.ttl"), "--stream", str(EXAMPLES / "tex-stream.tnt"),
                "--window", "10"]
    if kind == "reason":
        (tmp_path / "p.idlvsr").write_text("c(X) :- b(X) in [1].\n")
        (tmp_path / "s.log").write_text("0 b(1)\n1 b(2)\n2 b(3)\n")
        return ["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "s.log")]
    return ["streamlog", "--program", str(EXAMPLES / "shortest-paths.sl"), "--stream", str(EXAMPLES / "arcs.txt")]


def _files(folder: Path) -> dict:
    """Each batch directory's outputs (a batch closed again may get files of new names, with the same lines)."""
    return {batch.name: b"".join(p.read_bytes() for p in sorted(batch.glob("*.json")))
            for batch in sorted(folder.glob("batch=*"))}


@pytest.mark.parametrize("kind", ["check", "reason", "streamlog"])
def test_a_second_run_on_a_consumed_checkpoint_exits_0_and_says_nothing_new_was_read(kind, spark, tmp_path, capsys):
    args = _command(kind, tmp_path) + ["--engine", "spark", "--once", "--checkpoint", str(tmp_path / "ck"),
                                       "--out", str(tmp_path / "out")]
    assert main(args) == 0
    first = capsys.readouterr().err
    written = _files(tmp_path / "out")
    assert written and "nothing new" not in first
    assert main(args) == 0
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert _files(tmp_path / "out") == written
    said = [x for x in err if "nothing new was read" in x]
    assert len(said) == 1 and str(tmp_path / "ck") in said[0], err
    assert not any("error" in x for x in err), err
