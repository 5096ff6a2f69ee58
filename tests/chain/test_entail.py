"""The saturation stage's tables from an OWL file, checked by hand: the role hierarchy the loader keeps (a
sub-property of an inverse, equivalent, inverse and symmetric properties, one-property chains), the object
properties it knows (data properties, declared or read from their context, are none), and lookup tables of one
row per class and property."""
from __future__ import annotations

from srtopo.chain import saturation_stage
from srtopo.consistency import load_tbox

X = "http://ex.org/x#"
TTL = f"""@prefix : <{X}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<http://ex.org/x> a owl:Ontology .
:A a owl:Class . :B a owl:Class . :C a owl:Class .
:parentOf a owl:ObjectProperty ; rdfs:domain :A .
:childOf a owl:ObjectProperty ; rdfs:subPropertyOf [ owl:inverseOf :parentOf ] .
:knows a owl:ObjectProperty, owl:SymmetricProperty .
:meets a owl:ObjectProperty ; owl:equivalentProperty :sees .
:sees a owl:ObjectProperty ; rdfs:range :B .
:likes a owl:ObjectProperty ; owl:propertyChainAxiom ( :loves ) .
:loves a owl:ObjectProperty .
:age a owl:DatatypeProperty ; rdfs:domain :A .
:height rdfs:domain :C .
:C rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :height ; owl:someValuesFrom xsd:integer ] .
"""


def test_role_hierarchy_and_object_properties_from_owl(tmp_path):
    path = tmp_path / "x.ttl"
    path.write_text(TTL, encoding="utf-8")
    tbox = load_tbox(str(path))
    assert tbox.object_properties == {X + p for p in ("parentOf", "childOf", "knows", "meets", "sees", "likes",
                                                      "loves")}
    stage = saturation_stage(tbox)
    props = {p: (forward, backward, domains, ranges) for p, forward, backward, domains, ranges in stage.properties}
    # a childOf b: b parentOf a, so b is an A (parentOf's domain) and a childOf's range is A too
    assert props[X + "childOf"] == ((), (X + "parentOf",), (), (X + "A",))
    assert props[X + "parentOf"] == ((), (), (X + "A",), ())
    assert props[X + "knows"] == ((), (X + "knows",), (), ())                 # symmetric: b knows a
    assert props[X + "meets"] == ((X + "sees",), (), (), (X + "B",))
    assert props[X + "sees"] == ((X + "meets",), (), (), (X + "B",))
    assert props[X + "loves"] == ((X + "likes",), (), (), ())                 # a chain of one property
    assert X + "age" not in props and X + "height" not in props             # data properties: themselves only
    assert len(stage.properties) == len(props)
