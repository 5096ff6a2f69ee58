"""The canonical stream format: timestamped N-Triples (``.tnt``), and its mapping to tuples.

One statement per line: an integer event time, a tab (or spaces), an N-Triples statement. Blank lines
and ``#`` comments are skipped. ``LINE_PATTERN`` is written in the regex dialect shared by Python
and Java, so the Spark runner parses lines with the same expression inside the JVM.

Mapping (DESIGN section 3): ``x rdf:type C`` -> (x, C, t); ``P(a, b)`` -> (a, exists P, t) and
(b, exists P^-, t); a literal object gives only (a, exists P, t). Subjects are IRIs (without
brackets) or ``_:label`` blank nodes.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable, Iterator, NamedTuple

from srtopo.ontology.model import exists, exists_inverse

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

# Every class below is spelled out in ASCII so that Python's ``re`` and Java's ``java.util.regex`` accept
# exactly the same lines: ``\s`` is Unicode whitespace in Python but ASCII in Java, ``$`` also matches before
# a final line terminator (Java: also before \r, \u0085, \u2028, \u2029), so the pattern ends with
# ``(?![\s\S])`` (true end of input in both dialects). Spelled-out classes are also what Java's regex
# compiles into one bit-set lookup per character (a class with ``\s`` in it is a chain of predicates).
WS_CHARS = " \t\r\f\x0b"
WS = r"[ \t\r\f\x0b]"
#: IRIREF of N-Triples 1.1 without UCHAR escapes (a backslash in an IRI is rejected)
IRI_CHARS = r'[^<>"{}|^`\\\x00-\x20]'
BNODE = r"_:[A-Za-z0-9_][A-Za-z0-9_.\-]*"
#: STRING_LITERAL_QUOTE with ECHAR / UCHAR escapes, then an optional language tag or datatype IRI
LITERAL = (r'"(?:[^"\\\r\n]|\\[tbnrf"' + r"'" + r'\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*"'
           rf"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^<{IRI_CHARS}*>)?")
#: groups: 1 time; subject 2 IRI (no brackets) or 3 blank node; 4 predicate IRI; object 5 IRI, 6 blank node
#: or 7 literal (exactly one of each alternative is set)
LINE_PATTERN = (rf"^{WS}*(-?[0-9]+)[\t ]+(?:<({IRI_CHARS}*)>|({BNODE})){WS}+<({IRI_CHARS}*)>{WS}+"
                rf"(?:<({IRI_CHARS}*)>|({BNODE})|({LITERAL})){WS}*\.{WS}*(?![\s\S])")
_LINE = re.compile(LINE_PATTERN)


class StreamTuple(NamedTuple):
    """(subject, concept, time) plus the concept as asserted (kept for report evidence)."""
    subject: str
    concept: str
    time: int
    asserted: str


@dataclass(frozen=True)
class RejectedRecord:
    """A stream record that could not be used: where it was, what it said, and why."""
    source: str
    line: int
    text: str
    reason: str

    def to_dict(self) -> dict:
        return {"source": self.source, "line": self.line, "text": self.text, "reason": self.reason}


def _term(term: str) -> str:
    return term[1:-1] if term.startswith("<") else term


def reject_reason(line: str) -> str:
    """Best-effort explanation for a line that does not match LINE_PATTERN."""
    stripped = line.strip(WS_CHARS)
    head = re.split(WS + "+", stripped, maxsplit=1) if stripped else []
    if not head or not re.fullmatch(r"-?[0-9]+", head[0]):
        return "does not start with an integer event time"
    if len(head) == 1:
        return "no N-Triples statement after the event time"
    if not stripped.endswith("."):
        return "N-Triples statement does not end with ' .'"
    return "not a valid N-Triples statement (subject: IRI or blank node; predicate: IRI; object: IRI, blank node or literal)"


def tuples_of_statement(time: int, subject: str, predicate: str, obj: str) -> list[StreamTuple]:
    """DESIGN section 3 mapping of one statement (terms as written: ``<iri>``, ``_:b`` or a quoted literal)."""
    literal = obj.startswith('"')
    return _tuples(time, _term(subject), predicate, None if literal else _term(obj))


def _tuples(time: int, subject: str, predicate: str, obj: str | None) -> list[StreamTuple]:
    """The mapping on bare terms (IRIs without brackets); ``obj`` is None for a literal."""
    if predicate == RDF_TYPE:
        if obj is None:
            raise ValueError("rdf:type with a literal object")
        return [StreamTuple(subject, obj, time, obj)]
    out = [StreamTuple(subject, exists(predicate), time, exists(predicate))]
    if obj is not None:
        out.append(StreamTuple(obj, exists_inverse(predicate), time, exists_inverse(predicate)))
    return out


def parse_tnt_lines(lines: Iterable[str], source_name: str = "<stream>",
                    rejected: list[RejectedRecord] | None = None) -> Iterator[StreamTuple]:
    """Yield tuples; malformed lines go to ``rejected`` (or raise nothing and are counted there)."""
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        stripped = line.strip(WS_CHARS)
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            if rejected is not None:
                rejected.append(RejectedRecord(source_name, number, line, reject_reason(line)))
            continue
        time, s_iri, s_bnode, predicate, o_iri, o_bnode, _literal = match.groups()
        subject = s_iri if s_iri is not None else s_bnode
        obj = o_iri if o_iri is not None else o_bnode
        try:
            yield from _tuples(int(time), subject, predicate, obj)
        except ValueError as error:
            if rejected is not None:
                rejected.append(RejectedRecord(source_name, number, line, str(error)))


def stream_files(path: str) -> list[str]:
    """A file, or the files of a directory (sorted by name; hidden and temporary files skipped)."""
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path)
                      if not f.startswith((".", "_")) and os.path.isfile(os.path.join(path, f)))
    return [path]


def read_tnt(path: str, rejected: list[RejectedRecord] | None = None) -> Iterator[StreamTuple]:
    from srtopo.errors import StreamInputError
    if not os.path.exists(path):
        raise StreamInputError(f"stream file not found: {path}", hint="give a .tnt file or a directory of them")
    for file in stream_files(path):
        # lines end at \n only (a lone \r is whitespace), as in the Spark source: text-mode open() would also
        # break lines at a lone \r and number them differently
        with open(file, "rb") as handle:
            yield from parse_tnt_lines((_utf8(file, number, raw) for number, raw in enumerate(handle, 1)),
                                       file, rejected)


def _utf8(file: str, number: int, raw: bytes) -> str:
    from srtopo.errors import StreamInputError
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StreamInputError(f"{file}:{number}: not UTF-8 text ({error.reason} at byte {error.start} of the line)",
                               hint="the stream must be timestamped N-Triples in UTF-8") from None


def format_tnt(time: int, subject: str, predicate: str, obj: str) -> str:
    """One canonical line; terms are IRIs (or ``_:`` blank nodes / quoted literals passed as is)."""
    def term(t: str) -> str:
        return t if t.startswith(("_:", '"')) else f"<{t}>"
    return f"{time}\t{term(subject)} <{predicate}> {term(obj)} ."
