"""Basic concepts as strings, the vocabulary shared by the ontology loader, the IR and every runner.

Strings travel cheaply through runners (and Spark columns): a named class is its IRI, ``exists P`` is
``"exists:" + IRI(P)`` and ``exists P^-`` is ``"exists-:" + IRI(P)``. Class IRIs are absolute, so the
prefixes cannot collide with them.
"""
from __future__ import annotations

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
#: the empty class: an individual asserted to be one is inconsistent whatever the TBox states
NOTHING = "http://www.w3.org/2002/07/owl#Nothing"
EXISTS = "exists:"
EXISTS_INV = "exists-:"


def exists(role: str) -> str:
    """The basic concept ``exists P`` (domain side of role P)."""
    return EXISTS + role


def exists_inverse(role: str) -> str:
    """The basic concept ``exists P^-`` (range side of role P)."""
    return EXISTS_INV + role


def is_exists(concept: str) -> bool:
    return concept.startswith(EXISTS) or concept.startswith(EXISTS_INV)


def role_of(concept: str) -> tuple[str, bool] | None:
    """(role IRI, inverse?) for an exists-concept, None for a named class."""
    if concept.startswith(EXISTS_INV):
        return concept[len(EXISTS_INV):], True
    if concept.startswith(EXISTS):
        return concept[len(EXISTS):], False
    return None


def local_name(iri: str) -> str:
    for sep in ("#", "/", ":"):
        if sep in iri:
            tail = iri.rsplit(sep, 1)[1]
            if tail:
                return tail
    return iri


def display(concept: str) -> str:
    """Short human name: ``Person``, ``exists teaches``, ``exists teaches^-``."""
    role = role_of(concept)
    if role is None:
        return local_name(concept)
    name, inverse = role
    return f"exists {local_name(name)}" + ("^-" if inverse else "")
