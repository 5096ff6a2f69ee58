"""Sinks: where a run's outputs and rejected records go as they are produced (``runners.protocol.Sink``)."""
from __future__ import annotations

import os
import sys
from typing import TextIO

from srtopo.errors import SrtopoError, StreamInputError
from srtopo.ir.records import Model, RejectedRecord, Report


def emit_all(sink, batch) -> None:
    """Hand a batch of outputs to a sink: in one call where the sink takes batches (``emit_batch``), else output by
    output. A batch has ``records`` (the outputs, in order) and ``json_text()`` (their JSON lines, each ending with
    a newline), which a columnar plan builds column by column (``consistency.columnar.ReportBatch``)."""
    take = getattr(sink, "emit_batch", None)
    if take is not None:
        take(batch)
        return
    for output in batch.records:
        sink.emit(output)


class MemorySink:
    """Keeps everything (what ``RunResult.outputs`` and ``.rejected`` hold when no other sink is given). A batch of
    outputs (``emit_all``) is kept as it is, and its records are built when ``outputs`` is read: a columnar plan's
    batch holds its reports as arrays, and building a Python object per report belongs to the reader of the
    result, not to the stream's batches."""

    def __init__(self):
        self._outputs: list = []
        self._batches: list = []
        self.rejected: list[RejectedRecord] = []

    @property
    def outputs(self) -> list:
        if self._batches:
            batches, self._batches = self._batches, []
            for batch in batches:
                self._outputs.extend(batch.records)
        return self._outputs

    def emit(self, output: Report | Model) -> None:
        self.outputs.append(output)

    def emit_batch(self, batch) -> None:
        self._batches.append(batch)

    def reject(self, record: RejectedRecord) -> None:
        self.rejected.append(record)


def _write(handle: TextIO, text: str) -> None:
    """Write, and name the file when that fails (a full disk: the OSError of a write has no file name)."""
    try:
        handle.write(text)
    except OSError as error:
        if error.filename is None and getattr(handle, "name", None):
            raise OSError(error.errno, error.strerror, handle.name) from None
        raise


class JsonLinesSink:
    """Outputs as JSON lines to ``out`` (None: counted only); rejected records as JSON lines to ``rejected`` (if
    given), and the first ``echo_limit`` of them as one line each on ``echo`` (stderr by default)."""

    def __init__(self, out: TextIO | None, rejected: TextIO | None = None, echo: TextIO | None = sys.stderr,
                 echo_limit: int = 20, flush: bool = False, strict: bool = False, reports: TextIO | None = None,
                 reports_apart: bool = False):
        """``strict``: the first rejected record stops the run (a StreamInputError at its source and line).
        ``reports_apart``: reports are kept out of ``out`` (a run that outputs reports and models: models go to
        ``out``), written to ``reports`` if given, and counted (``reports_count``)."""
        self.strict = strict
        self.reports_apart = reports_apart
        self.reports_out = reports
        self.reports_count = 0
        self.out = out
        self.rejected_out = rejected
        self.echo = echo
        self.echo_limit = echo_limit
        self.flush = flush
        self.outputs = 0
        self.rejected = 0

    def emit(self, output: Report | Model) -> None:
        if self.reports_apart and isinstance(output, Report):
            self.reports_count += 1
            if self.reports_out is not None:
                _write(self.reports_out, output.to_json() + "\n")
            return
        self.outputs += 1
        if self.out is None:       # written elsewhere (RunConfig.out): only counted here
            return
        _write(self.out, output.to_json() + "\n")
        if self.flush:
            self.out.flush()

    def emit_batch(self, batch) -> None:
        """A batch's JSON lines written at once (``emit_all``)."""
        self.outputs += len(batch)
        if self.out is None or not len(batch):
            return
        _write(self.out, batch.json_text())
        if self.flush:
            self.out.flush()

    def reject(self, record: RejectedRecord) -> None:
        self.rejected += 1
        if self.rejected_out is not None:
            _write(self.rejected_out, record.to_json() + "\n")
        if self.strict:
            raise StreamInputError(f"bad input: {record.reason}: {record.text[:200]!r}", file=record.source,
                                   line=record.line, hint="without --fail-on-bad-input a bad line is a rejected "
                                                          "record and the run goes on")
        if self.echo is not None and self.rejected <= self.echo_limit:
            print(f"srtopo: rejected {record}", file=self.echo)

    def close_note(self) -> str | None:
        """A line for the end of a run when rejected records were not all shown."""
        if self.echo is not None and self.rejected_out is None and self.rejected > self.echo_limit:
            return f"srtopo: ... {self.rejected - self.echo_limit} more rejected records (use --rejected-out)"
        return None


def open_text(path: str | None, what: str):
    """``-``/None -> (stdout, False); a path -> (file opened for writing, its directory made if needed, True),
    or a located error."""
    if path in (None, "", "-"):
        return sys.stdout, False
    try:
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        return open(path, "w", encoding="utf-8"), True
    except OSError as error:
        raise SrtopoError(f"cannot write {what}: {error.strerror}", file=path,
                          hint="check that the directory exists and is writable") from None
