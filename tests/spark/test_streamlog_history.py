"""A Streamlog history on Spark kept as snapshots and deltas (``runners.spark.slstate``), across runs on one
checkpoint: a run that restarts from an entry holding a snapshot (just after a compaction) and one that restarts
from a delta (between compactions) give, over all runs, the output of one local run over the whole stream, and
the store keeps the snapshot the latest entry needs and drops what is older."""
from __future__ import annotations

import json
import os
from pathlib import Path

from srtopo.cli import main
from srtopo.runners.spark import slstate
from tests.spark.test_streamlog_spark import FIRST, _models, _written


def _entries(checkpoint: Path) -> dict:
    """Store entry id -> 'snapshot' / 'delta' (completed entries only)."""
    out = {}
    for entry in sorted((checkpoint / "store").iterdir()):
        if entry.name.isdigit() and (entry / "_meta.json").exists():
            out[int(entry.name)] = "snapshot" if (entry / slstate.SNAPSHOT).exists() else "delta"
    return out


def test_restarts_after_and_between_compactions_give_the_local_output(spark, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(slstate, "EVERY", 3)
    program = tmp_path / "first.sl"
    program.write_text(FIRST)
    folder = tmp_path / "in"
    folder.mkdir()
    letters = "abcdefgh"

    def add(k: int) -> None:
        path = folder / f"part-{k:02d}.txt"
        path.write_text("".join(f"msg({3 * k + j},{letters[(k + j * 3) % 8]}).\n" for j in range(3)))
        os.utime(path, (1_600_000_000 + k, 1_600_000_000 + k))

    args = ["streamlog", "--program", str(program), "--stream", str(folder), "--engine", "spark", "--once",
            "--files-per-batch", "1", "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    seen = []
    for files in (range(0, 4), range(4, 6), range(6, 7), range(7, 9)):
        for k in files:
            add(k)
        assert main(args) == 0
        seen.append(_entries(tmp_path / "ck"))
    # entries 0 and 3 are snapshots: the second run restarts just after a compaction, the third from a delta
    # the entries from the snapshot the latest one needs are kept (and no older)
    assert seen == [{0: "snapshot", 1: "delta", 2: "delta", 3: "snapshot"}, {3: "snapshot", 4: "delta", 5: "delta"},
                    {3: "snapshot", 4: "delta", 5: "delta", 6: "snapshot"}, {6: "snapshot", 7: "delta", 8: "delta"}]
    capsys.readouterr()
    assert main(["streamlog", "--program", str(program), "--stream", str(folder)]) == 0
    local = _models(capsys)
    assert _written(tmp_path / "out") == local and len(local) >= 8
    meta = json.loads((tmp_path / "ck" / "store" / f"{8:010d}" / "_meta.json").read_text())
    assert meta["needs"] == 6 and meta["depth"] == 2
