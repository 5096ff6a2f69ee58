"""Stream records: a line of an I-DLV-sr log (``<timestamp> atom; atom; ...``), of JSON (``{"time": t, "atoms":
[...]}``) or of timestamped N-Triples, as a ``Record`` of parsed atoms, or rejected as a whole with its reason
(nothing of a malformed record reaches clingo); the stream goes on."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from srtopo.io.tnt import LINE_PATTERN, NOT_UTF8, REPLACEMENT, NotUtf8
from srtopo.ir.records import RejectedRecord
from srtopo.logic.atoms import (
    RecordError, atom_fields, canonical_fields, parse_atom, split_atoms, statement_atom)
from srtopo.rules.timestamps import GIVEN, NUMBER, TimeBase, parse_timestamp, stamp_kind, stamp_value

_TNT_LINE = re.compile(LINE_PATTERN)


@dataclass(frozen=True)
class Record:
    line: int
    time: int
    timestamp: str | None
    atoms: tuple
    text: str = ""
    whole: bool = False     # the record is its time point whole (a log line), not one of its records (JSON)
    source: str | None = None   # the file it came from when its stream is a directory
    given: bool = False     # its time point is given (JSON, .tnt), not counted from the first record's timestamp


Reject = Callable[[RejectedRecord], None]


def collector(rejected) -> Reject:
    """A list to append to, or a callable, or None (rejected records are dropped)."""
    if rejected is None:
        return lambda record: None
    if isinstance(rejected, list):
        return rejected.append
    return rejected


#: a log line's marker that it ends its time point (I-DLV-sr's ``@end;`` for fragmented time points)
END_MARK = "@end"


def parse_line(line: str, kind: str, duplicates: bool = False):
    """One log line (``kind`` log) or JSON line (jsonl): (time kind, time value, timestamp text, atoms, whole),
    the time value being the JSON record's time point or the timestamp as ``stamp_value``; RecordError if
    malformed. ``whole``: the record completes its time point in its source. As in I-DLV-sr, a log line is a
    time point whole, unless ``duplicates`` (I-DLV-sr's ``--t-duplicate``) lets several lines make one time
    point, which then ends with a line carrying ``@end`` or when a later time point arrives. A JSON record is
    one of possibly several of its time point, unless it says ``"end": true``."""
    if kind == "jsonl":
        time, stamp_text, atoms, end = _json_record(line, 0)
        return GIVEN, time, stamp_text, atoms, end
    if kind == "tnt":       # one statement of a time point (several may follow)
        time, atom = _tnt_record(line)
        return GIVEN, time, None, (atom,), False
    stamp_text, stamp, rest = _log_parts(line)
    pieces = split_atoms(rest)
    end = END_MARK in pieces
    atoms = tuple(parse_atom(a) for a in pieces if a != END_MARK)
    return stamp_kind(stamp), stamp, stamp_text, atoms, end or not duplicates


def _log_parts(line: str) -> tuple:
    """A log line's timestamp text, timestamp and the text of its atoms."""
    stamp_text, _, rest = line.strip().partition(" ")
    if "\t" in stamp_text:
        stamp_text, _, more = stamp_text.partition("\t")
        rest = more + " " + rest
    return stamp_text, parse_timestamp(stamp_text), rest


_TNT_START = re.compile(r"^[ \t]*-?[0-9]+[\t ]+(?:<|_:)")


def line_kind(line: str, fmt: str) -> str:
    """The format of a line: ``fmt``, or with ``detect``: jsonl (``{``), tnt (an integer time then ``<`` or
    ``_:``, which no log atom starts with), else log."""
    if fmt != "detect":
        return fmt
    if line.lstrip().startswith("{"):
        return "jsonl"
    return "tnt" if _TNT_START.match(line) else "log"


def _tnt_record(line: str):
    from srtopo.io.tnt import reject_reason
    match = _TNT_LINE.match(line)
    if match is None:
        raise RecordError(reject_reason(line))
    time, s_iri, s_bnode, predicate, o_iri, o_bnode, literal = match.groups()
    time = int(time)
    if abs(time) >= 2 ** 62:
        raise RecordError(f"time point {time} is beyond 2^62")
    obj = o_iri if o_iri is not None else o_bnode
    return time, statement_atom(s_iri if s_iri is not None else s_bnode, predicate, obj, literal, _STRINGS)


#: the String symbols of the IRIs of statements read so far (``logic.atoms.triple_atom``: predicates and classes
#: recur on nearly every line)
_STRINGS: dict = {}


def record_row(raw: str, fmt: str, duplicates: bool = False):
    """A line as a distributed runner stores it before time points are known: None for a blank line, else
    (time kind, time value, timestamp text, [(predicate "p/n", atom text, [argument texts])], whole, reason); a
    malformed line has only the reason. The atom texts are printed from parsed Symbols."""
    line = raw.rstrip("\r\n")
    if not line.strip():
        return None
    if REPLACEMENT in line:       # Spark's text source decodes bytes that are not UTF-8 as U+FFFD
        return None, None, None, None, None, NOT_UTF8
    try:
        kind = line_kind(line, fmt)
        rows = None
        if kind == "log":       # most log lines are atoms as clingo prints them: no need to parse and print
            stamp_text, value, rest = _log_parts(line)
            # without strings, and every piece a plain atom (brackets balanced), ';' splits as split_atoms does
            pieces = split_atoms(rest) if '"' in rest else [p for p in (s.strip() for s in rest.split(";")) if p]
            end = END_MARK in pieces
            rows = canonical_fields([p for p in pieces if p != END_MARK] if end else pieces)
            kind, whole = stamp_kind(value), end or not duplicates
        if rows is None:
            kind, value, stamp_text, atoms, whole = parse_line(line, kind, duplicates)
            rows = [atom_fields(a) for a in atoms]
    except RecordError as error:
        return None, None, None, None, None, error.message
    return kind, value if kind in (NUMBER, GIVEN) else stamp_value(value), stamp_text, rows, whole, None


def read_records(lines: Iterable[str], unit: str = "sec", fmt: str = "detect", rejected=None,
                 source: str = "<stream>", duplicates: bool = False, number_unit: str | None = None) -> Iterator[Record]:
    """Parse log or JSON lines (``fmt``: detect per line, log, jsonl; ``duplicates`` as in ``parse_line``);
    malformed lines become RejectedRecords (appended to ``rejected``, a list, or passed to it, a callable) and
    are skipped. ``lines`` may also be (file, line number, text) triples (``open_lines`` of a directory)."""
    reject = collector(rejected)
    timeline = TimeBase(unit, number_unit)
    for number, raw in enumerate(lines, start=1):
        file = None
        if isinstance(raw, tuple):
            file, number, raw = raw
        line = raw.rstrip("\r\n")
        if isinstance(raw, NotUtf8) or REPLACEMENT in line:
            reject(RejectedRecord(file or source, number, line[:2000], NOT_UTF8))
            continue
        if not line.strip():
            continue
        try:
            time_kind, value, stamp_text, atoms, whole = parse_line(line, line_kind(line, fmt), duplicates)
            time = value if time_kind == GIVEN else timeline.time_point(value)
            if time < 0:
                raise RecordError(f"time point {time} is before the first record")
        except RecordError as error:
            reject(RejectedRecord(file or source, number, line[:2000], error.message))
            continue
        yield Record(number, time, stamp_text, atoms, line[:2000], whole, file, time_kind == GIVEN)


def _json_record(line: str, number: int):
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as error:
        raise RecordError(f"invalid JSON ({error.msg})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("time"), int) or isinstance(obj.get("time"), bool):
        raise RecordError('expected {"time": <int>, "atoms": [...]}')
    if abs(obj["time"]) >= 2 ** 62:
        raise RecordError(f"time point {obj['time']} is beyond 2^62")
    atoms = obj.get("atoms", [])
    if not isinstance(atoms, list) or not all(isinstance(a, str) for a in atoms):
        raise RecordError('"atoms" must be a list of strings')
    stamp = obj.get("timestamp")
    end = obj.get("end", False)
    if not isinstance(end, bool):
        raise RecordError('"end" must be true or false')
    return obj["time"], stamp if isinstance(stamp, str) else None, tuple(parse_atom(a) for a in atoms), end
