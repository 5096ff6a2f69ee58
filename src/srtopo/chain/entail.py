"""What a DL-Lite TBox entails from one statement alone, as lookup tables, and the saturation of a statement.

The tables come from the TBox as loaded into DL-Lite: the PI closure over basic concepts the consistency compiler
uses (``consistency.hierarchy``, networkx), and the same closure over the role hierarchy (object role
expressions written as their ∃ concepts, ``TBox.roles``). A statement then costs a few dictionary lookups, however
many axioms the TBox has (NPD: hundreds of classes and properties); no axiom becomes an operation of its own.

* ``x rdf:type C`` entails ``x rdf:type D`` for every named class D with C ⊑* D;
* ``a P b`` (P an object property of the TBox, b an individual) entails ``a Q b`` for every named Q with
  P ⊑* Q, ``b Q a`` for every named Q with P ⊑* Q⁻, ``a rdf:type D`` for every named D with ∃P ⊑* D (domains)
  and ``b rdf:type D`` for every named D with ∃P⁻ ⊑* D (ranges);
* any other statement (a class or property the TBox does not know, a data property, a literal object) entails
  nothing but itself.
"""
from __future__ import annotations

from srtopo.concepts import RDF_TYPE, exists, exists_inverse, is_exists, role_of
from srtopo.consistency.hierarchy import Hierarchy
from srtopo.consistency.tbox import TBox
from srtopo.ir.records import Statement
from srtopo.ir.topology import INCONSISTENT, SaturationStage

#: the id of a chain's saturation stage
STAGE_ID = "W"


def _named(hierarchy: Hierarchy, reps) -> list[str]:
    """The named classes among the members of the representatives ``reps`` (equivalent classes included)."""
    return sorted({m for rep in reps for m in hierarchy.members(rep) if not is_exists(m)})


def _inverse(role: str) -> str:
    """The ∃ concept of the inverse of a role written as its ∃ concept."""
    name, inverse = role_of(role)
    return exists(name) if inverse else exists_inverse(name)


def saturation_stage(tbox: TBox, inconsistent: str = "drop", stage_id: str = STAGE_ID,
                     parallelism: int = 1) -> SaturationStage:
    """The saturation stage of a chain over ``tbox`` (``ir.topology.SaturationStage``)."""
    if inconsistent not in INCONSISTENT:
        from srtopo.errors import UsageError
        raise UsageError(f"inconsistent must be drop or keep, not {inconsistent!r}",
                         hint="drop withholds the statements of individuals with a report; keep withholds nothing")
    concepts = Hierarchy(tbox)
    types = []
    for cls in sorted(c for c in tbox.concepts if not is_exists(c)):
        supers = tuple(d for d in _named(concepts, concepts.supers(cls)) if d != cls)
        if supers:
            types.append((cls, supers))
    # the role hierarchy: R ⊑ S gives R⁻ ⊑ S⁻ too; every object property and its inverse is a node
    edges = {pair for r, s in tbox.roles for pair in ((r, s), (_inverse(r), _inverse(s)))}
    nodes = {r for p in tbox.object_properties for r in (exists(p), exists_inverse(p))}
    roles = Hierarchy(TBox.build(pis=sorted(edges), concepts=nodes | {r for pair in edges for r in pair}))
    properties = []
    for prop in sorted(tbox.object_properties):
        above = {m for rep in roles.supers(exists(prop)) for m in roles.members(rep)}
        forward = tuple(sorted(role_of(r)[0] for r in above if not role_of(r)[1] and role_of(r)[0] != prop))
        backward = tuple(sorted(role_of(r)[0] for r in above if role_of(r)[1]))
        domains = tuple(_named(concepts, concepts.supers(exists(prop))))
        ranges = tuple(_named(concepts, concepts.supers(exists_inverse(prop))))
        if forward or backward or domains or ranges:
            properties.append((prop, forward, backward, domains, ranges))
    return SaturationStage(id=stage_id, parallelism=parallelism, inconsistent=inconsistent, types=tuple(types),
                           properties=tuple(properties))


class Entailment:
    """A saturation stage's tables as dictionaries: what the local executor looks statements up in."""

    def __init__(self, stage: SaturationStage):
        self.drop = stage.inconsistent == "drop"
        self.types = dict(stage.types)
        self.properties = {p[0]: p[1:] for p in stage.properties}

    def withheld(self, statement: Statement, reported) -> bool:
        """Whether a statement is withheld, given the individuals with a report at its time point."""
        if not self.drop or not reported:
            return False
        if statement.subject in reported:
            return True
        return statement.object is not None and statement.predicate != RDF_TYPE and statement.object in reported

    def saturate(self, statement: Statement) -> list[tuple[str, str, str | None, str | None]]:
        """(subject, predicate, object, literal) of the statement itself and of what the TBox entails from it."""
        s, p, o = statement.subject, statement.predicate, statement.object
        out = [(s, p, o, statement.literal)]
        if o is None:
            return out
        if p == RDF_TYPE:
            out += [(s, RDF_TYPE, d, None) for d in self.types.get(o, ())]
            return out
        found = self.properties.get(p)
        if found is not None:
            forward, backward, domains, ranges = found
            out += [(s, q, o, None) for q in forward]
            out += [(o, q, s, None) for q in backward]
            out += [(s, RDF_TYPE, d, None) for d in domains]
            out += [(o, RDF_TYPE, d, None) for d in ranges]
        return out
