"""Stream input (I-DLV-sr logs, JSON lines; files, stdin or a TCP socket) and JSON-lines output.

Every stream atom is parsed by ``clingo.parse_term`` and only the resulting Symbol is used, so stream text
never becomes program text. A malformed record is rejected as a whole (nothing of it reaches clingo),
counted, and reported with its line number; the stream goes on.
"""
from __future__ import annotations

import heapq
import json
import math
import os
import re
import socket
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from typing import Callable, Iterable, Iterator

from clingo import Function, Number, String, Symbol, SymbolType, parse_term

from srtopo import interrupt
from srtopo.errors import StreamInputError
from srtopo.io.tnt import LINE_PATTERN, NOT_UTF8, REPLACEMENT, NotUtf8, decoded_lines, fd_lines, file_lines
from srtopo.ir.lateness import SourceClock
from srtopo.ir.records import RejectedRecord
from srtopo.rules.ir import RESERVED, UNIT_SECONDS
from srtopo.terms import CLINGO_INT_MAX, split_top_level


class RecordError(StreamInputError):
    """One stream record is malformed (reason in the message); the record is rejected, the stream goes on."""


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
_TEN_DIGITS = re.compile(r"\d{10}")
_TNT_LINE = re.compile(LINE_PATTERN)


def _integer_beyond_clingo(text: str) -> str | None:
    """The first integer literal outside strings that clingo cannot hold, or None."""
    if not _TEN_DIGITS.search(text):       # 2^31 has ten digits: the common case costs one scan
        return None
    for sign, digits in _INTEGER.findall(_STRING.sub('""', text)):
        if int(digits) > CLINGO_INT_MAX + (1 if sign else 0):
            return sign + digits
    return None


def parse_atom(text: str) -> Symbol:
    """One ground atom, parsed as a clingo term; anything else is a RecordError."""
    text = text.strip()
    if not text:
        raise RecordError("empty atom")
    if "\x00" in text:         # clingo reads a C string: it would take the text up to the NUL as the atom
        raise RecordError(f"'{_short(text)}' holds a NUL character")
    try:
        sym = parse_term(text, logger=_quiet)
    except (RuntimeError, UnicodeDecodeError):    # clingo's message may quote text it cannot decode back
        if not _STRING.sub('""', text).isascii():
            raise RecordError(f"'{_short(text)}': clingo names are ASCII (write other text as a string: "
                              "b(\"café\"))") from None
        raise RecordError(f"'{_short(text)}' is not a ground atom") from None
    name = sym.name if sym.type == SymbolType.Function else ""
    if not name or not sym.positive:
        raise RecordError(f"'{_short(text)}' is not an atom")
    if name.startswith(RESERVED):
        raise RecordError(f"'{_short(text)}' uses the reserved prefix '{RESERVED}'")
    too_large = _integer_beyond_clingo(text)
    if too_large is not None:
        raise RecordError(f"'{_short(text)}': the integer {too_large} is beyond clingo's 32-bit integers "
                          f"(write it as a string: \"{too_large}\")")
    return sym


def atom_fields(sym: Symbol) -> tuple[str, str, list[str]]:
    """("p/n", text, argument texts) of a named function symbol. The text is assembled from the arguments'
    texts the way clingo prints a function term (``name(a1,...,an)``, ``-`` when negated): one string
    conversion per argument instead of two, which is most of the cost of turning atoms into rows."""
    name = sym.name
    args = [str(x) for x in sym.arguments]
    text = f"{name}({','.join(args)})" if args else name
    return f"{name}/{len(args)}", text if sym.positive else "-" + text, args


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def split_atoms(text: str) -> list[str]:
    """Split ``a(1); b("x;y"); c`` at top-level ';' (not inside strings or brackets)."""
    return [p for p in (s.strip() for s in split_top_level(text, ";")) if p]


def parse_timestamp(text: str):
    """ISO date-time (``2021-05-17T13:38:27``, seconds optional) or a plain number of time units (below 2^62
    in magnitude, as a JSON record's time: a mistyped number must not become a time point no engine can hold)."""
    try:
        number = int(text)
    except ValueError:
        pass
    else:
        if abs(number) >= 2 ** 62:
            raise RecordError(f"timestamp {_short(text)} is beyond 2^62")
        return number
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise RecordError(f"bad timestamp '{_short(text)}'") from None


class Timeline:
    """Turns timestamps into time points: units elapsed since the first record's timestamp. A numeric timestamp
    counts time points, or ``number_unit``s when given (I-DLV-sr's ``--t-format``)."""

    def __init__(self, unit: str = "sec", number_unit: str | None = None):
        for name in (unit, number_unit):
            if name is not None and name not in UNIT_SECONDS:
                raise StreamInputError(f"unknown time unit '{name}'", hint="use " + ", ".join(sorted(UNIT_SECONDS)))
        self.unit = Fraction(UNIT_SECONDS[unit])
        self.number_scale = None if number_unit is None else Fraction(UNIT_SECONDS[number_unit]) / self.unit
        self.first = None

    def time_point(self, stamp) -> int:
        if self.first is None:
            self.first = (stamp_kind(stamp), stamp_value(stamp))
        return time_point_of(self.first, stamp_kind(stamp), stamp_value(stamp), unit_micros(self.unit),
                             self.number_scale)


def time_point_of(first: tuple, kind: str, value: int, unit_us: int, number_scale: Fraction | None) -> int:
    """The time point of a timestamp (kind, value as ``stamp_value`` gives it) given the first record's: numbers
    count time points (or ``number_scale`` of them per number), date-times count ``unit_us`` microseconds.
    Raises RecordError when the two cannot be compared."""
    problem = stamp_mismatch(first[0], kind)
    if problem:
        raise RecordError(problem)
    delta = value - first[1]
    if kind == NUMBER:
        return delta if number_scale is None else math.floor(delta * number_scale)
    return delta // unit_us


#: kinds of record times: a number of time units, a date-time without / with a time zone, a JSON record's time
NUMBER, LOCAL_TIME, ZONED_TIME, GIVEN = "n", "d", "z", "j"
_EPOCH = datetime(1970, 1, 1)


def stamp_kind(stamp) -> str:
    if isinstance(stamp, int):
        return NUMBER
    return LOCAL_TIME if stamp.tzinfo is None else ZONED_TIME


def stamp_value(stamp) -> int:
    """A timestamp as an integer: the number itself, or microseconds since 1970-01-01 (UTC for zoned ones)."""
    if isinstance(stamp, int):
        return stamp
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(timezone.utc).replace(tzinfo=None)
    delta = stamp - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 10 ** 6 + delta.microseconds


def unit_micros(unit: Fraction) -> int:
    micros = Fraction(unit) * 10 ** 6
    if micros.denominator != 1:
        raise StreamInputError(f"a time unit of {unit} s is not a whole number of microseconds")
    return int(micros)


def stamp_mismatch(first: str, kind: str) -> str | None:
    """Why a record's timestamp cannot be compared with the first record's, or None."""
    if first == kind:
        return None
    if NUMBER in (first, kind):
        return "timestamp kind differs from the first record's (date-time vs number)"
    return "timestamp kind differs from the first record's (date-time with vs without a time zone)"


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


_ECHAR = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))')
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
XSD_INTEGERS = {"http://www.w3.org/2001/XMLSchema#" + t for t in
                ("integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
                 "nonPositiveInteger", "negativeInteger", "unsignedInt", "unsignedShort", "unsignedByte",
                 "unsignedLong")}


def _literal_symbol(text: str) -> Symbol:
    """An N-Triples literal as a clingo symbol: an integer datatype within clingo's range as a number, anything
    else as the string of its lexical form (language tag and datatype dropped)."""
    end = text.rindex('"')
    lexical = _ECHAR.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)) if (m.group(1) or m.group(2))
                         else _ECHARS[m.group(3)], text[1:end])
    datatype = text[end + 1:]
    if datatype.startswith("^^<") and datatype[3:-1] in XSD_INTEGERS:
        try:
            value = int(lexical.strip())
        except ValueError:
            value = None
        if value is not None and -CLINGO_INT_MAX - 1 <= value <= CLINGO_INT_MAX:
            return Number(value)
    return String(lexical)


def triple_atom(subject: str, predicate: str, obj: str | None, literal: str | None) -> Symbol:
    """The atom of an RDF statement: ``triple(S, P, O)``, IRIs (without brackets) and blank nodes (``_:b``) as
    strings, literals as ``_literal_symbol``."""
    return Function("triple", [String(subject), String(predicate),
                               _literal_symbol(literal) if obj is None else String(obj)])


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
    try:
        return time, triple_atom(s_iri if s_iri is not None else s_bnode, predicate, obj, literal)
    except (ValueError, OverflowError, UnicodeError, RuntimeError):    # an escape beyond Unicode, a surrogate
        raise RecordError(f"the literal {_short(literal or '')} has an escape that is not a character") from None


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


#: an atom in the form clingo prints it, with constant, integer and plain string arguments (``b(1,-2)``,
#: ``p(x,"a b")``): clingo parses such a text back to a symbol that prints as the same text, so the row fields
#: of a line made only of them are read off the text (``canonical_fields``)
_NAME = r"[a-z][A-Za-z0-9_']*"
_ARG = r'(?:0|-?[1-9][0-9]{0,9}|' + _NAME + r'|"[^"\\\x00-\x1f\x7f]*")'
_PLAIN_ATOM = re.compile(rf"({_NAME})(?:\(({_ARG}(?:,{_ARG})*)\))?")
_PLAIN_ARG = re.compile(_ARG)


def canonical_fields(pieces: list[str]) -> list | None:
    """The row fields (``atom_fields``) of the atoms ``pieces`` (texts from ``split_atoms``) when every one is
    an atom exactly as clingo prints it (integers within clingo's range), else None: the caller parses them
    with clingo. About six times cheaper than parsing and printing each atom (lines of thousands of atoms)."""
    out = []
    for text in pieces:
        match = _PLAIN_ATOM.fullmatch(text)
        if match is None:
            return None
        name, inner = match.groups()
        if inner is None:
            out.append((name + "/0", text, []))
            continue
        args = _PLAIN_ARG.findall(inner) if '"' in inner else inner.split(",")
        for arg in args:
            if len(arg) >= 10 and arg[-1].isdigit() and arg[0] in "-123456789" and abs(int(arg)) > CLINGO_INT_MAX:
                return None
        out.append((f"{name}/{len(args)}", text, args))
    return out


def read_records(lines: Iterable[str], unit: str = "sec", fmt: str = "detect", rejected=None,
                 source: str = "<stream>", duplicates: bool = False, number_unit: str | None = None) -> Iterator[Record]:
    """Parse log or JSON lines (``fmt``: detect per line, log, jsonl; ``duplicates`` as in ``parse_line``);
    malformed lines become RejectedRecords (appended to ``rejected``, a list, or passed to it, a callable) and
    are skipped. ``lines`` may also be (file, line number, text) triples (``open_lines`` of a directory)."""
    reject = _collector(rejected)
    timeline = Timeline(unit, number_unit)
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


def time_points(records: Iterable[Record], rejected=None, source: str = "<stream>", lateness: int | None = 0):
    """Group one source's records into consecutive time points 0, 1, 2, ... (see ``merged_time_points``)."""
    yield from merged_time_points([records], rejected, [source], lateness)


def merged_time_points(streams: list, rejected=None, names: list | None = None, lateness: int | None = 0):
    """(time point, timestamp, atoms) for time points 0, 1, 2, ... of several record streams merged by event time
    (``merged_points`` with its empty stretches spelled out)."""
    for point in merged_points(streams, rejected, names, lateness):
        if point.recorded:
            yield point.time, point.stamp, point.atoms
        else:
            for t in range(point.time, point.last + 1):
                yield t, None, []


@dataclass(frozen=True)
class Point:
    """A time point some record reached (``recorded``), or a stretch of empty time points ``time .. last``."""
    time: int
    stamp: str | None = None
    atoms: list = ()
    recorded: bool = True
    last: int | None = None


def merged_points(streams: list, rejected=None, names: list | None = None, lateness: int | None = 0,
                  max_gap: int | None = None):
    """The time points of several record streams merged by event time, in order: a ``Point`` per time point
    some record reached, one per stretch of empty time points between them (however long).

    Which records are late or too far ahead is decided record by record in each source's own order
    (``ir.lateness``: a record more than ``lateness`` behind the progress of its source, or more than
    ``max_gap`` ahead of its latest time point, is rejected). Time point t is evaluated once no unfinished source
    may still send a record for it: its latest time point less the lateness is above t, or with lateness 0 it
    has completed t by a record that is its time point whole (``Record.whole``: a log line, unless fragmented
    time points are allowed; ``SourceClock.bound``). A source that ended holds nothing back; ``lateness`` None
    waits for the end of input. Records of one time point are merged, gaps
    become empty time points. The timestamp of a time point is the one of its first record (by source, then
    line) that carries one. Sources are read in turn, one record at a time."""
    reject = _collector(rejected)
    names = names or ["<stream>"] * len(streams)
    iterators = [iter(s) for s in streams]
    clocks = [SourceClock() for _ in iterators]
    done = [False] * len(iterators)
    pending: dict[int, list] = {}          # time -> [stamp key, stamp, atoms]
    times: list[int] = []                  # a heap of the pending times
    closed = -1

    def close_upto(limit):
        nonlocal closed
        while closed < limit:
            upcoming = times[0] if times and times[0] <= limit else None
            if upcoming is None or upcoming > closed + 1:
                last = limit if upcoming is None else upcoming - 1
                yield Point(closed + 1, recorded=False, last=last)
                closed = last
                continue
            closed += 1
            heapq.heappop(times)
            entry = pending.pop(closed)
            yield Point(closed, entry[1], entry[2])

    while not all(done):
        for index, iterator in enumerate(iterators):
            if done[index]:
                continue
            rec = next(iterator, None)
            clock = clocks[index]
            if rec is None:
                done[index] = True
            elif (why := clock.late(rec.time, lateness) or clock.ahead(rec.time, max_gap)) is not None:
                reject(RejectedRecord(rec.source or names[index], rec.line, rec.text, why))
                continue
            else:
                clock.accept(rec.time, rec.whole)
                entry = pending.get(rec.time)
                if entry is None:
                    entry = pending[rec.time] = [None, None, []]
                    heapq.heappush(times, rec.time)
                entry[2].extend(rec.atoms)
                if rec.timestamp is not None and (entry[0] is None or (index, rec.line) < entry[0]):
                    entry[0], entry[1] = (index, rec.line), rec.timestamp
            if lateness is not None:
                open_sources = [clocks[i].bound(lateness) for i in range(len(iterators)) if not done[i]]
                if open_sources and all(t is not None for t in open_sources):
                    yield from close_upto(min(open_sources) - 1)
                elif not open_sources and pending:
                    yield from close_upto(max(pending))
    if pending:
        yield from close_upto(max(pending))


def timeline_json_lines(points) -> list[str]:
    """Time points held in memory as JSON lines ``{"time": t, "atoms": [...]}`` (what every runner reads)."""
    return [json.dumps({"time": t, "atoms": list(atoms)}, ensure_ascii=False) for t, atoms in enumerate(points)]


def open_lines(spec: str, idle=None) -> Iterator:
    """``-`` = stdin, ``tcp://host:port`` = connect and read lines, a file path, or a directory: the lines of its
    files in name order as (file, line number, text). ``idle``: called while standard input or a socket is silent
    (``io.tnt.fd_lines``)."""
    if spec == "-":
        yield from decoded_lines(fd_lines(sys.stdin.fileno(), idle=idle))
        return
    if spec.startswith("tcp://"):
        host, _, port = spec[len("tcp://"):].rpartition(":")
        try:
            conn = socket.create_connection((host or "127.0.0.1", int(port)))
        except (OSError, ValueError) as error:
            raise StreamInputError(f"cannot connect to {spec}: {error}") from None
        with conn:
            yield from decoded_lines(fd_lines(conn.fileno(), idle=idle))
        return
    if os.path.isdir(spec):
        from srtopo.io.sources import stream_files
        for file in stream_files(spec):
            try:
                for number, line in enumerate(file_lines(file), start=1):
                    yield file, number, line
            except OSError as error:
                raise StreamInputError(f"cannot read stream: {error.strerror}", file=file) from None
        return
    try:
        yield from file_lines(spec)
    except OSError as error:
        raise StreamInputError(f"cannot read stream: {error.strerror}", file=spec) from None


def timeline_points(sources, unit: str, sink, counters, lateness: int | None = 0, number_unit: str | None = None,
                    max_gap: int | None = None):
    """The ``Point``s of atom sources (``io.sources.AtomLog``, ``Timeline``, ``Lines``) merged by event
    time; rejected records go to ``sink.reject`` and are counted in ``counters.malformed`` or ``counters.late``."""
    from srtopo.io.sources import AtomLog, Lines, Timeline

    def reject(record: RejectedRecord) -> None:
        if record.reason.startswith("late: "):
            counters.late += 1
        else:
            counters.malformed += 1
        if record.source.startswith("tcp://"):     # a socket's lines are not numbered (as on Spark)
            record = RejectedRecord(record.source, None, record.text, record.reason)
        sink.reject(record)

    streams, names = [], []
    for source in sources:
        duplicates = False
        if isinstance(source, AtomLog):
            lines, fmt, name = open_lines(source.spec, interrupt.check), source.stream_format, source.spec
            duplicates = source.duplicates
        elif isinstance(source, Timeline):
            lines, fmt, name = timeline_json_lines(source.points), "jsonl", source.name
        elif isinstance(source, Lines):
            lines, fmt, name = source.lines, "detect", source.name
        else:
            raise StreamInputError(f"{type(source).__name__} is not a source of atoms")
        streams.append(read_records(lines, unit=unit, fmt=fmt, rejected=reject, source=name, duplicates=duplicates,
                                    number_unit=number_unit))
        names.append(name)
    yield from merged_points(streams, reject, names, lateness, max_gap)
