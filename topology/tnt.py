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

from ontology.model import exists, exists_inverse

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

IRI = r'<([^<>"{}|^`\\\s]*)>'
BNODE = r'(_:[A-Za-z0-9_][A-Za-z0-9_.\-]*)'
LITERAL = r'("(?:[^"\\\r\n]|\\.)*"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^<[^<>"{}|^`\\\s]*>)?)'
#: group 1 time, 2 subject term, 3 predicate IRI, 4 object term
LINE_PATTERN = (r'^\s*(-?[0-9]+)[\t ]+(<[^<>"{}|^`\\\s]*>|_:[A-Za-z0-9_][A-Za-z0-9_.\-]*)\s+'
                r'<([^<>"{}|^`\\\s]*)>\s+'
                r'(<[^<>"{}|^`\\\s]*>|_:[A-Za-z0-9_][A-Za-z0-9_.\-]*|'
                r'"(?:[^"\\\r\n]|\\.)*"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^<[^<>"{}|^`\\\s]*>)?)'
                r'\s*\.\s*$')
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
    stripped = line.strip()
    head = stripped.split(None, 1)
    if not head or not re.fullmatch(r"-?[0-9]+", head[0]):
        return "does not start with an integer event time"
    if len(head) == 1:
        return "no N-Triples statement after the event time"
    if not stripped.endswith("."):
        return "N-Triples statement does not end with ' .'"
    return "not a valid N-Triples statement (subject: IRI or blank node; predicate: IRI; object: IRI, blank node or literal)"


def tuples_of_statement(time: int, subject: str, predicate: str, obj: str) -> list[StreamTuple]:
    """DESIGN section 3 mapping of one statement (terms as matched by LINE_PATTERN)."""
    s = _term(subject)
    if predicate == RDF_TYPE:
        if obj.startswith('"'):
            raise ValueError("rdf:type with a literal object")
        c = _term(obj)
        return [StreamTuple(s, c, time, c)]
    out = [StreamTuple(s, exists(predicate), time, exists(predicate))]
    if not obj.startswith('"'):
        out.append(StreamTuple(_term(obj), exists_inverse(predicate), time, exists_inverse(predicate)))
    return out


def parse_tnt_lines(lines: Iterable[str], source_name: str = "<stream>",
                    rejected: list[RejectedRecord] | None = None) -> Iterator[StreamTuple]:
    """Yield tuples; malformed lines go to ``rejected`` (or raise nothing and are counted there)."""
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            if rejected is not None:
                rejected.append(RejectedRecord(source_name, number, line, reject_reason(line)))
            continue
        time, subject, predicate, obj = match.groups()
        try:
            yield from tuples_of_statement(int(time), subject, predicate, obj)
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
        try:
            with open(file, encoding="utf-8") as handle:
                yield from parse_tnt_lines(handle, file, rejected)
        except UnicodeDecodeError as error:
            raise StreamInputError(f"{file}: not UTF-8 text ({error.reason} at byte {error.start})",
                                   hint="the stream must be timestamped N-Triples in UTF-8") from None


def format_tnt(time: int, subject: str, predicate: str, obj: str) -> str:
    """One canonical line; terms are IRIs (or ``_:`` blank nodes / quoted literals passed as is)."""
    def term(t: str) -> str:
        return t if t.startswith(("_:", '"')) else f"<{t}>"
    return f"{time}\t{term(subject)} <{predicate}> {term(obj)} ."
