"""The partition key of a Streamlog stage: which argument of each temporal predicate lets it run in key partitions.

Zaniolo, "A Logic-Based Language for Data Streams": every stream predicate and every predicate derived from one
carries its timestamp as argument 1. The stage is keyed when there is, for each of these predicates (the stream
inputs and the derived ones), one argument position beyond the timestamp such that in every rule one variable V
stands at that position in every atom of those predicates (in the head, in positive and negated goals, inside
aggregates and conditions), and V occurs in a positive goal on one of them. Every atom a rule instance reads or
derives then carries the same key value, so evaluating each key partition on its own facts derives exactly that
partition's facts, and the union of the partitions' outputs is the program's. This is the analysis of the rule
stages (``srtopo.rules.keys``) with the timestamp excluded and heads always constrained, since a Streamlog stage
writes and reads back every derived predicate.

* Background (timestamp-free) atoms are given to every partition: they key nothing, and a rule whose key
  variable only a background goal binds is not keyed (its instances would derive the key values of every
  partition in each).
* The program's facts of temporal predicates are routed by their value at the key position, like stream facts.
* A ``uts`` predicate is keyed in its stored, stamped form: ``darc(X,Y)`` read with ``uts(T)`` is ``darc/3``,
  whose argument 2 is the written X.
* Among several keys the first is taken, predicates in sorted ``name/arity`` order, each position from the lowest;
  the key's name is the variable the first temporal rule holds at its key positions.

Continuous shortest paths (``path(T,X,Z,D) :- path(T1,X,Y,D1), path(T2,Y,Z,D2), ...``) joins on Y at two
positions and runs in one partition; ``avg(T,S,A) :- reading(T,S,_), A = #sum{...: reading(T0,S,V), ...}`` is
keyed by S.
"""
from __future__ import annotations

from clingo import ast

from srtopo.ir.topology import ONE_PARTITION, PartitionKey
from srtopo.logic.keys import SEARCH_LIMIT
from srtopo.logic.syntax import sig_str, symbolic_atoms, term_signature
from srtopo.streamlog.program import Program

_T = ast.ASTType


def _arguments(term) -> list:
    return list(term.arguments) if term.ast_type == _T.Function else []


def _variable(term) -> str | None:
    if term.ast_type == _T.Variable and term.name != "_":
        return term.name
    return None


def _occurrences(node, temporal: set) -> list:
    """(predicate, arguments, positive goal?) of every atom of a temporal predicate in the rule, the head first."""
    head = node.head.atom.symbol
    out = [(sig_str(term_signature(head)), _arguments(head), False)]
    for literal in node.body:
        positive = (literal.ast_type == _T.Literal and literal.sign == ast.Sign.NoSign
                    and literal.atom.ast_type == _T.SymbolicAtom)
        for atom in symbolic_atoms(literal):
            sig = term_signature(atom.symbol)
            if sig in temporal:                  # background atoms are in every partition
                out.append((sig_str(sig), _arguments(atom.symbol), positive))
    return out


def _consistent(occurrences, pos: dict) -> str | None | bool:
    """The one variable at the assigned key positions of a rule's atoms (None when none is assigned yet), or
    False when two atoms disagree or one holds no variable there."""
    var = None
    for sig, args, _positive in occurrences:
        if sig not in pos:
            continue
        name = _variable(args[pos[sig]])
        if name is None or (var is not None and name != var):
            return False
        var = name
    return var


def partition_key(program: Program) -> PartitionKey:
    """The partition key of a parsed program's stage (``ONE_PARTITION`` when there is none)."""
    temporal = set(program.temporal) | {(f.name, len(f.arguments)) for f in program.timed_facts}
    per_rule = [_occurrences(r.node, temporal) for r in program.rules if r.temporal]
    if not per_rule or not all(any(positive for _s, _a, positive in occ) for occ in per_rule):
        return ONE_PARTITION            # the key variable must occur in a positive goal of a temporal predicate
    arity = {sig_str(sig): sig[1] for sig in temporal}
    preds = sorted(arity)
    # a position is a candidate only where every atom of the predicate holds a variable
    candidates = {p: [i for i in range(1, arity[p])
                      if all(_variable(args[i]) for occ in per_rule for sig, args, _ in occ if sig == p)]
                  for p in preds}
    if not all(candidates.values()):
        return ONE_PARTITION
    touching = {p: [occ for occ in per_rule if any(sig == p for sig, _a, _p in occ)] for p in preds}
    pos: dict = {}
    visited = 0

    def search(index: int) -> bool:
        """Assign the predicates from ``index`` on, depth first in sorted order: the first key found is the first
        of the candidates' product order."""
        nonlocal visited
        if index == len(preds):
            return True
        pred = preds[index]
        for i in candidates[pred]:
            visited += 1
            if visited > SEARCH_LIMIT:
                return False
            pos[pred] = i
            if all(_consistent(occ, pos) is not False for occ in touching[pred]) and search(index + 1):
                return True
            del pos[pred]
        return False

    if not search(0):
        return ONE_PARTITION
    return PartitionKey(_consistent(per_rule[0], pos), tuple(sorted(pos.items())))
