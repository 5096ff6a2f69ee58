"""A small university TBox and program for hand-checked chain cases (written here, read by the tests of the
local runner, of every runner and of the command line)."""
from __future__ import annotations

from srtopo.concepts import RDF_TYPE

U = "http://ex.org/u#"
TYPE = RDF_TYPE

TBOX = f"""@prefix : <{U}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<http://ex.org/u> a owl:Ontology .
:Person a owl:Class . :Student a owl:Class . :GradStudent a owl:Class . :Teacher a owl:Class .
:Course a owl:Class . :Pupil a owl:Class .
:GradStudent rdfs:subClassOf :Student .
:Student rdfs:subClassOf :Person .
:Teacher rdfs:subClassOf :Person .
:Pupil owl:equivalentClass :Student .
:Person owl:disjointWith :Course .
:takes a owl:ObjectProperty ; rdfs:domain :Student ; rdfs:range :Course .
:takesGrad a owl:ObjectProperty ; rdfs:subPropertyOf :takes .
:teaches a owl:ObjectProperty ; rdfs:domain :Teacher ; rdfs:range :Course ; owl:inverseOf :taughtBy .
:taughtBy a owl:ObjectProperty .
:advisor a owl:ObjectProperty .
:name a owl:DatatypeProperty ; rdfs:domain :Person .
"""

#: every statement the program receives, as t(S, P, O) (literals as clingo prints them)
PROGRAM = """t(S, P, O) :- triple(S, P, O).
any :- triple(S, P, O).
quiet :- not any.
#show t/3.
#show quiet/0.
"""


def line(t: int, s: str, p: str, o: str) -> str:
    """A .tnt line; ``o`` a local name (an individual or class of U) or a quoted literal."""
    obj = o if o.startswith('"') else f"<{U}{o}>"
    pred = p if p.startswith("http") else U + p
    return f"{t}\t<{U}{s}> <{pred}> {obj} ."


def atom(s: str, p: str, o: str) -> str:
    """The model's text of t(S, P, O) for local names (an object starting with a quote is a literal's string)."""
    pred = p if p.startswith("http") else U + p
    obj = o if o.startswith('"') else f'"{U}{o}"'
    return f't("{U}{s}","{pred}",{obj})'
