"""Frozen IR of a parsed I-DLV-sr program ("I-DLV-sr: A Stream Reasoning System based on I-DLV", section 3).

Ordinary ASP body literals stay clingo AST nodes (clingo owns ASP-Core-2 syntax); only what clingo does not
know -- streaming literals, windows, ``#temp`` -- gets its own dataclasses here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

from clingo import Symbol, ast

from srtopo.errors import ProgramError
from srtopo.logic.syntax import (  # noqa: F401 - the I-DLV-sr IR is written in these
    RESERVED, Loc, NotAnAtom, Signature, is_atom_term, sig_str, symbolic_atoms, term_signature, variables, walk)

GENERATED_PREFIX = "__sr_"

#: input predicates the evaluator provides at every time point (never rows of a stream): the value of ``@now``
#: and the triggers of ``#trigger_frequency`` rules that fire. Every partition has them, so they key nothing.
NOW_PREDICATE = "__sr_now"
TICK_PREDICATE = "__sr_tick"
CLOCK_PREDICATES = (NOW_PREDICATE, TICK_PREDICATE)
#: the variable ``@now`` is read into (``p(@now) :- b.`` is ``p(_NW) :- b, __sr_now(_NW).``)
NOW_VARIABLE = "_NW"

#: seconds per unit accepted in ``[w unit]`` windows and in ``--unit``
UNIT_SECONDS = {
    "ms": Fraction(1, 1000), "msec": Fraction(1, 1000),
    "s": Fraction(1), "sec": Fraction(1), "second": Fraction(1), "seconds": Fraction(1),
    "min": Fraction(60), "minute": Fraction(60), "minutes": Fraction(60),
    "h": Fraction(3600), "hrs": Fraction(3600), "hour": Fraction(3600), "hours": Fraction(3600),
}


@dataclass(frozen=True)
class Window:
    """``[w]`` / ``[w unit]`` (all distances 0..w) or ``{d1,...,dm}`` (explicit distances, in time points)."""
    size: int | None = None
    unit: str | None = None
    points: tuple[int, ...] | None = None

    def distances(self, unit_seconds: Fraction = Fraction(1), default_unit: str | None = None) -> frozenset[int]:
        """Distances in time points. A window's distances are durations in its unit (``[w min]``), else in
        ``default_unit`` (``--windows-unit``; as in I-DLV-sr, seconds whatever the time unit), or, with neither,
        in time points. ``[w]`` covers the time points at most w back: with minutes as time points, ``[90]``
        (seconds) reaches one minute back. An explicit distance must be a whole number of time points."""
        unit = self.unit or default_unit
        scale = Fraction(1) if unit is None else UNIT_SECONDS[unit] / Fraction(unit_seconds)
        if self.points is None:
            return frozenset(range(math.floor(Fraction(self.size) * scale) + 1))
        values = [p * scale for p in self.points]
        if any(v.denominator != 1 for v in values):
            raise ProgramError(f"window {self} ({unit or 'time points'}) holds a distance that is not a whole number "
                               f"of time points", hint="give --windows-unit the unit of the distances, or a --t-unit that "
                               "divides them")
        return frozenset(int(v) for v in values)

    def __str__(self) -> str:
        if self.points is not None:
            return "{" + ",".join(str(p) for p in self.points) + "}"
        return f"[{self.size} {self.unit}]" if self.unit else f"[{self.size}]"


@dataclass(frozen=True)
class StreamingLiteral:
    """``[not] p(t) OP in W``; OP is at_least c | at_most c | always | count t (``in W`` = at_least 1)."""
    atom: ast.AST          # the atom's term (clingo AST Function / SymbolicTerm)
    op: str                # "at_least" | "at_most" | "always" | "count"
    count: Union[int, str, None]   # constant c, or a variable name (count only), None for always
    window: Window
    negated: bool
    loc: Loc
    shortcut: bool = False  # written as plain ``p in W``

    @property
    def pred(self) -> Signature:
        return term_signature(self.atom)

    @property
    def positive(self) -> bool:
        """``at most c`` abbreviates ``not ... at least c+1``, so it is a negative literal."""
        return self.negated == (self.op == "at_most")

    @property
    def harmless(self) -> bool:
        """Seed 000: only positive ``at least`` and ``always`` literals are harmless."""
        return self.positive and self.op in ("at_least", "always", "at_most")

    def atom_text(self) -> str:
        return str(self.atom)

    def positive_text(self) -> str:
        if self.shortcut:
            return f"{self.atom} in {self.window}"
        if self.op == "always":
            return f"{self.atom} always in {self.window}"
        word = {"at_least": "at least", "at_most": "at most", "count": "count"}[self.op]
        return f"{self.atom} {word} {self.count} in {self.window}"

    def __str__(self) -> str:
        return ("not " if self.negated else "") + self.positive_text()


@dataclass(frozen=True)
class PlainLiteral:
    """An ASP-Core-2 body literal (atom, comparison, aggregate) kept as a clingo AST node."""
    ast: ast.AST

    def __str__(self) -> str:
        return str(self.ast)


@dataclass(frozen=True)
class ExternalLiteral(PlainLiteral):
    """``[not] &f(t1,...,tn; u1,...,um)``: a call of the user's Python function f (``--py-script``). ``ast`` is
    the clingo comparison it is evaluated as: ``(u1,...,um) = @__sr_x_f(t1,...,tn)`` (``1 = ...`` without
    output terms), so stream data reaches f and comes back only as clingo symbols."""
    name: str = ""
    inputs: tuple = ()
    outputs: tuple = ()
    negated: bool = False
    loc: Loc | None = None

    def __str__(self) -> str:
        ins = ",".join(str(t) for t in self.inputs)
        outs = ",".join(str(t) for t in self.outputs)
        return ("not " if self.negated else "") + f"&{self.name}({ins};{outs})"


BodyItem = Union[StreamingLiteral, PlainLiteral]


#: what a rule's head is: an atom (``atom``), or one of the constructs of a program's choice part: a choice
#: (``{ ... }``, with bounds), a disjunction (``a | b``), none (``constraint``: ``:- body.``) or a weak constraint
#: (``weak``: ``:~ body. [w@p, t]``, and each element of ``#minimize`` / ``#maximize``)
HEAD_KINDS = ("atom", "choice", "disjunction", "constraint", "weak")


@dataclass(frozen=True)
class Rule:
    head: ast.AST            # clingo AST: a Literal with a SymbolicAtom (atom, constraint: #false), an Aggregate
                             # (choice), a Disjunction, or the Minimize statement (weak: weight, priority, terms)
    body: tuple[BodyItem, ...]
    temp: bool
    loc: Loc
    text: str                # the source text, for messages
    trigger: Window | None = None   # ``#trigger_frequency(f unit)``: evaluated only at the time points f selects
    kind: str = "atom"       # HEAD_KINDS

    @property
    def head_pred(self) -> Signature:
        if self.kind != "atom":
            raise ProgramError(f"a {self.kind} rule has no single head predicate")
        return term_signature(self.head.atom.symbol)

    @property
    def head_preds(self) -> tuple[Signature, ...]:
        """The predicates the head can make true (none for constraints and weak constraints)."""
        return head_predicates(self.head, self.kind)

    @property
    def choice(self) -> bool:
        return self.kind != "atom"

    def __str__(self) -> str:
        return rule_text(self.head, self.body, self.temp, self.trigger, self.kind)


def head_predicates(head, kind: str) -> tuple[Signature, ...]:
    """The predicates of a head's atoms (a choice's and a disjunction's elements, not their conditions)."""
    if kind == "atom":
        return (term_signature(head.atom.symbol),)
    if kind in ("constraint", "weak"):
        return ()
    out: list = []
    for element in head.elements:
        literal = element.literal
        if literal.atom.ast_type == ast.ASTType.SymbolicAtom:
            sig = term_signature(literal.atom.symbol)
            if sig not in out:
                out.append(sig)
    return tuple(out)


def weak_suffix(head) -> str:
    """``[w@p, t1, ..., tn]`` of a weak constraint (its Minimize statement)."""
    terms = "".join(f",{t}" for t in head.terms)
    return f"[{head.weight}@{head.priority}{terms}]"


def rule_text(head, body, temp: bool, trigger: Window | None = None, kind: str = "atom") -> str:
    """A rule in I-DLV-sr syntax (``#temp`` / ``#trigger_frequency`` prefix, body items joined by commas)."""
    prefix = ("#temp " if temp else "") + (f"#trigger_frequency({str(trigger)[1:-1]}) " if trigger else "")
    joined = ", ".join(str(b) for b in body)
    if kind == "constraint":
        return f"{prefix}:- {joined}."
    if kind == "weak":
        return f"{prefix}:~ {joined}. {weak_suffix(head)}"
    if not body:
        return f"{prefix}{head}."
    return f"{prefix}{head} :- {joined}."


@dataclass(frozen=True)
class Fact:
    """A ground background fact ``p(c1,...,cn).`` kept as a clingo Symbol (cheap for 60k-fact programs)."""
    symbol: Symbol
    loc: Loc

    @property
    def pred(self) -> Signature:
        return (self.symbol.name, len(self.symbol.arguments))

    def __str__(self) -> str:
        return f"{self.symbol}."


@dataclass(frozen=True)
class InputDomain:
    """``#external p(t) : body.``: the stream atoms of p the program may receive (clingo's own directive for
    atoms that come from outside). A solver kept across time points grounds the program once over this domain
    instead of widening it whenever an unseen atom arrives."""
    statement: ast.AST       # the clingo External statement
    loc: Loc

    @property
    def pred(self) -> Signature:
        return term_signature(self.statement.atom.symbol)

    def __str__(self) -> str:
        body = ", ".join(str(b) for b in self.statement.body)
        return f"#external {self.statement.atom}" + (f" : {body}." if body else ".")


@dataclass(frozen=True)
class Program:
    rules: tuple[Rule, ...]
    shows: tuple[Signature, ...] | None   # None: no #show, output every atom
    file: str = "<string>"
    facts: tuple[Fact, ...] = ()
    domains: tuple[InputDomain, ...] = ()

    @property
    def head_preds(self) -> frozenset:
        return frozenset(p for r in self.rules for p in r.head_preds) | frozenset(f.pred for f in self.facts)

    @property
    def streaming_literals(self) -> tuple[StreamingLiteral, ...]:
        return tuple(b for r in self.rules for b in r.body if isinstance(b, StreamingLiteral))

    def __str__(self) -> str:
        lines = [str(f) for f in self.facts] + [str(r) for r in self.rules] + [str(d) for d in self.domains]
        if self.shows is not None:
            lines += [f"#show {n}/{a}." for n, a in self.shows]
        return "\n".join(lines)


