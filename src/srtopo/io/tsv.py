"""Tuple files: ``time<TAB>subject<TAB>concept`` per line, the IR's input without RDF (any concept string,
e.g. ``exists-:P``). Read by both runners (the Spark source parses the same lines in the JVM)."""
from __future__ import annotations

import os
from typing import Iterable, Iterator

from srtopo.io.tnt import TIME_MAX, TIME_MIN
from srtopo.ir.records import RejectedRecord, StreamTuple

REASON = "expected: integer time, subject, concept separated by tabs"


def tuple_records(lines: Iterable[str], source: str) -> Iterator[tuple[StreamTuple, int] | RejectedRecord]:
    """(tuple, line number) per good line, a RejectedRecord per bad one; blank lines and ``#`` lines skipped."""
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if line == "" or line.startswith("#"):
            continue
        cols = line.split("\t")
        try:
            time = int(cols[0]) if len(cols) == 3 else None
        except ValueError:
            time = None
        if time is None or not TIME_MIN <= time <= TIME_MAX:
            yield RejectedRecord(source, number, line, REASON)
            continue
        yield StreamTuple(cols[1], cols[2], time, cols[2]), number


def write_tuples(path: str, tuples, mtime: float | None = None) -> None:
    """Write (subject, concept, time) tuples as one tuple file (atomically: a hidden temporary file renamed)."""
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")   # hidden: not picked up
    with open(tmp, "w", encoding="utf-8") as handle:
        for t in tuples:
            handle.write(f"{int(t[2])}\t{t[0]}\t{t[1]}\n")
    os.replace(tmp, path)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
