"""Where a Spark topology's outputs and rejected records go, batch by batch.

* ``out/batch=<batch>/`` (JSON lines or Parquet): every batch's outputs, overwritten when a batch is replayed,
  so the directory holds each output exactly once; ``out/batch=final/``: outputs closed at the end of input;
* ``rejected/batch=<batch>/``: rejected records as JSON lines ``{"source", "line", "text", "reason"}``;
* a Python sink (``runners.protocol.Sink``) and a callback(batch_id, DataFrame) on the driver (not
  exactly-once: a replayed batch is passed again).
"""
from __future__ import annotations

from srtopo.topology.spark.store import batch_label

REJECTED_COLUMNS = "source STRING, line BIGINT, text STRING, reason STRING"


class BatchSinks:
    def __init__(self, fs, out: str | None, out_format: str, rejected_out: str | None, callback=None):
        self.fs = fs
        self.out = out
        self.out_format = out_format
        self.rejected_out = rejected_out
        self.callback = callback
        self.listeners = []          # called with (batch label, outputs DataFrame, rejected DataFrame or None)

    def start(self) -> None:
        """A run starts: outputs closed at the end of an earlier run are no longer final (more input may come)."""
        if self.out:
            self.fs.delete(self.out.rstrip("/") + "/batch=final")

    def write(self, batch_id, outputs, rejected) -> None:
        label = batch_label(batch_id)
        if outputs is not None and self.out:
            writer = outputs.write.mode("overwrite")
            dest = f"{self.out}/batch={label}"
            writer.parquet(dest) if self.out_format == "parquet" else writer.json(dest)
        if rejected is not None and self.rejected_out:
            rejected.write.mode("overwrite").json(f"{self.rejected_out}/batch={label}")
        if outputs is not None and self.callback is not None:
            self.callback(batch_id, outputs)
        for listener in self.listeners:
            listener(label, outputs, rejected)

    def outputs(self, spark, schema: str):
        """Every output written so far (column ``batch`` names the micro-batch)."""
        if not [x for x in self.fs.list_names(self.out) if x.startswith("batch=")]:
            return spark.createDataFrame([], schema)
        reader = spark.read.option("basePath", self.out)
        path = self.out.rstrip("/") + "/batch=*"
        if self.out_format == "parquet":
            return reader.parquet(path)
        return reader.schema(schema + ", batch STRING").json(path)

    def rejected(self, spark):
        if not self.rejected_out or not [x for x in self.fs.list_names(self.rejected_out) if x.startswith("batch=")]:
            return spark.createDataFrame([], REJECTED_COLUMNS)
        return spark.read.schema(REJECTED_COLUMNS + ", batch STRING").option("basePath", self.rejected_out) \
            .json(self.rejected_out.rstrip("/") + "/batch=*")
