"""What DL-Lite can state of a class expression on either side of an inclusion.

DL-Lite_R inclusions have a basic concept (A, ∃P, ∃P⁻) on the left and a basic concept or its negation on the
right ("DL-Lite: Tractable Description Logics for Ontologies", Calvanese et al.). An OWL axiom X ⊑ Y is
cut into such inclusions where that is exact:
* the left side is read as a union of basic concepts (``left_parts``): (A ⊔ ∃R) ⊑ Y is A ⊑ Y and ∃R ⊑ Y;
  a member that is no basic concept is ``Unusable``: its inclusion is skipped, the others are kept;
* the right side is read as a conjunction (``right``): named superclasses, concepts disjoint from the
  left side (¬B, owl:Nothing, ≤0 R) and parts that are lost. ∃R.B is kept as ∃R and the filler B is a lost
  part, listed in the loader report; a right side with nothing DL-Lite can state fails with a reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rdflib.namespace import OWL

from srtopo.concepts import exists, exists_inverse
from srtopo.consistency.owl_expressions import (
    And, DataRange, Expr, Named, Not, OneOf, Or, Restriction, Role, Unknown, is_bottom, is_top, show)

#: stands for the subclass itself in ``Rhs.disjoint``: X ⊑ ⊥ is the NI X/X
SELF = "<self>"


def exists_of(role: Role) -> str:
    return exists_inverse(role.iri) if role.inverse else exists(role.iri)


@dataclass(frozen=True)
class Unusable:
    """A member of a left side that is no basic concept; ``what`` is generic, for grouping in reports."""
    expr: Expr
    what: str


@dataclass
class Rhs:
    """X ⊑ expression is exactly: X ⊑ each of ``supers``, X disjoint from each of ``disjoint``, plus ``lost``
    parts that DL-Lite cannot state (rendering, reason). ``supers`` carry a label for the loader's counts."""
    supers: list[tuple[str, str]] = field(default_factory=list)
    disjoint: list[tuple[str, str]] = field(default_factory=list)
    lost: list[tuple[str, str]] = field(default_factory=list)

    def extend(self, other: "Rhs") -> None:
        self.supers += other.supers
        self.disjoint += other.disjoint
        self.lost += other.lost


def describe(expr: Expr) -> str:
    """A generic name for a construct ("a universal restriction ∀R.B"): reasons group by it."""
    if isinstance(expr, Named):
        return {OWL.Thing: "owl:Thing", OWL.Nothing: "owl:Nothing"}.get(expr.iri, "a named class")
    if isinstance(expr, DataRange):
        return "a data range (data ranges are not concepts)"
    if isinstance(expr, And):
        return "an intersection"
    if isinstance(expr, Or):
        return "a union"
    if isinstance(expr, Not):
        return "a complement"
    if isinstance(expr, OneOf):
        return "an enumeration of individuals (owl:oneOf)"
    if isinstance(expr, Unknown):
        return expr.what
    if isinstance(expr, Restriction):
        if expr.role is None:
            return f"a restriction on {expr.role_problem}"
        return {"some": "a qualified existential ∃R.B", "all": "a universal restriction ∀R.B",
                "value": "a value restriction ∃R.{a}", "self": "a self restriction ∃R.Self",
                "min": "a number restriction ≥n R", "max": "a number restriction ≤n R",
                "exact": "a number restriction =n R"}[expr.kind]
    return "an unrecognised expression"


def is_empty(expr: Expr) -> bool:
    """Whether ``expr`` is the empty class as DL-Lite reads it on the right (owl:Nothing, ∃R.owl:Nothing, ¬owl:Thing,
    an empty union or enumeration): X ⊑ ``expr`` makes X unsatisfiable and states nothing else."""
    rhs = right(expr)
    return (isinstance(rhs, Rhs) and not rhs.supers and not rhs.lost and bool(rhs.disjoint)
            and all(concept == SELF for concept, _ in rhs.disjoint))


def conjuncts(expr: And) -> list[Expr]:
    """The operands of an intersection with nested intersections flattened, owl:Thing and repeats left out."""
    out: list[Expr] = []
    for item in expr.items:
        for part in conjuncts(item) if isinstance(item, And) else [item]:
            if not is_top(part) and part not in out:
                out.append(part)
    return out


def left_parts(expr: Expr) -> list:
    """The members of the left side read as a union: basic concepts (str) and ``Unusable`` members."""
    if isinstance(expr, Named):
        if expr.iri == OWL.Nothing:
            return []                              # ⊥ ⊑ Y holds: nothing to state
        if expr.iri == OWL.Thing:
            return [Unusable(expr, describe(expr))]
        return [str(expr.iri)]
    if isinstance(expr, Or):
        return [part for item in expr.items for part in left_parts(item)]
    if isinstance(expr, And):
        operands = conjuncts(expr)
        if any(is_bottom(item) for item in operands):
            return []
        if len(operands) == 1:                     # (A ⊓ owl:Thing), (A ⊓ (A)): the one operand
            return left_parts(operands[0])
    if isinstance(expr, OneOf) and not expr.items:
        return []
    if isinstance(expr, Restriction) and expr.role is not None:
        if expr.kind == "some" and is_bottom(expr.filler):
            return []
        if (expr.kind == "some" and is_top(expr.filler)) or (
                expr.kind == "min" and expr.n == 1 and is_top(expr.filler)):
            return [exists_of(expr.role)]
    return [Unusable(expr, describe(expr))]


def _outside(what: str, side: str) -> str:
    return f"{what} on the {side} of ⊑ is outside DL-Lite"


def right(expr: Expr) -> Rhs | str:
    """What X ⊑ ``expr`` states in DL-Lite, or why nothing of it can be stated."""
    if isinstance(expr, Named):
        if expr.iri == OWL.Thing:
            return Rhs()
        if expr.iri == OWL.Nothing:
            return Rhs(disjoint=[(SELF, "owl:Nothing")])
        return Rhs(supers=[(str(expr.iri), "")])
    if isinstance(expr, And):
        out = Rhs()
        for item in expr.items:
            part = right(item)
            if isinstance(part, str):
                out.lost.append((show(item), part))   # X ⊑ B ⊓ C is X ⊑ B and X ⊑ C: each conjunct alone
                continue
            part.supers = [(c, label or " conjunction") for c, label in part.supers]
            out.extend(part)
        return out
    if isinstance(expr, Or):
        items = [item for item in expr.items if not is_bottom(item)]
        if any(is_top(item) for item in items):
            return Rhs()
        if len(items) == 1:
            return right(items[0])
        if not items:
            return Rhs(disjoint=[(SELF, "owl:Nothing")])
        return _outside(describe(expr), "right")
    if isinstance(expr, Not):
        return _complement(expr.inner)
    if isinstance(expr, OneOf) and not expr.items:
        return Rhs(disjoint=[(SELF, "owl:Nothing")])
    if isinstance(expr, Restriction) and expr.role is not None:
        return _restriction(expr)
    return _outside(describe(expr), "right")


def _complement(inner: Expr) -> Rhs | str:
    """X ⊑ ¬E: X is disjoint from each member of E read as a union; ¬¬F is F."""
    if isinstance(inner, Not):
        return right(inner.inner)
    if is_top(inner):
        return Rhs(disjoint=[(SELF, "owl:Nothing")])
    out = Rhs()
    for part in left_parts(inner):
        if isinstance(part, Unusable):
            out.lost.append(("¬" + show(part.expr), f"the complement of {part.what} is outside DL-Lite"))
        else:
            out.disjoint.append((part, "complementOf"))
    return out


def _restriction(expr: Restriction) -> Rhs | str:
    role, filler, kind, n = expr.role, expr.filler, expr.kind, expr.n
    some = exists_of(role)
    kept = " exists R" if is_top(filler) else " exists R.B (kept as exists R)"
    if kind == "some":
        if is_bottom(filler):
            return Rhs(disjoint=[(SELF, "owl:Nothing")])
        lost = [] if is_top(filler) else [(show(expr), "∃R.B is kept as ∃R: the filler B is lost")]
        return Rhs(supers=[(some, kept)], lost=lost)
    if kind == "value":
        return Rhs(supers=[(some, " exists R.B (kept as exists R)")],
                   lost=[(show(expr), "∃R.{a} is kept as ∃R: the value a is lost")])
    if kind == "self":
        if role.data:
            return _outside(describe(expr), "right")
        return Rhs(supers=[(some, " exists R.Self (kept as exists R, exists R^-)"),
                           (exists_of(role.flipped()), " exists R.Self (kept as exists R, exists R^-)")],
                   lost=[(show(expr), "∃R.Self is kept as ∃R and ∃R⁻: the loop is lost")])
    if kind == "all":
        return Rhs() if is_top(filler) else _outside(describe(expr), "right")
    if kind == "max" and n == 0 or kind == "exact" and n == 0:
        if is_bottom(filler):
            return Rhs()
        if is_top(filler):
            return Rhs(disjoint=[(some, "maxCardinality 0")])   # X ⊑ ≤0 R is X ⊓ ∃R ⊑ ⊥
        return _outside("a qualified ≤0 R.B (that is ∀R.¬B)", "right")
    if kind == "min" and n == 0:
        return Rhs()
    if kind in ("min", "exact") and n is not None and n > 0:
        if is_bottom(filler):
            return Rhs(disjoint=[(SELF, "owl:Nothing")])
        if n == 1 and kind == "min":
            return _restriction(Restriction("some", role, filler, triples=expr.triples))
        reason = ("≥n R is kept as ∃R: the number (and any filler) is lost" if kind == "min"
                  else "=n R is kept as ∃R: the upper bound (and any filler) is lost")
        return Rhs(supers=[(some, kept)], lost=[(show(expr), reason)])
    return _outside(describe(expr), "right")
