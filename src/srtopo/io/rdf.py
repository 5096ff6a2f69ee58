"""RDF graph files as a stream: one timestamped graph per file, in any format rdflib reads.

A file's statements become canonical ``.tnt`` lines (then parsed like any other stream), all at the graph's
event time: an integer ``prov:generatedAtTime`` (an ``xsd:dateTime`` counts in epoch seconds), else the last
integer in the file name (``obs-0042.ttl`` -> 42). A file rdflib cannot read, or without an event time, is one
rejected record.
"""
from __future__ import annotations

import os
import re

from srtopo.io.tnt import format_tnt

PROV_GENERATED = "http://www.w3.org/ns/prov#generatedAtTime"
TIME_IN_NAME = re.compile(r"(\d+)(?!.*\d)")


def graph_time(graph, file_name: str) -> int | None:
    """The graph's event time: an integer ``prov:generatedAtTime`` literal (an xsd:dateTime counts in
    epoch seconds), else the last integer in the file name (``obs-0042.ttl`` -> 42)."""
    import datetime

    from rdflib import URIRef
    for value in graph.objects(None, URIRef(PROV_GENERATED)):
        py = value.toPython() if hasattr(value, "toPython") else value
        if isinstance(py, bool):
            continue
        if isinstance(py, int):
            return int(py)
        if isinstance(py, datetime.datetime):
            if py.tzinfo is None:
                py = py.replace(tzinfo=datetime.timezone.utc)
            return int(py.timestamp())
        try:
            return int(str(py))
        except ValueError:
            continue
    match = TIME_IN_NAME.search(os.path.splitext(os.path.basename(file_name))[0])
    return int(match.group(1)) if match else None


def syntax_error(error: Exception, content: str) -> tuple[int, str]:
    """(line, why) of an rdflib parser's error, whichever parser raised it: Turtle, N3 and TriG (``BadSyntax``),
    RDF/XML (SAX), JSON-LD (json), N-Triples and N-Quads (the offending line quoted). Line 1 when none is said."""
    line, why = None, " ".join(str(error).split())
    args = getattr(error, "args", ())
    if type(error).__name__ == "BadSyntax" and len(args) >= 5:        # (uri, lines before, text, offset, why)
        line, why = int(args[1]) + 1, str(args[4])
    elif hasattr(error, "getLineNumber"):
        line, why = error.getLineNumber(), f"{error.getMessage()} (column {error.getColumnNumber() + 1})"
    elif isinstance(getattr(error, "lineno", None), int):
        line, why = error.lineno, str(getattr(error, "msg", why))
    elif why.startswith("Invalid line: "):
        bad = why[len("Invalid line: "):].strip()
        line = next((n for n, text in enumerate(content.splitlines(), 1) if " ".join(text.split()) == bad), None)
        why = "not an N-Triples statement"
    return (line if isinstance(line, int) and line > 0 else 1), " ".join(why.split())[:300]


def rdf_file_to_lines(file_name: str, content: str, rdf_format: str | None = None) -> list[tuple[int, str, str]]:
    """(index, tnt line, reason) for one RDF file; reason set (and line empty) when the file is unusable."""
    from rdflib import BNode, Graph, Literal
    from rdflib.util import guess_format
    fmt = rdf_format or guess_format(file_name) or "turtle"
    graph = Graph()
    try:
        graph.parse(data=content, format=fmt)
    except Exception as error:  # noqa: BLE001 - reported as a rejected record, never fatal
        line, why = syntax_error(error, content)
        lines = content.splitlines()
        excerpt = lines[line - 1][:200] if 0 < line <= len(lines) else content[:200]
        return [(line, excerpt, f"not parseable as {fmt}: {why}")]
    time = graph_time(graph, file_name)
    if time is None:
        return [(1, content[:200], "no event time: add prov:generatedAtTime or an integer to the file name")]
    out = []
    for i, (s, p, o) in enumerate(sorted(graph, key=lambda t: tuple(str(x) for x in t)), 1):
        if str(p) == PROV_GENERATED:
            continue
        def term(x):
            if isinstance(x, BNode):
                return f"_:{x}"
            if isinstance(x, Literal):
                return x.n3()
            return str(x)
        out.append((i, format_tnt(time, term(s), str(p), term(o)), None))
    return out
