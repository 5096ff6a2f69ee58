"""Every kind on every runner writes its records in the one JSON form (``ir.records``): a Spark run's ``--out``
files, read in batch order, are the local run's ``--out`` file byte for byte (a consistency check's reports in another order: Spark writes them
partition by partition); its ``--rejected-out`` files hold
the local run's rejected records in the same form; every ``--metrics-out`` line is compact."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from srtopo.cli import main
from srtopo.ir.records import json_line

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RULES = "c(X) :- b(X).\nd(X) :- b(X) at least 2 in [3].\n"


def _inputs(tmp_path: Path) -> dict:
    """kind -> (command line without stream flags, the stream's text): each stream ends with a line that is
    rejected, holding characters a JSON string escapes."""
    bad = 'not "a" record\\ \u00e9\n'
    (tmp_path / "p.idlvsr").write_text(RULES)
    return {
        "consistency": (["check", "--tbox", str(EXAMPLES / "tex.ttl"), "--window", "10"],
                        (EXAMPLES / "tex-stream.tnt").read_text() + bad),
        "rules": (["reason", "--program", str(tmp_path / "p.idlvsr")],
                  "".join(f"{t} b({t % 3}); b(x{t})\n" for t in range(8)) + bad),
        "streamlog": (["streamlog", "--program", str(EXAMPLES / "shortest-paths.sl")],
                      (EXAMPLES / "arcs.txt").read_text() + bad),
        "streamlog-keyed": (["streamlog", "--program", str(EXAMPLES / "sensors.sl"), "--partitions", "2"],
                            (EXAMPLES / "sensors.txt").read_text() + bad),
    }


def _batches(folder: Path) -> list[Path]:
    """A Spark output directory's files: batch=0, 1, ... then batch=final."""
    def order(path: Path):
        name = path.parent.name.split("=", 1)[1]
        return (0, int(name), path.name) if name.isdigit() else (1, 0, path.name)
    return sorted(folder.glob("batch=*/*.json"), key=order)


@pytest.mark.parametrize("kind", ["consistency", "rules", "streamlog", "streamlog-keyed"])
def test_spark_writes_the_local_runners_lines(kind, spark, tmp_path, capsys):
    base, text = _inputs(tmp_path)[kind]
    stream = tmp_path / "in" / "stream.txt"
    stream.parent.mkdir()
    stream.write_text(text, encoding="utf-8")
    local_only = [a for a in base if a not in ("--partitions", "2")]
    assert main([*local_only, "--stream", str(stream), "--out", str(tmp_path / "local.json"),
                 "--rejected-out", str(tmp_path / "local-rejected.json")]) == 0
    assert main([*base, "--stream", str(stream), "--engine", "spark", "--once", "--out", str(tmp_path / "spark"),
                 "--rejected-out", str(tmp_path / "spark-rejected"), "--metrics-out",
                 str(tmp_path / "metrics.json")]) == 0
    capsys.readouterr()
    local = (tmp_path / "local.json").read_bytes()
    written = b"".join(p.read_bytes() for p in _batches(tmp_path / "spark"))
    assert local.count(b"\n") >= 3
    if kind == "consistency":       # reports are written partition by partition: the same lines, in another order
        assert sorted(written.splitlines()) == sorted(local.splitlines())
    else:                           # a model per time point, in time order
        assert written == local

    local_rejected = (tmp_path / "local-rejected.json").read_text(encoding="utf-8").splitlines()
    spark_rejected = [x for p in _batches(tmp_path / "spark-rejected")
                      for x in p.read_text(encoding="utf-8").splitlines()]
    assert len(local_rejected) == len(spark_rejected) == 1
    for line in local_rejected + spark_rejected:
        assert json_line(json.loads(line)) == line
    # Spark names the file by its URI in its own directory; the rest of the record is the same
    assert [{**json.loads(x), "source": None} for x in spark_rejected] == \
           [{**json.loads(x), "source": None} for x in local_rejected]

    metrics = (tmp_path / "metrics.json").read_text(encoding="utf-8").splitlines()
    assert metrics and all(json_line(json.loads(x)) == x for x in metrics)
