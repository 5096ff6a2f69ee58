"""Where a run's input comes from: runner-neutral descriptions that every runner reads in its own way.

Consistency topologies read stream tuples: timestamped N-Triples files (:class:`TntFiles`), tab-separated
tuple files (:class:`TupleFiles`), RDF graph files (:class:`RdfFiles`), lines from a TCP socket
(:class:`SocketLines`), Spark's synthetic rate source (:class:`Rate`), or records held in memory
(:class:`Tuples`, :class:`Lines`: what tests feed every runner). Rule topologies read atoms: an I-DLV-sr
log or JSON lines (:class:`AtomLog`) or time points held in memory (:class:`Timeline`).

``files_per_batch`` (and ``batches`` for records in memory) cuts the input into micro-batches: Spark's
``maxFilesPerTrigger``; the local runner times and reports the same batches.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from srtopo.errors import StreamInputError


@dataclass(frozen=True)
class TntFiles:
    """A ``.tnt`` file, or a directory of them (Spark watches it for new files)."""
    path: str
    files_per_batch: int | None = None
    glob: str | None = None

    def describe(self) -> str:
        return f"tnt:{self.path}"


@dataclass(frozen=True)
class TupleFiles:
    """Tab-separated tuples ``time<TAB>subject<TAB>concept`` (a file or a directory): the IR's input without RDF
    (any concept string, e.g. ``exists-:P``)."""
    path: str
    files_per_batch: int | None = None
    glob: str | None = None

    def describe(self) -> str:
        return f"tsv:{self.path}"


@dataclass(frozen=True)
class RdfFiles:
    """A directory of RDF files in any format rdflib reads, one timestamped graph per file (``io.rdf``)."""
    path: str
    rdf_format: str | None = None
    files_per_batch: int | None = None
    glob: str | None = None

    def describe(self) -> str:
        return f"rdf{'[' + self.rdf_format + ']' if self.rdf_format else ''}:{self.path}"


@dataclass(frozen=True)
class SocketLines:
    """Timestamped N-Triples lines from a TCP socket (not replayable: no exactly-once, no line numbers)."""
    host: str
    port: int

    def describe(self) -> str:
        return f"tcp://{self.host}:{self.port}"


@dataclass(frozen=True)
class Rate:
    """Spark's rate source as synthetic tuples (benchmarks): row v -> subject v*7919 mod n_subjects, concept
    ``concepts[hash(v) mod len]``, time v div rows_per_time_unit."""
    rows_per_second: int
    concepts: tuple[str, ...]
    n_subjects: int = 10000
    rows_per_time_unit: int = 1000

    def describe(self) -> str:
        return f"rate:{self.rows_per_second}/s"


@dataclass(frozen=True)
class Tuples:
    """(subject, concept, time) tuples held in memory, cut into ``batches`` micro-batches of equal size."""
    records: tuple[tuple[str, str, int], ...]
    batches: int = 1
    name: str = "<tuples>"

    def describe(self) -> str:
        return f"{self.name} ({len(self.records)} tuples)"


@dataclass(frozen=True)
class Lines:
    """Timestamped N-Triples lines held in memory (malformed ones included), cut into ``batches``."""
    lines: tuple[str, ...]
    batches: int = 1
    name: str = "<lines>"

    def describe(self) -> str:
        return f"{self.name} ({len(self.lines)} lines)"


@dataclass(frozen=True)
class AtomLog:
    """An I-DLV-sr log (``<timestamp> atom; atom; ...``) or JSON lines (``{"time": t, "atoms": [...]}``):
    a file, a directory of such files (Spark), ``-`` for standard input (local), or ``tcp://HOST:PORT``.
    ``stream_format``: detect (per line), log, jsonl, tnt (statements as ``triple/3`` atoms). ``duplicates``: several log lines may make one time point
    (I-DLV-sr's ``--t-duplicate``; ``rules.log.parse_line``)."""
    spec: str
    stream_format: str = "detect"
    files_per_batch: int | None = None          # a directory read by Spark: new files per micro-batch
    duplicates: bool = False

    def describe(self) -> str:
        return self.spec


@dataclass(frozen=True)
class Timeline:
    """Time points held in memory: the atoms (as text) of time point 0, 1, 2, ..."""
    points: tuple[tuple[str, ...], ...]
    name: str = "<timeline>"
    batches: int = 1

    def describe(self) -> str:
        return f"{self.name} ({len(self.points)} time points)"


STREAM_FORMATS = ("tnt", "tsv", "rdf")


@dataclass(frozen=True)
class FactLines:
    """Streamlog fact lines (``msg(3,red).``, ``#punctuation 7.``): a file, a directory of files, ``-`` for
    standard input, or ``tcp://HOST:PORT``. ``idle``: seconds after which a silent stream read live is
    punctuated at the largest timestamp another stream has reached (None: never). ``files_per_batch``: a
    directory read by Spark takes at most this many new files per micro-batch (the local runner reads lines as
    they come)."""
    spec: str
    idle: float | None = None
    files_per_batch: int | None = None

    def describe(self) -> str:
        return self.spec


def socket_address(spec: str) -> tuple[str, int]:
    """The host (default 127.0.0.1) and port of ``tcp://HOST:PORT``, as every command reads a socket."""
    host, _, port = spec[len("tcp://"):].rpartition(":")
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        raise StreamInputError(f"bad socket address {spec!r}", hint="write tcp://HOST:PORT") from None


def refuse_socket_spelling(spec: str | None) -> None:
    """``socket:HOST:PORT`` is refused with the spelling every command reads, so that it is never taken for a
    file path."""
    if isinstance(spec, str) and spec.startswith("socket:"):
        raise StreamInputError(f"{spec}: a socket is written tcp://HOST:PORT",
                               hint=f"write tcp://{spec[len('socket:'):]}")


def source_from_spec(spec: str, files_per_batch: int | None = None, stream_format: str = "tnt"):
    """``PATH`` (in ``stream_format``), ``tnt:PATH``, ``tsv:PATH``, ``rdf:PATH``, ``rdf[FORMAT]:PATH`` or
    ``tcp://HOST:PORT``."""
    if spec == "-":
        return TntFiles("-")
    refuse_socket_spelling(spec)
    if spec.startswith("tcp://"):
        return SocketLines(*socket_address(spec))
    head = spec.split("/", 1)[0]
    if ":" not in head or spec.startswith("/"):
        spec = {"tnt": "tnt:", "tsv": "tsv:", "rdf": "rdf:"}[stream_format] + spec
    if spec.startswith("rdf"):
        head, path = spec.split(":", 1)
        fmt = head[4:-1] if head.startswith("rdf[") and head.endswith("]") else None
        return RdfFiles(path, rdf_format=fmt, files_per_batch=files_per_batch)
    if spec.startswith("tsv:"):
        return TupleFiles(spec[4:], files_per_batch=files_per_batch)
    if spec.startswith("tnt:"):
        return TntFiles(spec[4:], files_per_batch=files_per_batch)
    raise StreamInputError(f"unknown stream source {spec!r}",
                           hint="give PATH, tnt:PATH, tsv:PATH, rdf:PATH, rdf[turtle]:PATH or tcp://HOST:PORT")


def require_path(source) -> None:
    """A file source whose path does not exist is a user error, not an empty stream; nor is a socket spelt
    ``socket:HOST:PORT``."""
    path = getattr(source, "path", None)
    refuse_socket_spelling(path)
    refuse_socket_spelling(getattr(source, "spec", None))
    if isinstance(source, AtomLog) and source.spec != "-":
        path = source.spec
    if path is not None and path != "-" and "://" not in path and not os.path.exists(path):
        raise StreamInputError(f"stream not found: {path}", hint="give a file or a directory of stream files")


def stream_files(path: str) -> list[str]:
    """A file, or the files of a directory (hidden and temporary files skipped) in the order every runner reads
    them (``file_order``): by modification time, then by name."""
    if os.path.isdir(path):
        files = [os.path.join(path, f) for f in os.listdir(path)
                 if not f.startswith((".", "_")) and os.path.isfile(os.path.join(path, f))]
        return sorted(files, key=file_order)
    return [path]


def file_order(path: str) -> tuple[int, str]:
    """A file's place in its directory's order: modification time in whole milliseconds (what Spark's file
    source sorts new files by), then the name (for files modified in the same millisecond)."""
    return os.stat(path).st_mtime_ns // 1_000_000, os.path.basename(path)
