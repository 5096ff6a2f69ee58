"""One case per construct of "OWL 2 Web Ontology Language Mapping to RDF Graphs" (section 2, tables 1-18, and
the OWL 1 forms its reverse mapping meets in real files), with what the DL-Lite loader must make of it. The
expectations are worked out by hand from the semantics (docs/consistency.md has the same table in prose).

Each case is Turtle over the shared declarations of ``HEADER``; ``:`` is the case's own namespace, so that all
cases can be loaded as one graph without touching each other. Notation of the expectations:
``pis``  "A ⊑ B; ∃p ⊑ ∃q⁻" (∃p is ``exists:p``, ∃p⁻ ``exists-:p``); ``nis`` "A/B; A/∃p";
``skipped`` (kind, words of the reason) per skipped entry; ``triples`` the category of every triple of the case
(one name for all of them, or a count per category).
"""
from __future__ import annotations

from dataclasses import dataclass

HEADER = """
@prefix : <{ns}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:A a owl:Class . :B a owl:Class . :C a owl:Class . :D a owl:Class .
:p a owl:ObjectProperty . :q a owl:ObjectProperty .
:u a owl:DatatypeProperty . :v a owl:DatatypeProperty .
:ann a owl:AnnotationProperty .
:a a owl:NamedIndividual . :b a owl:NamedIndividual .
"""

FILLER = "the filler B is lost"
NOT_CONCEPTS = "data ranges are not concepts"
CHARACTERISTIC = "property characteristic outside DL-Lite"
ROLE_DISJOINT = "role disjointness"
ABOX = ("ABox assertion", "individuals in the ontology file are not checked")
UNRECOGNISED = ("unrecognised triple", "not an OWL 2 construct")


@dataclass(frozen=True)
class Case:
    name: str
    ttl: str
    pis: str = ""
    nis: str = ""
    skipped: tuple = ()
    triples: object = "used"


CASES = [
    # --- declarations (table 7), RDFS declarations and the ontology header (section 3.1) -------------------------
    Case("Declaration(Class) and the others", ":E a owl:Class . :r a owl:ObjectProperty . :w a owl:DatatypeProperty ."
         " :ann2 a owl:AnnotationProperty . :dt a rdfs:Datatype . :c a owl:NamedIndividual .",
         triples="declarations"),
    Case("RDFS declarations", ":F a rdfs:Class . :s a rdf:Property .", triples="declarations"),
    Case("OWL 1 deprecated entities", ":G a owl:DeprecatedClass . :t a owl:DeprecatedProperty .",
         triples="declarations"),
    Case("Ontology, versionIRI", ":ont a owl:Ontology ; owl:versionIRI :ont1 .",
         triples="declarations"),
    Case("ontology property declaration", ":op a owl:OntologyProperty .", triples="declarations"),
    Case("imports", ":ont a owl:Ontology ; owl:imports :other .",
         skipped=(("imports", "imported ontologies are not loaded"),), triples={"declarations": 1, "skipped": 1}),
    Case("ontology annotations", ':ont a owl:Ontology ; owl:versionInfo "1" ; owl:priorVersion :ont0 ;'
         ' owl:backwardCompatibleWith :ont0 ; owl:incompatibleWith :ontx ; rdfs:comment "c" ;'
         ' <http://purl.org/dc/terms/creator> "me" .',
         triples={"declarations": 1, "annotations": 6}),

    # --- annotations (section 2.3.1, tables 17-18) ---------------------------------------------------------------
    Case("annotation assertions", ':A rdfs:label "a" ; rdfs:comment "c" ; rdfs:seeAlso :B ; rdfs:isDefinedBy :B ;'
         ' owl:deprecated true ; :ann "x" .', triples="annotations"),
    Case("annotation with an anonymous value", ':A :ann [ rdfs:label "nested" ] .', triples="annotations"),
    Case("annotation property axioms", ":ann rdfs:subPropertyOf rdfs:comment ; rdfs:domain :A ; rdfs:range xsd:string"
         " .", triples="annotations"),
    Case("undeclared annotation property on a class", ':A <http://purl.org/dc/terms/source> "s" .',
         triples="annotations"),
    Case("annotated axiom (owl:Axiom)", ":A rdfs:subClassOf :B . [] a owl:Axiom ; owl:annotatedSource :A ;"
         ' owl:annotatedProperty rdfs:subClassOf ; owl:annotatedTarget :B ; rdfs:comment "why" .',
         pis="A ⊑ B", triples={"used": 1, "annotations": 5}),
    Case("annotation of an annotation (owl:Annotation)", "[] a owl:Annotation ; owl:annotatedSource :A ;"
         ' owl:annotatedProperty rdfs:label ; owl:annotatedTarget "a" ; rdfs:comment "on the label" .',
         triples="annotations"),
    Case("annotated multi-triple axiom", '[] a owl:AllDisjointClasses ; owl:members ( :A :B ) ; rdfs:comment "x" .',
         nis="A/B", triples={"used": 6, "annotations": 1}),

    # --- class expressions on the right of ⊑ (table 13) -----------------------------------------------------------
    Case("SubClassOf(named named)", ":A rdfs:subClassOf :B .", pis="A ⊑ B"),
    Case("SubClassOf(A owl:Thing)", ":A rdfs:subClassOf owl:Thing ."),
    Case("SubClassOf(A owl:Nothing)", ":A rdfs:subClassOf owl:Nothing .", nis="A/A"),
    Case("ObjectIntersectionOf", ":A rdfs:subClassOf [ a owl:Class ; owl:intersectionOf ( :B :C ) ] .",
         pis="A ⊑ B; A ⊑ C"),
    Case("ObjectIntersectionOf with a part outside DL-Lite", ":A rdfs:subClassOf [ owl:intersectionOf ( :B"
         " [ a owl:Restriction ; owl:onProperty :p ; owl:allValuesFrom :C ] ) ] .", pis="A ⊑ B",
         skipped=(("subClassOf", "a universal restriction ∀R.B on the right"),)),
    Case("ObjectUnionOf on the right", ":A rdfs:subClassOf [ a owl:Class ; owl:unionOf ( :B :C ) ] .",
         skipped=(("subClassOf", "a union on the right"),), triples="skipped"),
    Case("ObjectUnionOf with owl:Thing on the right", ":A rdfs:subClassOf [ owl:unionOf ( :B owl:Thing ) ] ."),
    Case("ObjectComplementOf", ":A rdfs:subClassOf [ a owl:Class ; owl:complementOf :B ] .", nis="A/B"),
    Case("ObjectComplementOf of a union", ":A rdfs:subClassOf [ owl:complementOf [ owl:unionOf ( :B :C ) ] ] .",
         nis="A/B; A/C"),
    Case("ObjectComplementOf of a complement", ":A rdfs:subClassOf [ owl:complementOf [ owl:complementOf :B ] ] .",
         pis="A ⊑ B"),
    Case("ObjectComplementOf of an intersection", ":A rdfs:subClassOf [ owl:complementOf [ owl:intersectionOf"
         " ( :B :C ) ] ] .", skipped=(("subClassOf", "the complement of an intersection"),), triples="skipped"),
    Case("ObjectOneOf", ":A rdfs:subClassOf [ a owl:Class ; owl:oneOf ( :a :b ) ] .",
         skipped=(("subClassOf", "owl:oneOf) on the right"),), triples="skipped"),
    Case("ObjectSomeValuesFrom owl:Thing", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:someValuesFrom owl:Thing ] .", pis="A ⊑ ∃p"),
    Case("ObjectSomeValuesFrom B", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:someValuesFrom :B ] .", pis="A ⊑ ∃p", skipped=(("subClassOf", FILLER),)),
    Case("ObjectSomeValuesFrom owl:Nothing", ":A rdfs:subClassOf [ owl:onProperty :p ; owl:someValuesFrom"
         " owl:Nothing ] .", nis="A/A"),
    Case("ObjectInverseOf in a restriction", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty"
         " [ owl:inverseOf :p ] ; owl:someValuesFrom owl:Thing ] .", pis="A ⊑ ∃p⁻"),
    Case("ObjectAllValuesFrom", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ; owl:allValuesFrom :B"
         " ] .", skipped=(("subClassOf", "a universal restriction ∀R.B on the right"),), triples="skipped"),
    Case("ObjectAllValuesFrom owl:Thing", ":A rdfs:subClassOf [ owl:onProperty :p ; owl:allValuesFrom owl:Thing"
         " ] ."),
    Case("ObjectHasValue", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ; owl:hasValue :a ] .",
         pis="A ⊑ ∃p", skipped=(("subClassOf", "the value a is lost"),)),
    Case("ObjectHasSelf", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ; owl:hasSelf true ] .",
         pis="A ⊑ ∃p; A ⊑ ∃p⁻", skipped=(("subClassOf", "the loop is lost"),)),
    Case("ObjectMinCardinality 1", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         ' owl:minCardinality "1"^^xsd:nonNegativeInteger ] .', pis="A ⊑ ∃p"),
    Case("ObjectMinCardinality 2", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:minCardinality 2 ] .", pis="A ⊑ ∃p", skipped=(("subClassOf", "the number"),)),
    Case("ObjectMinCardinality 0", ":A rdfs:subClassOf [ owl:onProperty :p ; owl:minCardinality 0 ] ."),
    Case("ObjectMaxCardinality 0", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:maxCardinality 0 ] .", nis="A/∃p"),
    Case("ObjectMaxCardinality 1", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:maxCardinality 1 ] .", skipped=(("subClassOf", "≤n R on the right"),), triples="skipped"),
    Case("ObjectExactCardinality 1", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:cardinality 1 ] .", pis="A ⊑ ∃p", skipped=(("subClassOf", "the upper bound"),)),
    Case("ObjectExactCardinality 0", ":A rdfs:subClassOf [ owl:onProperty :p ; owl:cardinality 0 ] .",
         nis="A/∃p"),
    Case("ObjectMinCardinality qualified", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:minQualifiedCardinality 1 ; owl:onClass :B ] .", pis="A ⊑ ∃p", skipped=(("subClassOf", FILLER),)),
    Case("ObjectMaxCardinality qualified 0", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:maxQualifiedCardinality 0 ; owl:onClass :B ] .", skipped=(("subClassOf", "∀R.¬B"),),
         triples="skipped"),
    Case("ObjectExactCardinality qualified", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;"
         " owl:qualifiedCardinality 2 ; owl:onClass :B ] .", pis="A ⊑ ∃p",
         skipped=(("subClassOf", "the upper bound"),)),
    Case("DataSomeValuesFrom rdfs:Literal", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :u ;"
         " owl:someValuesFrom rdfs:Literal ] .", pis="A ⊑ ∃u"),
    Case("DataSomeValuesFrom a datatype", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :u ;"
         " owl:someValuesFrom xsd:integer ] .", pis="A ⊑ ∃u", skipped=(("subClassOf", FILLER),)),
    Case("DataAllValuesFrom", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :u ; owl:allValuesFrom"
         " xsd:integer ] .", skipped=(("subClassOf", "a universal restriction"),), triples="skipped"),
    Case("DataHasValue", ':A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :u ; owl:hasValue "5" ] .',
         pis="A ⊑ ∃u", skipped=(("subClassOf", "the value a is lost"),)),
    Case("DataMinCardinality 1", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :u ;"
         " owl:minCardinality 1 ] .", pis="A ⊑ ∃u"),
    Case("DataMaxCardinality 1", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :u ;"
         " owl:maxCardinality 1 ] .", skipped=(("subClassOf", "≤n R"),), triples="skipped"),
    Case("DataMinCardinality qualified", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :u ;"
         " owl:minQualifiedCardinality 1 ; owl:onDataRange xsd:integer ] .", pis="A ⊑ ∃u",
         skipped=(("subClassOf", FILLER),)),
    Case("n-ary DataSomeValuesFrom (owl:onProperties)", ":A rdfs:subClassOf [ a owl:Restriction ; owl:onProperties"
         " ( :u :v ) ; owl:someValuesFrom [ a rdfs:Datatype ; owl:onDatatype xsd:integer ] ] .",
         skipped=(("subClassOf", "n-ary data restriction"),), triples="skipped"),
    Case("owl:topObjectProperty", ":A rdfs:subClassOf [ owl:onProperty owl:topObjectProperty ; owl:someValuesFrom"
         " :B ] .", skipped=(("subClassOf", "universal and empty properties"),), triples="skipped"),
    Case("owl:bottomDataProperty", ":A rdfs:subClassOf [ owl:onProperty owl:bottomDataProperty ;"
         " owl:someValuesFrom rdfs:Literal ] .", skipped=(("subClassOf", "universal and empty properties"),),
         triples="skipped"),
    Case("owl:bottomObjectProperty", ":p rdfs:subPropertyOf owl:bottomObjectProperty .",
         skipped=(("subPropertyOf", "universal and empty properties"),), triples="skipped"),
    Case("owl:topDataProperty on the left", "[ owl:onProperty owl:topDataProperty ; owl:minCardinality 1 ]"
         " rdfs:subClassOf :C .", skipped=(("subClassOf", "universal and empty properties on the left"),),
         triples="skipped"),
    Case("an unrecognised class expression", ":A rdfs:subClassOf [ :rel :B ] .",
         skipped=(("subClassOf", "an unrecognised class expression"), UNRECOGNISED), triples="skipped"),

    # --- class expressions on the left of ⊑ ------------------------------------------------------------------
    Case("ObjectUnionOf on the left", "[ a owl:Class ; owl:unionOf ( :A :B ) ] rdfs:subClassOf :C .",
         pis="A ⊑ C; B ⊑ C"),
    Case("ObjectUnionOf on the left with a part outside DL-Lite", "[ owl:unionOf ( :A [ owl:onProperty :p ;"
         " owl:someValuesFrom :B ] ) ] rdfs:subClassOf :C .", pis="A ⊑ C",
         skipped=(("subClassOf", "a qualified existential ∃R.B on the left"),)),
    Case("ObjectIntersectionOf on the left", "[ owl:intersectionOf ( :A :B ) ] rdfs:subClassOf :C .",
         skipped=(("subClassOf", "an intersection on the left"),), triples="skipped"),
    Case("ObjectIntersectionOf of one class and owl:Thing on the left", "[ owl:intersectionOf ( :A owl:Thing ) ]"
         " rdfs:subClassOf :C . [ owl:intersectionOf ( :B [ owl:intersectionOf ( :B ) ] ) ] owl:disjointWith :D .",
         pis="A ⊑ C", nis="B/D"),
    Case("ObjectIntersectionOf below owl:Nothing (a disjointness as Protégé writes it)",
         "[ a owl:Class ; owl:intersectionOf ( :A :B ) ] rdfs:subClassOf owl:Nothing .", nis="A/B"),
    Case("ObjectIntersectionOf equivalent to owl:Nothing", "[ owl:intersectionOf ( :A :B ) ] owl:equivalentClass"
         " owl:Nothing .", nis="A/B"),
    Case("owl:Nothing equivalent to an ObjectIntersectionOf", "owl:Nothing owl:equivalentClass [ owl:intersectionOf"
         " ( :A :B ) ] .", nis="A/B"),
    Case("ObjectIntersectionOf of existentials below owl:Nothing", "[ owl:intersectionOf ( [ owl:onProperty :p ;"
         " owl:someValuesFrom owl:Thing ] [ owl:onProperty [ owl:inverseOf :q ] ; owl:someValuesFrom owl:Thing ] ) ]"
         " rdfs:subClassOf owl:Nothing .", nis="∃p/∃q⁻"),
    Case("nested ObjectIntersectionOf below owl:Nothing", "[ owl:intersectionOf ( :A [ owl:intersectionOf ( :B"
         " owl:Thing ) ] ) ] rdfs:subClassOf owl:Nothing .", nis="A/B"),
    Case("ObjectIntersectionOf of one class below owl:Nothing", "[ owl:intersectionOf ( :A ) ] rdfs:subClassOf"
         " owl:Nothing .", nis="A/A"),
    Case("ObjectIntersectionOf of a class with itself below owl:Nothing", "[ owl:intersectionOf ( :A :A ) ]"
         " rdfs:subClassOf owl:Nothing .", nis="A/A"),
    Case("ObjectIntersectionOf below an empty existential", "[ owl:intersectionOf ( :A :B ) ] rdfs:subClassOf"
         " [ owl:onProperty :p ; owl:someValuesFrom owl:Nothing ] .", nis="A/B"),
    Case("ObjectIntersectionOf with a union below owl:Nothing", "[ owl:intersectionOf ( [ owl:unionOf ( :A :B ) ]"
         " :C ) ] rdfs:subClassOf owl:Nothing .", nis="A/C; B/C"),
    Case("ObjectIntersectionOf with a complement below owl:Nothing", "[ owl:intersectionOf ( :A [ owl:complementOf"
         " :B ] ) ] rdfs:subClassOf owl:Nothing .", pis="A ⊑ B"),
    Case("ObjectIntersectionOf with owl:Nothing below owl:Nothing", "[ owl:intersectionOf ( :A owl:Nothing ) ]"
         " rdfs:subClassOf owl:Nothing ."),
    Case("ObjectIntersectionOf of three classes below owl:Nothing", "[ owl:intersectionOf ( :A :B :C ) ]"
         " rdfs:subClassOf owl:Nothing .", skipped=(("subClassOf", "three or more concepts"),), triples="skipped"),
    Case("ObjectIntersectionOf with a qualified existential below owl:Nothing", "[ owl:intersectionOf ( :A"
         " [ owl:onProperty :p ; owl:someValuesFrom :B ] ) ] rdfs:subClassOf owl:Nothing .",
         skipped=(("subClassOf", "the complement of a qualified existential"),), triples="skipped"),
    Case("ObjectSomeValuesFrom owl:Thing on the left", "[ a owl:Restriction ; owl:onProperty :p ;"
         " owl:someValuesFrom owl:Thing ] rdfs:subClassOf :C .", pis="∃p ⊑ C"),
    Case("ObjectSomeValuesFrom of an inverse on the left", "[ owl:onProperty [ owl:inverseOf :p ] ;"
         " owl:someValuesFrom owl:Thing ] rdfs:subClassOf :C .", pis="∃p⁻ ⊑ C"),
    Case("ObjectMinCardinality 1 on the left", "[ owl:onProperty :p ; owl:minCardinality 1 ] rdfs:subClassOf :C .",
         pis="∃p ⊑ C"),
    Case("ObjectSomeValuesFrom B on the left", "[ owl:onProperty :p ; owl:someValuesFrom :B ] rdfs:subClassOf :C .",
         skipped=(("subClassOf", "a qualified existential ∃R.B on the left"),), triples="skipped"),
    Case("DataSomeValuesFrom on the left", "[ owl:onProperty :u ; owl:someValuesFrom rdfs:Literal ]"
         " rdfs:subClassOf :C .", pis="∃u ⊑ C"),
    Case("owl:Thing on the left", "owl:Thing rdfs:subClassOf :C .", skipped=(("subClassOf", "owl:Thing on the left"),),
         triples="skipped"),
    Case("owl:Nothing on the left", "owl:Nothing rdfs:subClassOf :C ."),
    Case("ObjectComplementOf on the left", "[ owl:complementOf :A ] rdfs:subClassOf :C .",
         skipped=(("subClassOf", "a complement on the left"),), triples="skipped"),
    Case("ObjectOneOf on the left", "[ owl:oneOf ( :a ) ] rdfs:subClassOf :C .",
         skipped=(("subClassOf", "owl:oneOf) on the left"),), triples="skipped"),

    # --- class axioms (table 16) -----------------------------------------------------------------------------
    Case("EquivalentClasses(named named)", ":A owl:equivalentClass :B .", pis="A ⊑ B; B ⊑ A"),
    Case("EquivalentClasses of three (pairwise triples)", ":A owl:equivalentClass :B . :B owl:equivalentClass :C .",
         pis="A ⊑ B; B ⊑ A; B ⊑ C; C ⊑ B"),
    Case("EquivalentClasses(A, B and some p.C)", ":A owl:equivalentClass [ owl:intersectionOf ( :B"
         " [ owl:onProperty :p ; owl:someValuesFrom :C ] ) ] .", pis="A ⊑ B; A ⊑ ∃p",
         skipped=(("equivalentClass", FILLER), ("equivalentClass", "an intersection on the left"))),
    Case("EquivalentClasses(A, B or C)", ":A owl:equivalentClass [ owl:unionOf ( :B :C ) ] .", pis="B ⊑ A; C ⊑ A",
         skipped=(("equivalentClass", "a union on the right"),)),
    Case("EquivalentClasses(A, not B)", ":A owl:equivalentClass [ owl:complementOf :B ] .", nis="A/B",
         skipped=(("equivalentClass", "a complement on the left"),)),
    Case("EquivalentClasses(A, some p)", ":A owl:equivalentClass [ owl:onProperty :p ; owl:someValuesFrom owl:Thing"
         " ] .", pis="A ⊑ ∃p; ∃p ⊑ A"),
    Case("OWL 1: intersectionOf on a named class", ":A owl:intersectionOf ( :B [ owl:onProperty :p ;"
         " owl:someValuesFrom :C ] ) .", pis="A ⊑ B; A ⊑ ∃p",
         skipped=(("equivalentClass", FILLER), ("equivalentClass", "an intersection on the left"))),
    Case("OWL 1: unionOf on a named class", ":A owl:unionOf ( :B :C ) .", pis="B ⊑ A; C ⊑ A",
         skipped=(("equivalentClass", "a union on the right"),)),
    Case("OWL 1: complementOf on a named class", ":A owl:complementOf :B .", nis="A/B",
         skipped=(("equivalentClass", "a complement on the left"),)),
    Case("OWL 1: oneOf on a named class", ":A owl:oneOf ( :a :b ) .",
         skipped=(("equivalentClass", "owl:oneOf) on the right"), ("equivalentClass", "owl:oneOf) on the left")),
         triples="skipped"),
    Case("EquivalentClasses(A, owl:Nothing)", ":A owl:equivalentClass owl:Nothing .", nis="A/A"),
    Case("DisjointClasses(named named)", ":A owl:disjointWith :B .", nis="A/B"),
    Case("DisjointClasses(A, owl:Thing)", ":A owl:disjointWith owl:Thing .", nis="A/A"),
    Case("DisjointClasses(owl:Thing, A)", "owl:Thing owl:disjointWith :A .", nis="A/A"),
    Case("DisjointClasses with a union", ":A owl:disjointWith [ owl:unionOf ( :B :C ) ] .", nis="A/B; A/C"),
    Case("DisjointClasses with a complement", ":A owl:disjointWith [ owl:complementOf :B ] .", pis="A ⊑ B"),
    Case("DisjointClasses with an existential", ":A owl:disjointWith [ owl:onProperty :p ; owl:someValuesFrom owl:Thing"
         " ] .", nis="A/∃p"),
    Case("DisjointClasses with a qualified existential", ":A owl:disjointWith [ owl:onProperty :p ;"
         " owl:someValuesFrom :B ] .", skipped=(("disjointWith", "the complement of a qualified existential"),),
         triples="skipped"),
    Case("AllDisjointClasses", "[] a owl:AllDisjointClasses ; owl:members ( :A :B :C ) .", nis="A/B; A/C; B/C"),
    Case("DisjointUnion", ":A owl:disjointUnionOf ( :B :C ) .", pis="B ⊑ A; C ⊑ A", nis="B/C",
         skipped=(("disjointUnionOf", "a union on the right"),)),
    Case("DisjointUnion of one class", ":A owl:disjointUnionOf ( :B ) .", pis="B ⊑ A; A ⊑ B"),
    Case("DatatypeDefinition", ":dt a rdfs:Datatype ; owl:equivalentClass [ a rdfs:Datatype ; owl:onDatatype"
         " xsd:integer ; owl:withRestrictions ( [ xsd:minInclusive 5 ] ) ] .",
         skipped=(("DatatypeDefinition", NOT_CONCEPTS),), triples={"declarations": 1, "skipped": 7}),
    Case("HasKey", ":A owl:hasKey ( :p :u ) .", skipped=(("hasKey", "keys are outside DL-Lite"),),
         triples="skipped"),

    # --- object property axioms -------------------------------------------------------------------------------
    Case("SubObjectPropertyOf", ":p rdfs:subPropertyOf :q .", pis="∃p ⊑ ∃q; ∃p⁻ ⊑ ∃q⁻"),
    Case("SubObjectPropertyOf(ObjectInverseOf(p) q)", "[ owl:inverseOf :p ] rdfs:subPropertyOf :q .",
         pis="∃p⁻ ⊑ ∃q; ∃p ⊑ ∃q⁻"),
    Case("SubObjectPropertyOf(ObjectPropertyChain(p q) p)", ":p owl:propertyChainAxiom ( :p :q ) .",
         skipped=(("propertyChainAxiom", "property chains are outside DL-Lite"),), triples="skipped"),
    Case("SubObjectPropertyOf(ObjectPropertyChain(q) p)", ":p owl:propertyChainAxiom ( :q ) .",
         pis="∃q ⊑ ∃p; ∃q⁻ ⊑ ∃p⁻"),
    Case("EquivalentObjectProperties", ":p owl:equivalentProperty :q .", pis="∃p ⊑ ∃q; ∃p⁻ ⊑ ∃q⁻; ∃q ⊑ ∃p; ∃q⁻ ⊑ ∃p⁻"),
    Case("DisjointObjectProperties", ":p owl:propertyDisjointWith :q .",
         skipped=(("propertyDisjointWith", ROLE_DISJOINT),), triples="skipped"),
    Case("AllDisjointProperties", "[] a owl:AllDisjointProperties ; owl:members ( :p :q ) .",
         skipped=(("AllDisjointProperties", ROLE_DISJOINT),), triples="skipped"),
    Case("InverseObjectProperties", ":p owl:inverseOf :q .", pis="∃p ⊑ ∃q⁻; ∃q⁻ ⊑ ∃p; ∃p⁻ ⊑ ∃q; ∃q ⊑ ∃p⁻"),
    Case("InverseObjectProperties(p ObjectInverseOf(q))", ":p owl:inverseOf [ owl:inverseOf :q ] .",
         pis="∃p ⊑ ∃q; ∃q ⊑ ∃p; ∃p⁻ ⊑ ∃q⁻; ∃q⁻ ⊑ ∃p⁻"),
    Case("ObjectPropertyDomain", ":p rdfs:domain :A .", pis="∃p ⊑ A"),
    Case("ObjectPropertyDomain of an intersection", ":p rdfs:domain [ owl:intersectionOf ( :A :B ) ] .",
         pis="∃p ⊑ A; ∃p ⊑ B"),
    Case("ObjectPropertyDomain of a union", ":p rdfs:domain [ owl:unionOf ( :A :B ) ] .",
         skipped=(("domain", "a union on the right"),), triples="skipped"),
    Case("ObjectPropertyRange", ":p rdfs:range :A .", pis="∃p⁻ ⊑ A"),
    Case("ObjectPropertyRange of an inverse", "[ owl:inverseOf :p ] rdfs:range :A .", pis="∃p ⊑ A"),
    Case("FunctionalObjectProperty", ":p a owl:FunctionalProperty .",
         skipped=(("FunctionalProperty", CHARACTERISTIC),), triples="skipped"),
    Case("InverseFunctionalObjectProperty", ":p a owl:InverseFunctionalProperty .",
         skipped=(("InverseFunctionalProperty", CHARACTERISTIC),), triples="skipped"),
    Case("ReflexiveObjectProperty", ":p a owl:ReflexiveProperty .",
         skipped=(("ReflexiveProperty", CHARACTERISTIC),), triples="skipped"),
    Case("IrreflexiveObjectProperty", ":p a owl:IrreflexiveProperty .",
         skipped=(("IrreflexiveProperty", CHARACTERISTIC),), triples="skipped"),
    Case("SymmetricObjectProperty", ":p a owl:SymmetricProperty .", pis="∃p ⊑ ∃p⁻; ∃p⁻ ⊑ ∃p"),
    Case("AsymmetricObjectProperty", ":p a owl:AsymmetricProperty .",
         skipped=(("AsymmetricProperty", CHARACTERISTIC),), triples="skipped"),
    Case("TransitiveObjectProperty", ":p a owl:TransitiveProperty .",
         skipped=(("TransitiveProperty", CHARACTERISTIC),), triples="skipped"),

    # --- data property axioms ---------------------------------------------------------------------------------
    Case("SubDataPropertyOf", ":u rdfs:subPropertyOf :v .", pis="∃u ⊑ ∃v"),
    Case("EquivalentDataProperties", ":u owl:equivalentProperty :v .", pis="∃u ⊑ ∃v; ∃v ⊑ ∃u"),
    Case("DisjointDataProperties", ":u owl:propertyDisjointWith :v .",
         skipped=(("propertyDisjointWith", ROLE_DISJOINT),), triples="skipped"),
    Case("DataPropertyDomain", ":u rdfs:domain :A .", pis="∃u ⊑ A"),
    Case("DataPropertyRange (datatype)", ":u rdfs:range xsd:integer .",
         skipped=(("range (datatype)", NOT_CONCEPTS),), triples="skipped"),
    Case("DataPropertyRange rdfs:Literal", ":u rdfs:range rdfs:Literal ."),
    Case("FunctionalDataProperty", ":u a owl:FunctionalProperty .",
         skipped=(("FunctionalProperty", CHARACTERISTIC),), triples="skipped"),

    # --- data ranges (table 12), as ranges of a data property -----------------------------------------------------
    Case("DataIntersectionOf", ":u rdfs:range [ a rdfs:Datatype ; owl:intersectionOf ( xsd:integer xsd:int ) ] .",
         skipped=(("range (datatype)", NOT_CONCEPTS),), triples="skipped"),
    Case("DataUnionOf", ":u rdfs:range [ a rdfs:Datatype ; owl:unionOf ( xsd:integer xsd:string ) ] .",
         skipped=(("range (datatype)", NOT_CONCEPTS),), triples="skipped"),
    Case("DataComplementOf", ":u rdfs:range [ a rdfs:Datatype ; owl:datatypeComplementOf xsd:integer ] .",
         skipped=(("range (datatype)", NOT_CONCEPTS),), triples="skipped"),
    Case("DataOneOf", ':u rdfs:range [ a rdfs:Datatype ; owl:oneOf ( "x" "y" ) ] .',
         skipped=(("range (datatype)", NOT_CONCEPTS),), triples="skipped"),
    Case("DataOneOf (OWL 1 owl:DataRange)", ':u rdfs:range [ a owl:DataRange ; owl:oneOf ( "x" ) ] .',
         skipped=(("range (datatype)", NOT_CONCEPTS),), triples="skipped"),
    Case("DatatypeRestriction", ":u rdfs:range [ a rdfs:Datatype ; owl:onDatatype xsd:integer ;"
         " owl:withRestrictions ( [ xsd:minInclusive 5 ] [ xsd:maxExclusive 10 ] ) ] .",
         skipped=(("range (datatype)", NOT_CONCEPTS),), triples="skipped"),
    Case("rdf:PlainLiteral and other built-in datatypes", ":u rdfs:range rdf:PlainLiteral . :v rdfs:range"
         " rdf:langString .", skipped=(("range (datatype)", NOT_CONCEPTS), ("range (datatype)", NOT_CONCEPTS)),
         triples="skipped"),

    # --- assertions (table 17 and section 2.4) --------------------------------------------------------------------
    Case("ClassAssertion", ":a1 a :A .", skipped=(ABOX,), triples="skipped"),
    Case("ClassAssertion of owl:Thing", ":a2 a owl:Thing .", skipped=(ABOX,), triples="skipped"),
    Case("ClassAssertion of an expression", ":a3 a [ owl:onProperty :p ; owl:someValuesFrom :B ] .",
         skipped=(ABOX,), triples="skipped"),
    Case("ObjectPropertyAssertion", ":a4 :p :b .", skipped=(ABOX,), triples="skipped"),
    Case("DataPropertyAssertion", ':a5 :u "5" .', skipped=(ABOX,), triples="skipped"),
    Case("assertions about one individual are one entry", ':a6 a :A ; :p :b ; :u "5" .', skipped=(ABOX,),
         triples="skipped"),
    Case("anonymous individual", "[] a :A ; :p :b .", skipped=(ABOX,), triples="skipped"),
    Case("SameIndividual", ":a7 owl:sameAs :b .", skipped=(ABOX,), triples="skipped"),
    Case("DifferentIndividuals", ":a8 owl:differentFrom :b .", skipped=(ABOX,), triples="skipped"),
    Case("DifferentIndividuals (owl:AllDifferent, owl:members)", "[] a owl:AllDifferent ; owl:members ( :a :b ) .",
         skipped=(ABOX,), triples="skipped"),
    Case("DifferentIndividuals (owl:distinctMembers)", "[] a owl:AllDifferent ; owl:distinctMembers ( :a :b ) .",
         skipped=(ABOX,), triples="skipped"),
    Case("NegativeObjectPropertyAssertion", "[] a owl:NegativePropertyAssertion ; owl:sourceIndividual :a ;"
         " owl:assertionProperty :p ; owl:targetIndividual :b .", skipped=(ABOX,), triples="skipped"),
    Case("NegativeDataPropertyAssertion", "[] a owl:NegativePropertyAssertion ; owl:sourceIndividual :a ;"
         ' owl:assertionProperty :u ; owl:targetValue "5" .', skipped=(ABOX,), triples="skipped"),

    # --- what is no OWL 2 construct --------------------------------------------------------------------------------
    Case("a restriction's predicate on a named class", ":A owl:someValuesFrom :B .", skipped=(UNRECOGNISED,),
         triples="skipped"),
    Case("an anonymous expression no axiom uses", "[] a owl:Restriction ; owl:onProperty :p ; owl:someValuesFrom :B"
         " .", skipped=(UNRECOGNISED,), triples="skipped"),
    Case("a property expression no axiom uses", "[] owl:inverseOf :p .", skipped=(UNRECOGNISED,),
         triples="skipped"),
    Case("a cycle of blank nodes", ":A rdfs:subClassOf _:x . _:x owl:complementOf _:x .",
         skipped=(("subClassOf", "the complement of a cycle of blank nodes"),), triples="skipped"),
    Case("an undeclared predicate on an unknown subject", ":thing :rel :B .",
         skipped=(UNRECOGNISED,), triples="skipped"),
]

#: the reserved vocabulary of the mapping (its table 2 with the RDF and RDFS terms it uses, and the OWL 1 terms)
VOCABULARY = """
owl:AllDifferent owl:AllDisjointClasses owl:AllDisjointProperties owl:allValuesFrom owl:annotatedProperty
owl:annotatedSource owl:annotatedTarget owl:Annotation owl:AnnotationProperty owl:assertionProperty
owl:AsymmetricProperty owl:Axiom owl:backwardCompatibleWith owl:bottomDataProperty owl:bottomObjectProperty
owl:cardinality owl:Class owl:complementOf owl:DataRange owl:datatypeComplementOf owl:DatatypeProperty
owl:deprecated owl:DeprecatedClass owl:DeprecatedProperty owl:differentFrom owl:disjointUnionOf owl:disjointWith
owl:distinctMembers owl:equivalentClass owl:equivalentProperty owl:FunctionalProperty owl:hasKey owl:hasSelf
owl:hasValue owl:imports owl:incompatibleWith owl:intersectionOf owl:InverseFunctionalProperty owl:inverseOf
owl:IrreflexiveProperty owl:maxCardinality owl:maxQualifiedCardinality owl:members owl:minCardinality
owl:minQualifiedCardinality owl:NamedIndividual owl:NegativePropertyAssertion owl:Nothing owl:ObjectProperty
owl:onClass owl:onDataRange owl:onDatatype owl:oneOf owl:onProperties owl:onProperty owl:Ontology
owl:OntologyProperty owl:priorVersion owl:propertyChainAxiom owl:propertyDisjointWith owl:qualifiedCardinality
owl:ReflexiveProperty owl:Restriction owl:sameAs owl:someValuesFrom owl:sourceIndividual owl:SymmetricProperty
owl:targetIndividual owl:targetValue owl:Thing owl:topDataProperty owl:topObjectProperty
owl:TransitiveProperty
owl:unionOf owl:versionInfo owl:versionIRI owl:withRestrictions
rdfs:Class rdfs:comment rdfs:Datatype rdfs:domain rdfs:isDefinedBy rdfs:label rdfs:Literal rdfs:range
rdfs:seeAlso rdfs:subClassOf rdfs:subPropertyOf
rdf:type rdf:first rdf:rest rdf:nil rdf:Property rdf:PlainLiteral rdf:langString
"""
