"""Load a DL-Lite TBox from an OWL ontology in RDF (RDF/XML, Turtle, N-Triples) with rdflib.

OWL/XML files are read through owlready2, which hands rdflib the equivalent triples.

The mapping (docs/consistency.md has the table, construct by construct):
  ``owl_expressions``  class, property and data-range expressions parsed from the triples, each with its triples;
  ``owl_dllite``       what DL-Lite_R states of an expression on either side of ⊑ (and what it loses);
  ``owl_axioms``       each OWL 2 axiom to PIs and NIs, every part it cannot use listed as skipped with a reason;
  ``owl_accounting``   the triples no axiom used: declarations, annotations, or skipped (ABox, imports, unrecognised).
Every triple of the file is used or accounted for (``LoaderReport.accounting``): nothing is dropped silently,
and no construct is fatal. A file that is missing, not RDF, or RDF without any OWL class is an OntologyError
naming the file (and line, when the parser knows it).
"""
from __future__ import annotations

import logging
import os
import re

from rdflib import Graph

from srtopo.concepts import is_exists, role_of
from srtopo.consistency.owl_accounting import Leftovers
from srtopo.consistency.owl_axioms import AxiomMapper
from srtopo.consistency.owl_expressions import Vocabulary
from srtopo.consistency.tbox import LoaderReport, TBox, TripleAccounting
from srtopo.errors import OntologyError

_HINT = "give an OWL ontology serialised as RDF/XML, Turtle, N-Triples or OWL/XML"


# --- reading the file -------------------------------------------------------------------------------

def _guess_format(path: str, head: str) -> list[str]:
    ext = os.path.splitext(path)[1].lower()
    text = head.lstrip("\ufeff \t\r\n")
    if text.startswith("<"):
        if re.search(r"<(\w+:)?Ontology[\s>]", head) and "rdf:RDF" not in head and "RDF" not in head[:2000]:
            return ["owlxml"]
        return ["xml", "turtle"]
    if ext == ".nt":
        return ["nt", "turtle"]
    return ["turtle", "xml"] if ext not in (".owl", ".rdf", ".xml") else ["turtle", "xml"]


def _located(error: Exception) -> tuple[int | None, str]:
    """(line, message) from whatever rdflib or the XML parser raised."""
    line = None
    if hasattr(error, "getLineNumber"):
        try:
            line = int(error.getLineNumber())
        except Exception:   # noqa: BLE001 - best effort location only
            line = None
    argstr, index = getattr(error, "_str", None), getattr(error, "_i", None)   # rdflib's BadSyntax
    message = None
    if line is None and isinstance(argstr, (str, bytes)) and isinstance(index, int):
        text = argstr.decode("utf-8", "replace") if isinstance(argstr, bytes) else argstr
        line = text[:index].count("\n") + 1
        near = text[index:index + 40].split("\n")[0]
        message = f"{getattr(error, '_why', 'bad syntax')} near {near!r}"
    if message is None:
        message = error.getMessage() if hasattr(error, "getMessage") else str(error)
    if line is None:
        match = re.search(r"line (\d+)", str(message))
        if match:
            line = int(match.group(1))
    message = " ".join(str(message).split())
    message = re.sub(r"^file:///\S+?:\d+:\d+: ", "", message)
    if len(message) > 200:
        message = message[:200] + "..."
    return line, message


def _owlxml_as_ntriples(path: str) -> str:
    """OWL/XML is not RDF: owlready2 reads it and hands rdflib the equivalent triples."""
    import contextlib
    import io

    import owlready2
    world = owlready2.World()
    with contextlib.redirect_stderr(io.StringIO()):   # owlready2 prints parser tracebacks itself
        try:
            ontology = world.get_ontology("file://" + os.path.abspath(path)).load()
        except Exception as error:   # noqa: BLE001 - re-raised with a plain message
            match = re.search(r"(OWL/XML parsing error).*?(line \d+, column \d+)", str(error))
            text = f"{match.group(1)} at {match.group(2)}" if match else type(error).__name__
            raise ValueError(text) from None
    buffer = io.BytesIO()
    ontology.save(file=buffer, format="ntriples")
    return buffer.getvalue().decode("utf-8")


def read_graph(path: str) -> Graph:
    if not os.path.exists(path):
        raise OntologyError("file not found", file=path, hint="check the path given to --tbox")
    if os.path.isdir(path):
        raise OntologyError("is a directory, not an ontology file", file=path, hint=_HINT)
    with open(path, "rb") as handle:
        raw = handle.read(65536)
    if b"\x00" in raw:
        raise OntologyError("binary file, not an RDF ontology", file=path, hint=_HINT)
    head = raw.decode("utf-8", errors="replace")
    formats = _guess_format(path, head)
    first_error: tuple[int | None, str] | None = None
    for fmt in formats:
        graph = Graph()
        quiet = logging.getLogger("rdflib")
        level = quiet.level
        quiet.setLevel(logging.CRITICAL)   # rdflib logs noise while a wrong format is tried
        try:
            if fmt == "owlxml":
                graph.parse(data=_owlxml_as_ntriples(path), format="nt")
            else:
                graph.parse(path, format=fmt)
            return graph
        except OntologyError:
            raise
        except Exception as error:   # noqa: BLE001 - rdflib raises many types; we re-raise ours
            if first_error is None:
                first_error = _located(error)
        finally:
            quiet.setLevel(level)
    line, message = first_error or (None, "unknown parse error")
    name = {"xml": "RDF/XML", "turtle": "Turtle", "nt": "N-Triples", "owlxml": "OWL/XML"}[formats[0]]
    raise OntologyError(f"not readable as {name}: {message}", file=path, line=line, hint=_HINT)


# --- from triples to axioms -------------------------------------------------------------------------

def load_graph(graph: Graph, source: str, name: str | None = None) -> TBox:
    """The TBox of an ontology already parsed into ``graph``, with a loader report that accounts for every
    triple (see the module docstring and docs/consistency.md for the mapping)."""
    vocabulary = Vocabulary.of(graph)
    mapper = AxiomMapper(graph, vocabulary)
    mapper.run()
    used = frozenset(mapper.used)
    skipped = frozenset(mapper.skipped_triples) - used
    consumed = used | skipped | mapper.annotations
    leftovers = Leftovers(graph, vocabulary, consumed)
    leftovers.run()
    accounting = TripleAccounting(
        used=used, skipped=skipped | frozenset(leftovers.skipped_triples),
        declarations=frozenset(leftovers.declarations),
        annotations=frozenset(mapper.annotations - used - skipped) | frozenset(leftovers.annotations))
    has_owl = vocabulary.classes or mapper.pis or mapper.nis or vocabulary.ontologies
    if not has_owl:
        raise OntologyError(f"no OWL classes or axioms found ({len(graph)} triples)", file=source,
                            hint="is this an ontology? " + _HINT)
    # what the file declares and what its axioms use as classes and properties (a file need not declare them)
    classes = vocabulary.classes | mapper.parser.classes
    properties = vocabulary.object_properties | vocabulary.data_properties | mapper.parser.properties
    report = LoaderReport(
        source=source, classes=len(classes), properties=len(properties),
        pi_counts=tuple(sorted(mapper.pi_kinds.items())), ni_counts=tuple(sorted(mapper.ni_kinds.items())),
        skipped=tuple(mapper.skipped + leftovers.skipped), triples=accounting.counts(), accounting=accounting,
    )
    concepts = {c for pair in mapper.pis for c in pair} | {c for ni in mapper.nis for c in ni.pair}
    # object properties: declared, or read as roles (∃P, ∃P⁻) by an axiom, and no data property
    data = {str(p) for p in vocabulary.data_properties} | {str(p) for p in mapper.parser.data_roles}
    used = {role_of(c)[0] for c in concepts if is_exists(c)}
    objects = ({str(p) for p in vocabulary.object_properties} | used) - data
    return TBox.build(mapper.pis, mapper.nis, concepts={str(c) for c in vocabulary.classes},
                      role_inclusions=mapper.role_inclusions,
                      name=name or os.path.splitext(os.path.basename(source))[0], report=report,
                      roles=mapper.role_pis, object_properties=objects)


def load_tbox(path: str, name: str | None = None) -> TBox:
    """Read an OWL file into a TBox with a loader report (see module docstring for the mapping)."""
    return load_graph(read_graph(path), path, name)
