"""Tuple sources read in this process: each source as batches of (tuple, source name, line, source index),
rejected records and punctuation, in the source's own order, and several sources' batches merged by event time.
The local executor of consistency topologies reads its sources through this."""
from __future__ import annotations

import fnmatch
import heapq
import os
import socket
import sys
from itertools import chain
from typing import Iterable, Iterator, Sequence

from srtopo import interrupt
from srtopo.errors import StreamInputError, UnsupportedByRunner
from srtopo.io.sources import Lines, RdfFiles, SocketLines, TntFiles, TupleFiles, Tuples, stream_files
from srtopo.io.tnt import Punctuation, decoded_lines, fd_lines, file_lines, tnt_records, tnt_statements
from srtopo.io.tsv import tuple_records
from srtopo.ir.records import RejectedRecord, StreamTuple

#: the tuple sources this module reads
TUPLE_SOURCES = (TntFiles, TupleFiles, RdfFiles, SocketLines, Tuples, Lines)


def _chunks(items: Sequence, n: int) -> list[Sequence]:
    size = max(1, -(-len(items) // max(1, n)))
    return [items[i:i + size] for i in range(0, len(items), size)] or [items]


def _files(source) -> list[str]:
    files = stream_files(source.path)
    if source.glob:
        files = [f for f in files if fnmatch.fnmatch(os.path.basename(f), source.glob)]
    return files


def _located(records, source: str, offset: int = 0, index: int = 0) -> Iterator:
    """(tuple, source name, line, source index), RejectedRecords and Punctuations (lines moved by ``offset``)."""
    for record in records:
        if record.__class__ is RejectedRecord:
            yield record if not offset else RejectedRecord(record.source, record.line + offset, record.text,
                                                           record.reason)
        elif record.__class__ is Punctuation:
            yield Punctuation(record.time, index)
        else:
            yield record[0], source, record[1] + offset, index


def _file_batches(source, read_file) -> Iterator[Iterator]:
    files = _files(source)
    per = source.files_per_batch or max(1, len(files))
    for i in range(0, max(1, len(files)), per):
        yield chain.from_iterable(read_file(f) for f in files[i:i + per])


def _rdf_file(file: str, rdf_format: str | None, source_index: int = 0) -> Iterator:
    from srtopo.io.rdf import rdf_file_to_lines
    with open(file, "rb") as handle:
        content = handle.read().decode("utf-8", errors="replace")
    for index, line, reason in rdf_file_to_lines(file, content, rdf_format):
        if reason is not None:
            yield RejectedRecord(file, index, line, reason)
        else:
            yield from _located(tnt_records([line], file), file, index - 1, source_index)


def _socket_lines(host: str, port: int) -> Iterator[str]:
    try:
        conn = socket.create_connection((host, port))
    except OSError as error:
        raise StreamInputError(f"cannot connect to tcp://{host}:{port}: {error}") from None
    with conn:
        yield from decoded_lines(fd_lines(conn.fileno(), idle=interrupt.check))


def _unnumbered(records) -> Iterator:
    """A socket's records: its rejected records have no line (as on Spark); its tuples keep their arrival
    number (a role assertion's two tuples are one rejected record)."""
    for record in records:
        if record.__class__ is RejectedRecord:
            record = RejectedRecord(record.source, None, record.text, record.reason)
        yield record


def tuple_batches(source, index: int = 0) -> Iterator[Iterator]:
    """The batches of a tuple source: each an iterator of (tuple, source name, line, ``index``), RejectedRecord
    or Punctuation (whose ``line`` is ``index``), in the source's order."""
    if isinstance(source, TntFiles) and source.path == "-":     # standard input: one batch, read as it comes
        return iter([_located(tnt_records(decoded_lines(fd_lines(sys.stdin.fileno(), idle=interrupt.check)),
                                          "<stdin>", True), "<stdin>", 0, index)])
    if isinstance(source, TntFiles):
        return _file_batches(source, lambda f: _located(tnt_records(file_lines(f), f, True), f, 0, index))
    if isinstance(source, TupleFiles):
        return _file_batches(source, lambda f: _located(tuple_records(file_lines(f), f), f, 0, index))
    if isinstance(source, RdfFiles):
        return _file_batches(source, lambda f: _rdf_file(f, source.rdf_format, index))
    if isinstance(source, SocketLines):
        name = source.describe()
        return iter([_unnumbered(_located(tnt_records(_socket_lines(source.host, source.port), name, True), name, 0,
                                          index))])
    if isinstance(source, Tuples):
        def records(chunk, start):
            for i, (s, c, t) in enumerate(chunk, start + 1):
                yield StreamTuple(s, c, int(t), c), source.name, i, index
        batches, start = [], 0
        for chunk in _chunks(source.records, source.batches):
            batches.append(records(chunk, start))
            start += len(chunk)
        return iter(batches)
    if isinstance(source, Lines):
        batches, start = [], 0
        for chunk in _chunks(source.lines, source.batches):
            batches.append(_located(tnt_records(chunk, source.name, True), source.name, start, index))
            start += len(chunk)
        return iter(batches)
    raise UnsupportedByRunner(f"the local runner does not read {type(source).__name__} sources")


#: the sources of RDF statements this module reads (timestamped N-Triples)
STATEMENT_SOURCES = (TntFiles, SocketLines, Lines)


def statement_batches(source, index: int = 0, first_time: int | None = None) -> Iterator[Iterator]:
    """The batches of a source of statements (``tnt_statements``, with ``first_time``): each an iterator of
    (statement, source name, line, ``index``), RejectedRecord or Punctuation (whose ``line`` is ``index``), in the
    source's order."""
    def statements(lines, name):
        return tnt_statements(lines, name, True, first_time)
    if isinstance(source, TntFiles) and source.path == "-":
        return iter([_located(statements(decoded_lines(fd_lines(sys.stdin.fileno(), idle=interrupt.check)),
                                         "<stdin>"), "<stdin>", 0, index)])
    if isinstance(source, TntFiles):
        return _file_batches(source, lambda f: _located(statements(file_lines(f), f), f, 0, index))
    if isinstance(source, SocketLines):
        name = source.describe()
        return iter([_unnumbered(_located(statements(_socket_lines(source.host, source.port), name), name, 0,
                                          index))])
    if isinstance(source, Lines):
        batches, start = [], 0
        for chunk in _chunks(source.lines, source.batches):
            batches.append(_located(statements(chunk, source.name), source.name, start, index))
            start += len(chunk)
        return iter(batches)
    raise UnsupportedByRunner(f"{type(source).__name__} sources hold no RDF statements",
                              hint="give timestamped N-Triples: a .tnt file or directory, tcp://HOST:PORT or lines")


def merged(batches: list) -> Iterable:
    """One batch of several sources, merged by event time (rejected records and punctuation go as soon as they
    come). Each source's records keep their order: lateness is decided in it (``ir.lateness``)."""
    if len(batches) == 1:
        return batches[0]
    return heapq.merge(*batches, key=lambda item: item[0].time if item.__class__ is tuple else float("-inf"))
