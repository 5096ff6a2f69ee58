"""The canonical stream format: timestamped N-Triples (``.tnt``), and its mapping to tuples.

One statement per line: an integer event time, a tab (or spaces), an N-Triples statement. Blank lines
and ``#`` comments are skipped. ``LINE_PATTERN`` is written in the regex dialect shared by Python
and Java, so the Spark runner parses lines with the same expression inside the JVM.

Mapping (the consistency semantics of docs/consistency.md): ``x rdf:type C`` -> (x, C, t); ``P(a, b)`` -> (a, exists P, t) and
(b, exists P^-, t); a literal object gives only (a, exists P, t). Subjects are IRIs (without
brackets) or ``_:label`` blank nodes.
"""
from __future__ import annotations

import os
import re
import stat
from typing import Iterable, Iterator, NamedTuple

from srtopo.concepts import RDF_TYPE, exists, exists_inverse, is_exists
from srtopo.errors import StreamInputError
from srtopo.ir.records import RejectedRecord, Statement, StreamTuple

# Every class below is spelled out in ASCII so that Python's ``re`` and Java's ``java.util.regex`` accept
# exactly the same lines: ``\s`` is Unicode whitespace in Python but ASCII in Java, ``$`` also matches before
# a final line terminator (Java: also before \r, \u0085, \u2028, \u2029), so the pattern ends with
# ``(?![\s\S])`` (true end of input in both dialects). Spelled-out classes are also what Java's regex
# compiles into one bit-set lookup per character (a class with ``\s`` in it is a chain of predicates).
WS_CHARS = " \t\r\f\x0b"
WS = r"[ \t\r\f\x0b]"
#: IRIREF of N-Triples 1.1 without UCHAR escapes (a backslash in an IRI is rejected). The controls are listed one by
#: one: Java then compiles the class into one bit-set lookup per character (a range beside the single characters
#: is a union of predicates, ~2x the cost). U+FFFD never matches: it is what undecodable bytes become, and a line
#: holding it is rejected as not UTF-8 (``decoded_lines``) - excluding it here lets the JVM reader look for it
#: only in lines that did not match
IRI_CHARS = r'[^<>"{}|^`\\' + "".join(rf"\x{i:02x}" for i in range(0x21)) + r"\ufffd]"
BNODE = r"_:[A-Za-z0-9_][A-Za-z0-9_.\-]*"
#: STRING_LITERAL_QUOTE with ECHAR / UCHAR escapes, then an optional language tag or datatype IRI. Written as
#: runs of plain characters between escapes, each run possessive: Java matches a repeated group by recursion, one
#: frame per repetition, so ``(?:char|escape)*`` overflowed the JVM's stack on literals of a few thousand
#: characters (a failed Spark task) and cost Python ~300 bytes per character; a possessive run of one class is
#: a loop in both dialects, and the group now repeats once per escape
_PLAIN = r'[^"\\\r\n\ufffd]*+'
_ESCAPE = r'\\[tbnrf"' + r"'" + r'\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}'
LITERAL = (rf'"{_PLAIN}(?:(?:{_ESCAPE}){_PLAIN})*+"'
           rf"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^<{IRI_CHARS}*>)?")
#: groups: 1 time; subject 2 IRI (no brackets) or 3 blank node; 4 predicate IRI; object 5 IRI, 6 blank node
#: or 7 literal (exactly one of each alternative is set). A ``#`` comment may follow the final dot, as N-Triples
#: allows
LINE_PATTERN = (rf"^{WS}*(-?[0-9]+)[\t ]+(?:<({IRI_CHARS}*)>|({BNODE})){WS}+<({IRI_CHARS}*)>{WS}+"
                rf"(?:<({IRI_CHARS}*)>|({BNODE})|({LITERAL})){WS}*\.{WS}*(?:#[^\n]*)?(?![\s\S])")
_LINE = re.compile(LINE_PATTERN)

# The same language in RE2's dialect (pyarrow.compute's regular expressions), for the columnar reader
# (``io.tntarrow``). RE2 has neither possessive quantifiers nor lookahead: a possessive run of one character class
# that is always followed by a character outside it (a literal's plain run, before a backslash or a quote) matches
# what the greedy run matches, and ``(?![\s\S])`` is ``\z``. Its groups are named and hold the terms as written:
# t time, s subject (``<iri>`` or a blank node), p predicate (``<iri>``), o object IRI or blank node, l literal.
# ``tests/io/test_tntarrow.py`` checks the two patterns against each other on random and hostile lines.
_IRI_RE2 = IRI_CHARS.replace(r"\ufffd", r"\x{fffd}")
_LITERAL_RE2 = (r'"[^"\\\r\n\x{fffd}]*(?:(?:' + _ESCAPE + r')[^"\\\r\n\x{fffd}]*)*"'
                rf"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^<{_IRI_RE2}*>)?")
LINE_PATTERN_RE2 = (rf"^{WS}*(?P<t>-?[0-9]+)[\t ]+(?P<s><{_IRI_RE2}*>|{BNODE}){WS}+(?P<p><{_IRI_RE2}*>){WS}+"
                    rf"(?:(?P<o><{_IRI_RE2}*>|{BNODE})|(?P<l>{_LITERAL_RE2})){WS}*\.{WS}*(?:#[^\n]*)?\z")
#: the canonical form ``format_tnt`` writes, with an IRI object and a time of at most 18 digits (always within 64
#: bits), a trailing CR allowed: a part of LINE_PATTERN's language in which the terms lie between the line's one
#: tab and its first three spaces (IRIs hold neither), so that a reader finds them without a regular expression
CANONICAL_PATTERN_RE2 = rf"^-?[0-9]{{1,18}}\t<{_IRI_RE2}*> <{_IRI_RE2}*> <{_IRI_RE2}*> \.\r*\z"
#: a punctuation line ``# watermark T``: its source sends no more tuples older than T (Zaniolo's Streamlog);
#: (?!...): end of input, see WS
PUNCT_PATTERN = r"^[ \t]*#[ \t]*watermark[ \t]+(-?[0-9]+)[ \t\r]*(?![\s\S])"
_PUNCT = re.compile(PUNCT_PATTERN)


class Punctuation(NamedTuple):
    """A ``# watermark T`` line: the source's floor rises to T (``ir.lateness``)."""
    time: int
    line: int


#: event times are 64-bit integers on every runner (Spark: BIGINT)
TIME_MIN, TIME_MAX = -(2 ** 63), 2 ** 63 - 1
OUT_OF_RANGE = "event time out of range"


def _term(term: str) -> str:
    return term[1:-1] if term.startswith("<") else term


#: why a line is rejected (the Spark source's parser gives the same reasons)
NO_TIME = "does not start with an integer event time"
NO_STATEMENT = "no N-Triples statement after the event time"
NO_DOT = "N-Triples statement does not end with ' .'"
INVALID = ("not a valid N-Triples statement (subject: IRI or blank node; predicate: IRI; object: IRI, blank node "
           "or literal)")
LITERAL_TYPE = "rdf:type with a literal object"
IRI_ESCAPE = ("an IRI holds a backslash: IRIs take no \\uXXXX escapes here (write the character itself, as "
              "N-Triples allows)")
#: an IRI with a backslash in it (both regex dialects read it alike)
IRI_ESCAPE_PATTERN = r"<[^<>\\]*\\[^<>]*>"


def reject_reason(line: str) -> str:
    """Best-effort explanation for a line that does not match LINE_PATTERN."""
    stripped = line.strip(WS_CHARS)
    head = re.split(WS + "+", stripped, maxsplit=1) if stripped else []
    if not head or not re.fullmatch(r"-?[0-9]+", head[0]):
        return NO_TIME
    if len(head) == 1:
        return NO_STATEMENT
    if not stripped.endswith("."):
        return NO_DOT
    if re.search(IRI_ESCAPE_PATTERN, stripped):
        return IRI_ESCAPE
    return INVALID


def tuples_of_statement(time: int, subject: str, predicate: str, obj: str) -> list[StreamTuple]:
    """The mapping of one statement (terms as written: ``<iri>``, ``_:b`` or a quoted literal)."""
    literal = obj.startswith('"')
    tuples = _tuples(time, _term(subject), predicate, None if literal else _term(obj))
    if tuples is None:
        raise StreamInputError(f"rdf:type with a literal object: {subject} {obj}")
    return tuples


def _tuples(time: int, subject: str, predicate: str, obj: str | None) -> list[StreamTuple] | None:
    """The mapping on bare terms (IRIs without brackets); ``obj`` is None for a literal; None if unmapped."""
    if predicate == RDF_TYPE:
        if obj is None:
            return None
        return [StreamTuple(subject, obj, time, obj)]
    out = [StreamTuple(subject, exists(predicate), time, exists(predicate))]
    if obj is not None:
        out.append(StreamTuple(obj, exists_inverse(predicate), time, exists_inverse(predicate)))
    return out


def tnt_records(lines: Iterable[str], source: str = "<stream>",
                punctuation: bool = False) -> Iterator[tuple[StreamTuple, int] | RejectedRecord | Punctuation]:
    """(tuple, line number) for every tuple of a stream, a RejectedRecord for every malformed line, in order;
    with ``punctuation`` also a Punctuation for every ``# watermark T`` line (T within 64 bits)."""
    for item in tnt_statements(lines, source, punctuation):
        if item.__class__ is tuple:        # (statement, line number): its tuples, by the mapping
            statement, number = item
            for found in statement_tuples(statement):
                yield found, number
        else:
            yield item


#: why a chain rejects a statement before an event time of 0 (the program's time points start there)
NEGATIVE_TIME = "event time before 0: a program's time points start at 0"


def tnt_statements(lines: Iterable[str], source: str = "<stream>", punctuation: bool = False,
                   first_time: int | None = None) -> Iterator[tuple[Statement, int] | RejectedRecord | Punctuation]:
    """(statement, line number) for every statement of a stream, a RejectedRecord for every line the consistency
    reader rejects (``tnt_records``: the same lines, the same reasons), in order; with ``punctuation`` also a
    Punctuation for every ``# watermark T`` line; with ``first_time`` a statement before it is rejected too
    (``NEGATIVE_TIME``: a chain's program has no time point before 0)."""
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if isinstance(raw, NotUtf8) or REPLACEMENT in line:
            yield RejectedRecord(source, number, line, NOT_UTF8)
            continue
        stripped = line.strip(WS_CHARS)
        if not stripped:
            continue
        if stripped.startswith("#"):
            if punctuation and (found := _PUNCT.match(line)) is not None \
                    and TIME_MIN <= (time := int(found.group(1))) <= TIME_MAX:
                yield Punctuation(time, number)
            continue
        match = _LINE.match(line)
        if match is None:
            yield RejectedRecord(source, number, line, reject_reason(line))
            continue
        time, s_iri, s_bnode, predicate, o_iri, o_bnode, literal = match.groups()
        time = int(time)
        if not TIME_MIN <= time <= TIME_MAX:
            yield RejectedRecord(source, number, line, OUT_OF_RANGE)
            continue
        obj = o_iri if o_iri is not None else o_bnode
        if obj is None and predicate == RDF_TYPE:
            yield RejectedRecord(source, number, line, LITERAL_TYPE)
            continue
        if first_time is not None and time < first_time:
            yield RejectedRecord(source, number, line, NEGATIVE_TIME)
            continue
        yield Statement(time, s_iri if s_iri is not None else s_bnode, predicate, obj, literal), number


def statement_tuples(statement: Statement) -> list[StreamTuple]:
    """The stream tuples of a statement (the mapping of the module docstring)."""
    return _tuples(statement.time, statement.subject, statement.predicate, statement.object)


def parse_tnt_lines(lines: Iterable[str], source_name: str = "<stream>",
                    rejected: list[RejectedRecord] | None = None) -> Iterator[StreamTuple]:
    """The tuples of a stream; malformed lines go to ``rejected`` (when given)."""
    for record in tnt_records(lines, source_name):
        if isinstance(record, RejectedRecord):
            if rejected is not None:
                rejected.append(record)
        else:
            yield record[0]


class NotUtf8(str):
    """A line whose bytes are not UTF-8 (decoded with U+FFFD for the bad bytes): rejected, never fatal."""


NOT_UTF8 = "not UTF-8 text"
#: what a decoder writes for bytes it cannot read (Spark's text source does): a line holding it is not UTF-8
REPLACEMENT = "\ufffd"


def decoded_lines(raw_lines: Iterable[bytes]) -> Iterator[str]:
    """Lines of bytes as text: a byte-order mark before the first line is dropped, a line that is not UTF-8 comes
    back as ``NotUtf8`` (for the reader to reject, never a crash, never silently altered)."""
    for number, raw in enumerate(raw_lines):
        try:
            yield raw.decode("utf-8-sig" if number == 0 else "utf-8")
        except UnicodeDecodeError:
            yield NotUtf8(raw.decode("utf-8", errors="replace"))


def fd_lines(fd: int, idle=None, poll: float = 0.25) -> Iterator[bytes]:
    """The lines (bytes, each with its newline but the last) of a file descriptor: standard input or a socket.

    Read with ``os.read``, not a buffered reader: a thread blocked in a buffered read holds its lock, and an
    interpreter that exits meanwhile (Ctrl-C) aborts with "Fatal Python error: _enter_buffered_busy". Waits
    are ``select`` calls of ``poll`` seconds; after each of them and after each read, ``idle()`` (when given)
    runs: the place for a stopped run to unwind. A line of any length is found in time linear in its length."""
    import select
    pending = bytearray()
    while True:
        if idle is not None:
            ready = False
            while not ready:
                ready = bool(select.select([fd], [], [], poll)[0])
                if not ready:
                    idle()
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:             # a non-blocking pipe with nothing to read after all
            continue
        if idle is not None:
            idle()
        if not chunk:
            if pending:
                yield bytes(pending)
            return
        scan = len(pending)
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", scan)) >= 0:
            yield bytes(pending[start:end + 1])
            start = scan = end + 1
        del pending[:start]


def file_lines(file: str) -> Iterator[str]:
    """The lines of a stream file, split at \\n only (a lone \\r is whitespace, as in the Spark source: text-mode
    open() would also break lines at a lone \\r and number them differently).

    A named pipe (or a terminal) is read as standard input is (``fd_lines``), so Ctrl-C stops a run waiting on
    it. It is opened non-blocking: on Linux such a pipe reads as ready only once a writer has written or gone,
    so the run waits for its first writer and ends when the last one closes."""
    if stat.S_ISREG(os.stat(file).st_mode):
        with open(file, "rb") as handle:
            yield from decoded_lines(handle)
        return
    from srtopo import interrupt
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
    try:
        yield from decoded_lines(fd_lines(fd, idle=interrupt.check))
    finally:
        os.close(fd)


def read_tnt(path: str, rejected: list[RejectedRecord] | None = None) -> Iterator[StreamTuple]:
    """The tuples of a ``.tnt`` file or of every file of a directory (sorted by name)."""
    from srtopo.io.sources import stream_files
    if not os.path.exists(path):
        raise StreamInputError(f"stream file not found: {path}", hint="give a .tnt file or a directory of them")
    for file in stream_files(path):
        yield from parse_tnt_lines(file_lines(file), file, rejected)


def format_tnt(time: int, subject: str, predicate: str, obj: str) -> str:
    """One canonical line; terms are IRIs (or ``_:`` blank nodes / quoted literals passed as is)."""
    def term(t: str) -> str:
        return t if t.startswith(("_:", '"')) else f"<{t}>"
    return f"{time}\t{term(subject)} <{predicate}> {term(obj)} ."


def write_tnt(directory: str, items: Iterable, *, per_file: int | None = None, time_points_per_file: int | None = None,
              first_mtime: float = 1_600_000_000, prefix: str = "part") -> list[str]:
    """Write a stream as ``.tnt`` files in ``directory``: ``per_file`` lines a file, or one file per
    ``time_points_per_file`` time points (else one file). Items are lines, (time, subject, predicate, object)
    or StreamTuples of named classes (written as rdf:type). Files get modification times ``first_mtime``,
    +1 s, +2 s, ...: Spark's file source reads files in modification-time order."""
    os.makedirs(directory, exist_ok=True)
    files: list[str] = []
    handle = None
    current = None
    count = 0
    try:
        for item in items:
            text = _line_of(item)
            if per_file:
                key = count // per_file
            elif time_points_per_file:
                key = int(text.split(None, 1)[0]) // time_points_per_file
            else:
                key = 0
            if key != current:
                if handle is not None:
                    handle.close()
                files.append(os.path.join(directory, f"{prefix}-{len(files):06d}.tnt"))
                handle = open(files[-1], "w", encoding="utf-8")
                current = key
            handle.write(text + "\n")
            count += 1
    finally:
        if handle is not None:
            handle.close()
    for i, path in enumerate(files):
        os.utime(path, (first_mtime + i, first_mtime + i))
    return files


def _line_of(item) -> str:
    if isinstance(item, StreamTuple):
        if is_exists(item.concept):
            raise StreamInputError(f"{item.concept}: only tuples of named classes are written as rdf:type lines",
                                   hint="write role tuples as (time, subject, property, object)")
        return format_tnt(item.time, item.subject, RDF_TYPE, item.concept)
    if isinstance(item, tuple):
        return format_tnt(*item)
    return item
