"""Derive ``lubm-dllite.ttl``: our DL-Lite_core adaptation of LUBM's univ-bench.owl, with NIs (deterministic).
The checked-in Turtle is what the experiments and tests load; this script documents how it was made, by the
rules of experiments/README.md, "TBoxes"."""
from __future__ import annotations

import itertools
import os
from collections import defaultdict

import networkx as nx
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from experiments.common import DATA, UBA
from experiments.streams import UB

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "..", "src", "srtopo", "consistency", "data", "lubm-dllite.ttl"))  # shipped
UNIV_BENCH = os.path.join(DATA, "lubm", "owl-toolkit", "univ-bench.owl")

# named conjuncts of univ-bench's definitions (X = Person and ...) and HermiT's entailed edges
DEFINED = [("Employee", "Person"), ("Student", "Person"), ("TeachingAssistant", "Person"), ("Director", "Person"),
           ("Chair", "Person"), ("Dean", "Person")]
ENTAILED = [("GraduateStudent", "Student"), ("ResearchAssistant", "Employee"), ("Director", "Employee")]
# (property, 'domain' | 'range', class) as stated in univ-bench.owl, for properties UBA data uses
ROLE_PIS = [
    ("advisor", "domain", "Person"), ("advisor", "range", "Professor"),
    ("doctoralDegreeFrom", "domain", "Person"), ("doctoralDegreeFrom", "range", "University"),
    ("mastersDegreeFrom", "domain", "Person"), ("mastersDegreeFrom", "range", "University"),
    ("undergraduateDegreeFrom", "domain", "Person"), ("undergraduateDegreeFrom", "range", "University"),
    ("publicationAuthor", "domain", "Publication"), ("publicationAuthor", "range", "Person"),
    ("subOrganizationOf", "domain", "Organization"), ("subOrganizationOf", "range", "Organization"),
    ("teacherOf", "domain", "Faculty"), ("teacherOf", "range", "Course"),
    ("teachingAssistantOf", "domain", "TeachingAssistant"), ("teachingAssistantOf", "range", "Course"),
]
# univ-bench definitions a full reasoner applies to the data (class, property, filler)
DEFINITIONS = [("Chair", "headOf", "Department"), ("Dean", "headOf", "College"), ("Director", "headOf", "Program"),
               ("TeachingAssistant", "teachingAssistantOf", "Course"), ("Employee", "worksFor", "Organization"),
               ("Student", "takesCourse", "Course")]


def short(iri) -> str:
    return str(iri).replace(UB, "")


def named_hierarchy(univ_bench: str = UNIV_BENCH) -> tuple[list[str], nx.DiGraph]:
    g = Graph()
    g.parse(univ_bench, format="xml")
    classes = sorted(short(c) for c in g.subjects(RDF.type, OWL.Class) if isinstance(c, URIRef))
    dag = nx.DiGraph()
    dag.add_nodes_from(classes)
    for s, o in g.subject_objects(RDFS.subClassOf):
        if isinstance(s, URIRef) and isinstance(o, URIRef):
            dag.add_edge(short(s), short(o))
    dag.add_edges_from(DEFINED + ENTAILED)
    return classes, nx.transitive_reduction(dag)


def uba_memberships(hier: nx.DiGraph, files=UBA) -> dict[str, set[str]]:
    """individual -> named classes it belongs to, with the PIs of rules 1-2 and univ-bench's definitions."""
    types: dict[str, set[str]] = defaultdict(set)
    edges: list[tuple[str, str, str]] = []
    for path in files:
        g = Graph()
        g.parse(path, format="xml")
        for s, p, o in g:
            if p == RDF.type:
                if str(o).startswith(UB):
                    types[str(s)].add(short(o))
            elif str(p).startswith(UB) and not isinstance(o, Literal):
                edges.append((str(s), short(p), str(o)))
    role_pi = {(p, side): c for p, side, c in ROLE_PIS}
    closure = nx.transitive_closure_dag(hier)

    def close(classes: set[str]) -> set[str]:
        out = set(classes)
        for c in classes:
            out |= set(closure.successors(c))
        return out

    for s, p, o in edges:
        if (p, "domain") in role_pi:
            types[s].add(role_pi[(p, "domain")])
        if (p, "range") in role_pi:
            types[o].add(role_pi[(p, "range")])
    members = {x: close(cs) for x, cs in types.items()}
    changed = True
    while changed:   # definitions: X = Person and P some F
        changed = False
        for s, p, o in edges:
            for cls, prop, filler in DEFINITIONS:
                if p == prop and filler in members.get(o, ()) and "Person" in members.get(s, ()) \
                        and cls not in members[s]:
                    members[s] = close(members[s] | {cls})
                    changed = True
    return members


def derive(univ_bench: str = UNIV_BENCH, files=UBA):
    classes, hier = named_hierarchy(univ_bench)
    members = uba_memberships(hier, files)
    shared = set()
    for cs in members.values():
        for a, b in itertools.combinations(sorted(cs), 2):
            shared.add((a, b))
    parents: dict[str, list[str]] = defaultdict(list)
    for c in classes:
        sups = sorted(hier.successors(c))
        for s in sups or ["(top)"]:
            parents[s].append(c)
    nis, removed = [], []
    for parent in sorted(parents):
        for a, b in itertools.combinations(sorted(parents[parent]), 2):
            (nis if (a, b) not in shared else removed).append((a, b, parent))
    return classes, hier, nis, removed


def write(path: str = OUT) -> None:
    classes, hier, nis, removed = derive()
    lines = [
        "# LUBM univ-bench in DL-Lite_core with negative inclusions: generated by",
        "#   python -m experiments.tboxes.make_lubm_dllite",
        "# (see that script's docstring for the rules). Source: univ-bench.owl (SWAT Lab, Lehigh University).",
        f"# {len(classes)} classes, {hier.number_of_edges()} named subClassOf + {len(ROLE_PIS)} domain/range PIs, "
        f"{len(nis)} disjointWith NIs.",
        "# Sibling pairs left out because UBA data shares them: "
        + ", ".join(f"{a}/{b}" for a, b, _ in removed),
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .",
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .",
        f"@prefix ub: <{UB}> .",
        "",
        "<http://www.lehigh.edu/~zhp2/2004/0401/univ-bench-dllite.owl> a owl:Ontology ;",
        '    rdfs:comment "LUBM univ-bench adapted to DL-Lite_core with disjointness between siblings (srtopo)" .',
        "",
        "# --- classes and positive inclusions (named)",
    ]
    for c in classes:
        sups = sorted(hier.successors(c))
        if sups:
            lines.append(f"ub:{c} a owl:Class ; rdfs:subClassOf " + ", ".join(f"ub:{s}" for s in sups) + " .")
        else:
            lines.append(f"ub:{c} a owl:Class .")
    lines.append("")
    lines.append("# --- positive inclusions on roles: exists P subClassOf A (domain), exists P^- subClassOf A (range)")
    for prop in sorted({p for p, _, _ in ROLE_PIS}):
        parts = [f"rdfs:{side} ub:{c}" for p, side, c in ROLE_PIS if p == prop]
        lines.append(f"ub:{prop} a owl:ObjectProperty ; " + " ; ".join(parts) + " .")
    lines.append("")
    lines.append("# --- negative inclusions: siblings never shared by an individual of the UBA data")
    current = None
    for a, b, parent in nis:
        if parent != current:
            lines.append(f"# siblings under {parent}")
            current = parent
        lines.append(f"ub:{a} owl:disjointWith ub:{b} .")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print(f"wrote {path}: {len(classes)} classes, {hier.number_of_edges() + len(ROLE_PIS)} PIs, {len(nis)} NIs")
    print("left out (shared in UBA data):", ", ".join(f"{a}/{b}" for a, b, _ in removed))


if __name__ == "__main__":
    write()
