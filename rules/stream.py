"""Stream input (I-DLV-sr logs, JSON lines; files, stdin or a TCP socket) and JSON-lines output.

Every stream atom is parsed by ``clingo.parse_term`` and only the resulting Symbol is used, so stream text
never becomes program text. A malformed record is rejected as a whole (nothing of it reaches clingo),
counted, and reported with its line number; the stream goes on.
"""
from __future__ import annotations

import json
import re
import socket
import sys
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Callable, Iterable, Iterator

from clingo import Symbol, SymbolType, parse_term

from srtopo.errors import StreamInputError
from srtopo.rules.ir import CLINGO_INT_MAX, RESERVED, UNIT_SECONDS
from srtopo.topology.records import RejectedRecord
from srtopo.topology.tnt import NOT_UTF8, NotUtf8, decoded_lines, file_lines


class RecordError(StreamInputError):
    """One stream record is malformed (reason in the message); the record is rejected, the stream goes on."""


@dataclass(frozen=True)
class Record:
    line: int
    time: int
    timestamp: str | None
    atoms: tuple
    text: str = ""


Reject = Callable[[RejectedRecord], None]


def _collector(rejected) -> Reject:
    """A list to append to, or a callable, or None (rejected records are dropped)."""
    if rejected is None:
        return lambda record: None
    if isinstance(rejected, list):
        return rejected.append
    return rejected


def _quiet(_code, _message):
    pass


_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
_INTEGER = re.compile(r"(-?)\b(\d+)\b")


def _integer_beyond_clingo(text: str) -> str | None:
    """The first integer literal outside strings that clingo cannot hold, or None."""
    for sign, digits in _INTEGER.findall(_STRING.sub('""', text)):
        if int(digits) > CLINGO_INT_MAX + (1 if sign else 0):
            return sign + digits
    return None


def parse_atom(text: str) -> Symbol:
    """One ground atom, parsed as a clingo term; anything else is a RecordError."""
    text = text.strip()
    if not text:
        raise RecordError("empty atom")
    try:
        sym = parse_term(text, logger=_quiet)
    except (RuntimeError, UnicodeDecodeError):    # clingo's message may quote text it cannot decode back
        raise RecordError(f"'{_short(text)}' is not a ground atom") from None
    if sym.type != SymbolType.Function or not sym.name or not sym.positive:
        raise RecordError(f"'{_short(text)}' is not an atom")
    if sym.name.startswith(RESERVED):
        raise RecordError(f"'{_short(text)}' uses the reserved prefix '{RESERVED}'")
    too_large = _integer_beyond_clingo(text)
    if too_large is not None:
        raise RecordError(f"'{_short(text)}': the integer {too_large} is beyond clingo's 32-bit integers "
                          f"(write it as a string: \"{too_large}\")")
    return sym


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def split_atoms(text: str) -> list[str]:
    """Split ``a(1); b("x;y"); c`` at top-level ';' (not inside strings or brackets)."""
    out, depth, start, in_str, i = [], 0, 0, False, 0
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            out.append(text[start:i])
            start = i + 1
        i += 1
    out.append(text[start:])
    return [p for p in (s.strip() for s in out) if p]


def parse_timestamp(text: str):
    """ISO date-time (``2021-05-17T13:38:27``, seconds optional) or a plain number of time units."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise RecordError(f"bad timestamp '{_short(text)}'") from None


class Timeline:
    """Turns timestamps into time points: units elapsed since the first record's timestamp."""

    def __init__(self, unit: str = "sec"):
        if unit not in UNIT_SECONDS:
            raise StreamInputError(f"unknown time unit '{unit}'", hint="use " + ", ".join(sorted(UNIT_SECONDS)))
        self.unit = Fraction(UNIT_SECONDS[unit])
        self.first = None

    def time_point(self, stamp) -> int:
        if self.first is None:
            self.first = stamp
        if isinstance(stamp, int) != isinstance(self.first, int):
            raise RecordError("timestamp kind differs from the first record's (date-time vs number)")
        if isinstance(stamp, int):
            return stamp - self.first
        delta = stamp - self.first
        micro = Fraction(delta.days * 86400 * 10**6 + delta.seconds * 10**6 + delta.microseconds, 10**6)
        return int((micro / self.unit) // 1)


def read_records(lines: Iterable[str], unit: str = "sec", fmt: str = "detect", rejected=None,
                 source: str = "<stream>") -> Iterator[Record]:
    """Parse log or JSON lines (``fmt``: detect per line, log, jsonl); malformed lines become RejectedRecords
    (appended to ``rejected``, a list, or passed to it, a callable) and are skipped."""
    reject = _collector(rejected)
    timeline = Timeline(unit)
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if isinstance(raw, NotUtf8):
            reject(RejectedRecord(source, number, line[:2000], NOT_UTF8))
            continue
        if not line.strip():
            continue
        kind = fmt if fmt != "detect" else ("jsonl" if line.lstrip().startswith("{") else "log")
        try:
            if kind == "jsonl":
                record = _json_record(line, number)
                time = record[0]
            else:
                stamp_text, _, rest = line.strip().partition(" ")
                if "\t" in stamp_text:
                    stamp_text, _, more = stamp_text.partition("\t")
                    rest = more + " " + rest
                stamp = parse_timestamp(stamp_text)
                atoms = tuple(parse_atom(a) for a in split_atoms(rest))
                time = timeline.time_point(stamp)
                record = (time, stamp_text, atoms)
            if time < 0:
                raise RecordError(f"time point {time} is before the first record")
        except RecordError as error:
            reject(RejectedRecord(source, number, line[:2000], error.message))
            continue
        yield Record(number, record[0], record[1], record[2], line[:2000])


def _json_record(line: str, number: int):
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as error:
        raise RecordError(f"invalid JSON ({error.msg})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("time"), int) or isinstance(obj.get("time"), bool):
        raise RecordError('expected {"time": <int>, "atoms": [...]}')
    atoms = obj.get("atoms", [])
    if not isinstance(atoms, list) or not all(isinstance(a, str) for a in atoms):
        raise RecordError('"atoms" must be a list of strings')
    stamp = obj.get("timestamp")
    return obj["time"], stamp if isinstance(stamp, str) else None, tuple(parse_atom(a) for a in atoms)


def time_points(records: Iterable[Record], rejected=None, source: str = "<stream>"):
    """Group records into consecutive time points 0, 1, 2, ...; gaps become empty time points.

    A time point is complete when a record of a later time point arrives (or the input ends), so records
    with the same time point are merged; a record for an already completed time point is rejected."""
    reject = _collector(rejected)
    pending_time, pending_atoms, pending_stamp = None, [], None
    next_time = 0
    for rec in records:
        if pending_time is not None and rec.time == pending_time:
            pending_atoms.extend(rec.atoms)
            continue
        if rec.time < next_time or (pending_time is not None and rec.time < pending_time):
            reject(RejectedRecord(source, rec.line, rec.text, f"time point {rec.time} arrives after time point "
                                  f"{pending_time if pending_time is not None else next_time - 1}"))
            continue
        if pending_time is not None:
            yield pending_time, pending_stamp, pending_atoms
            next_time = pending_time + 1
        while next_time < rec.time:
            yield next_time, None, []
            next_time += 1
        pending_time, pending_atoms, pending_stamp = rec.time, list(rec.atoms), rec.timestamp
    if pending_time is not None:
        yield pending_time, pending_stamp, pending_atoms


def open_lines(spec: str) -> Iterator[str]:
    """``-`` = stdin, ``tcp://host:port`` = connect and read lines, otherwise a file path."""
    if spec == "-":
        yield from decoded_lines(sys.stdin.buffer)
        return
    if spec.startswith("tcp://"):
        host, _, port = spec[len("tcp://"):].rpartition(":")
        try:
            conn = socket.create_connection((host or "127.0.0.1", int(port)))
        except (OSError, ValueError) as error:
            raise StreamInputError(f"cannot connect to {spec}: {error}") from None
        with conn, conn.makefile("rb") as handle:
            yield from decoded_lines(handle)
        return
    try:
        yield from file_lines(spec)
    except OSError as error:
        raise StreamInputError(f"cannot read stream: {error.strerror}", file=spec) from None


def timeline_points(source, unit: str, sink, counters) -> Iterator[tuple[int, str | None, list]]:
    """(time point, timestamp, atoms) of an atom source (``topology.sources.AtomLog`` or ``Timeline``); rejected
    records go to ``sink.reject`` and are counted in ``counters.malformed``."""
    from srtopo.topology.sources import AtomLog

    def reject(record: RejectedRecord) -> None:
        counters.malformed += 1
        sink.reject(record)

    if isinstance(source, AtomLog):
        records = read_records(open_lines(source.spec), unit=unit, fmt=source.stream_format, rejected=reject,
                               source=source.spec)
        yield from time_points(records, reject, source.spec)
        return
    for number, texts in enumerate(source.points):
        try:
            atoms = [parse_atom(text) for text in texts]
        except RecordError as error:
            reject(RejectedRecord(source.name, number + 1, "; ".join(texts)[:2000], error.message))
            atoms = []
        yield number, None, atoms
