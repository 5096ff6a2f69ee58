"""Where a Spark topology's outputs and rejected records go, batch by batch.

* ``out/batch=<batch>/`` (JSON lines or Parquet): every batch's outputs, overwritten when a batch is replayed,
  so the directory holds each output exactly once; ``out/batch=final/``: outputs closed at the end of input;
* ``rejected/batch=<batch>/``: rejected records as JSON lines ``{"source", "line", "text", "reason"}``, each
  source spelled as the user gave it (``spell``: the local runner's spelling, not Spark's ``file:`` URI);
* listeners on the driver (the runner's hand-over to a Python sink: not exactly-once, a replayed batch is
  passed again). They get the JSON lines just written where there are such (read on the driver, no Spark
  job), else the DataFrame.

A batch hands over its outputs as a DataFrame, or as :class:`WrittenFiles`: JSON lines its own write already
put in the store, which the sink copies as files (no Spark job: a job to re-read and re-write them cost
~0.15 s per micro-batch on local[2]).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from srtopo.runners.spark.store import batch_label

REJECTED_COLUMNS = "source STRING, line BIGINT, text STRING, reason STRING"


@dataclass(frozen=True)
class WrittenFiles:
    """A directory of JSON-lines files in the sink's own line format (``schema``: its columns)."""
    path: str
    schema: str

    def frame(self, spark):
        return spark.read.schema(self.schema).json(self.path)

    def rows(self, fs):
        """The records as dicts, read on the driver."""
        return (json.loads(line) for line in fs.read_lines(self.path))


class BatchSinks:
    def __init__(self, fs, out: str | None, out_format: str, rejected_out: str | None, spark=None,
                 reports_out: str | None = None, spell=None):
        self.fs = fs
        #: a rejected record's JSON line (a dict) -> the record as the user would name it (a ``RejectedRecord``)
        self.spell = spell
        self.spark = spark
        #: where the reports of a run that outputs reports and models apart go (``out``: the models)
        self.reports_out = reports_out
        self.out = out
        self.out_format = out_format
        self.rejected_out = rejected_out
        self.listeners = []          # called with (batch label, outputs, rejected): WrittenFiles, DataFrame or None

    def start(self) -> None:
        """A run starts: outputs closed at the end of an earlier run are no longer final (more input may come)."""
        for directory in (self.out, self.reports_out):
            if directory:
                self.fs.delete(directory.rstrip("/") + "/batch=final")

    def _copy(self, directory: str | None, label: str, outputs, schema: str | None):
        """A batch's outputs written into ``directory``/batch=label; what the listeners read (the copy, where it
        is JSON lines)."""
        if outputs is None or not directory:
            return outputs
        dest = f"{directory}/batch={label}"
        if isinstance(outputs, WrittenFiles) and self.out_format == "json":
            self.fs.copy_files(outputs.path, dest)
        else:
            frame = outputs.frame(self.spark) if isinstance(outputs, WrittenFiles) else outputs
            writer = frame.write.mode("overwrite")
            writer.parquet(dest) if self.out_format == "parquet" else writer.json(dest)
        if self.out_format == "json" and schema is not None:
            return WrittenFiles(dest, schema)
        return outputs

    def write(self, batch_id, outputs, rejected, schema: str | None = None, reports=None) -> float:
        """Write a batch's outputs (a DataFrame or ``WrittenFiles``; ``schema``: their columns) and rejected
        records, then call the listeners; returns when the files were written (``time.time()``, before the
        listeners). ``reports`` (``WrittenFiles`` of reports): a run that outputs reports and models apart
        writes them to ``reports_out``; listeners get them first. ``rejected`` may be a list of
        ``WrittenFiles``, written into one directory."""
        label = batch_label(batch_id)
        outputs = self._copy(self.out, label, outputs, schema)
        if reports is not None:
            reports = self._copy(self.reports_out, label, reports, getattr(reports, "schema", None))
        if isinstance(rejected, list):
            parts = [r for r in rejected if r is not None]
            if not parts:
                rejected = None
            elif self.rejected_out:
                dest = f"{self.rejected_out}/batch={label}"
                for i, part in enumerate(parts):
                    self.fs.copy_files(part.path, dest, prefix=f"{i}-", replace=i == 0)
                self._respell(dest)
                rejected = WrittenFiles(dest, REJECTED_COLUMNS)
            else:
                rejected = parts[0] if len(parts) == 1 else parts
        elif rejected is not None and self.rejected_out:      # (a list is copied above: once, not onto itself)
            dest = f"{self.rejected_out}/batch={label}"
            if isinstance(rejected, WrittenFiles):
                self.fs.copy_files(rejected.path, dest)
            else:
                rejected.write.mode("overwrite").json(dest)
            self._respell(dest)
            rejected = WrittenFiles(dest, REJECTED_COLUMNS)
        written_at = time.time()
        for listener in self.listeners:
            if reports is not None:
                listener(label, reports, None)
            listener(label, outputs, rejected)
        return written_at

    def _respell(self, directory: str) -> None:
        """Rewrite the rejected records of ``directory`` with their sources spelled as the user gave them. A file
        whose records need no change is left as it is; a changed one is written aside and renamed over it, so a
        file linked from the store keeps the store's text."""
        if self.spell is None:
            return
        for path in self.fs.data_files(directory):
            lines = list(self.fs.read_lines_of(path))
            spelled = [self.spell(json.loads(line)).to_json() for line in lines]
            if spelled != lines:
                self.fs.write_text(path, "\n".join(spelled) + "\n")

    def outputs(self, spark, schema: str):
        """Every output written so far (column ``batch`` names the micro-batch)."""
        if not self._batches(self.out):
            return spark.createDataFrame([], schema)
        reader = spark.read.option("basePath", self.out)
        path = self.out.rstrip("/") + "/batch=*"
        if self.out_format == "parquet":
            return reader.parquet(path)
        return reader.schema(schema + ", batch STRING").json(path)

    def written_rows(self, rejected: bool = False, reports: bool = False):
        """Every output (JSON lines), or with ``rejected`` every rejected record (always JSON lines), or with
        ``reports`` every report of a run that writes them apart, written so far, as dicts read on the driver,
        batch by batch."""
        directory = self.rejected_out if rejected else self.reports_out if reports else self.out
        if not directory:
            return []
        return [json.loads(line) for name in self._batches(directory)
                for line in self.fs.read_lines(f"{directory.rstrip('/')}/{name}")]

    def local_output_files(self) -> list[str] | None:
        """The data files of every batch's outputs, batch by batch, where they are JSON lines on a local disk;
        else None (read them through Spark)."""
        if not self.out or self.out_format != "json":
            return None
        from srtopo.runners.spark.fs import local_path
        local = [local_path(f) for name in self._batches(self.out)
                 for f in self.fs.data_files(f"{self.out.rstrip('/')}/{name}")]
        return None if any(f is None for f in local) else local

    def _batches(self, directory: str) -> list[str]:
        return sorted(x for x in self.fs.list_names(directory) if x.startswith("batch="))

    def rejected(self, spark):
        if not self.rejected_out or not self._batches(self.rejected_out):
            return spark.createDataFrame([], REJECTED_COLUMNS)
        return spark.read.schema(REJECTED_COLUMNS + ", batch STRING").option("basePath", self.rejected_out) \
            .json(self.rejected_out.rstrip("/") + "/batch=*")


def row_field(row, name: str):
    """A field of a Spark Row, or of a JSON line's dict (where a null field is absent)."""
    return row.get(name) if isinstance(row, dict) else row[name]
