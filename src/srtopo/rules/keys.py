"""The partition key of a rule stage: which argument of each predicate lets the stage run in key partitions.

A stage is keyed when there is, for each predicate it reads (its window operators' observed predicates
included) and each head it reads back, one argument position such that in every rule one variable V stands
at that position in every atom of those predicates (in the head, the body, under ``not``, inside
aggregates), and V occurs in a positive body atom. Then every atom a rule instance reads or derives carries
the same key value, which came from an atom routed to that value's partition: evaluating each partition on
its own rows derives exactly the atoms of that partition, and their union is the stage's output. Heavy Join's
``a(X,Y) :- b(X,Z) in [w], c(Z,Y) in [w]`` is keyed by Z (b arg 2, c arg 1); Photo-voltaic's reachability
(``reach(X,Z) :- reach(X,Y), link(Y,Z)``) has no such position and runs in one partition. The clock atoms
of ``@now`` and ``#trigger_frequency`` are given to every partition, so they key nothing.

The key also names the heads whose atoms carry the key value at one position (``high/1 arg 1``), so a
runner can evaluate consecutive stages keyed alike in one pass. Window operators keep the arguments of the
atoms they observe (``count N`` appends the count), so a window
atom's key is its observed atom's key.
"""
from __future__ import annotations

import itertools

from clingo import ast

from srtopo.ir.topology import ONE_PARTITION, PartitionKey, WindowOp
from srtopo.logic.keys import SEARCH_LIMIT
from srtopo.rules.ir import CLOCK_PREDICATES, sig_str, symbolic_atoms, term_signature


def _arguments(term) -> list:
    return list(term.arguments) if term.ast_type == ast.ASTType.Function else []


def _occurrences(rule, observed: dict) -> tuple[list, set]:
    """(predicate, arguments, positive body atom?) of every atom of the rule, window atoms as their observed
    predicate; and the predicates in its body."""
    out, body_preds = [], set()
    head = rule.head.atom.symbol
    out.append((sig_str(term_signature(head)), _arguments(head), False, True))
    for literal in rule.body:
        top = (literal.ast_type == ast.ASTType.Literal and literal.sign == ast.Sign.NoSign
               and literal.atom.ast_type == ast.ASTType.SymbolicAtom)
        for node in symbolic_atoms(literal):
            if term_signature(node.symbol)[0] in CLOCK_PREDICATES:
                continue            # provided in every partition by the evaluator itself
            sig = sig_str(term_signature(node.symbol))
            args = _arguments(node.symbol)
            if sig in observed:
                sig, width = observed[sig]
                args = args[:width]
            body_preds.add(sig)
            out.append((sig, args, top, False))      # a positive literal holds one atom
    return out, body_preds


def choice_key(rules, windows: tuple[WindowOp, ...] = ()) -> PartitionKey:
    """The key of a stage's choice part, or ``ONE_PARTITION``: the condition of ``partition_key`` with every atom
    constrained (the heads too, and the atoms of choice elements and their conditions: the part is one solve,
    and its constraints read what it chooses). Each key value's atoms then form a problem of their own, so the
    answer sets of the whole are the unions of each key's, and it has none when some key has none. A weak
    constraint must hold the key variable among its terms: its instances are a set of tuples, and two keys'
    equal tuples would count once in the whole but once per key apart."""
    observed = {w.signature: (w.observed, int(w.observed.rsplit("/", 1)[1])) for w in windows}
    per_rule = []
    for rule in rules:
        occurrences, _preds = _occurrences(rule, observed) if rule.kind == "atom" else ([], None)
        if rule.kind != "atom":
            for node in symbolic_atoms(rule.head):
                if term_signature(node.symbol)[0] not in CLOCK_PREDICATES:
                    occurrences.append((sig_str(term_signature(node.symbol)), _arguments(node.symbol), False,
                                        True))
            occurrences += _occurrences(_Headless(rule.body), observed)[0][1:]
        per_rule.append(occurrences)
    preds = sorted({o[0] for occ in per_rule for o in occ})
    arity = {}
    for occ in per_rule:
        for sig, args, _positive, _head in occ:
            arity[sig] = min(arity.get(sig, len(args)), len(args))
    if not per_rule or any(arity[p] == 0 for p in preds):
        return ONE_PARTITION
    for tried, positions in enumerate(itertools.product(*(range(arity[p]) for p in preds))):
        if tried >= SEARCH_LIMIT:
            break
        pos = dict(zip(preds, positions))
        names = _check(per_rule, pos)
        if names is not None and all(rule.kind != "weak" or name in {_variable(t) for t in rule.head.terms}
                                     for rule, name in zip(rules, names)):
            return PartitionKey(names[0], tuple(sorted(pos.items())))
    return ONE_PARTITION


class _Headless:
    """A rule body under a placeholder head, for ``_occurrences`` (which lists the head first)."""

    def __init__(self, body):
        self.body = body
        self.head = ast.Literal(_LOCATION, ast.Sign.NoSign, ast.SymbolicAtom(ast.Function(_LOCATION, "_", [], 0)))


_LOCATION = ast.Location(ast.Position("<key>", 0, 0), ast.Position("<key>", 0, 0))


def _variable(term) -> str | None:
    if term.ast_type == ast.ASTType.Variable and term.name != "_":
        return term.name
    return None


def partition_key(rules, windows: tuple[WindowOp, ...] = ()) -> PartitionKey:
    """The partition key of a stage's flat rules (``ONE_PARTITION`` when there is none)."""
    observed = {w.signature: (w.observed, int(w.observed.rsplit("/", 1)[1])) for w in windows}
    per_rule = []
    body_preds: set = set()
    for rule in rules:
        occurrences, preds = _occurrences(rule, observed)
        per_rule.append(occurrences)
        body_preds |= preds
    if not per_rule:
        return ONE_PARTITION
    # the head of a rule constrains the key only when the stage reads that predicate back (recursion)
    per_rule = [[o for o in occ if not o[3] or o[0] in body_preds] for occ in per_rule]
    preds = sorted({o[0] for occ in per_rule for o in occ})
    arity = {}
    for occ in per_rule:
        for sig, args, _positive, _head in occ:
            arity[sig] = min(arity.get(sig, len(args)), len(args))
    if any(arity[p] == 0 for p in preds):
        return ONE_PARTITION
    tried = 0
    for positions in itertools.product(*(range(arity[p]) for p in preds)):
        tried += 1
        if tried > SEARCH_LIMIT:
            return ONE_PARTITION
        pos = dict(zip(preds, positions))
        names = _check(per_rule, pos)
        if names is not None:
            pos.update(_head_positions(rules, names, pos))
            return PartitionKey(names[0], tuple(sorted(pos.items())))
    return ONE_PARTITION


def _head_positions(rules, names: list[str], pos: dict) -> dict:
    """Heads whose every rule puts its key variable at one same position: their atoms are keyed there by
    construction, so a later stage keyed on that position reads them without a repartition."""
    found: dict = {}
    for rule, var in zip(rules, names):
        head = rule.head.atom.symbol
        sig = sig_str(term_signature(head))
        if sig in pos:
            continue
        at = {i for i, arg in enumerate(_arguments(head)) if _variable(arg) == var}
        found[sig] = found.get(sig, at) & at
    return {sig: min(at) for sig, at in found.items() if at}


def _check(per_rule, pos: dict) -> list[str] | None:
    """The key variable of every rule under ``pos``, or None if some rule breaks the condition."""
    names = []
    for occ in per_rule:
        var, bound = None, False
        for sig, args, positive, _head in occ:
            name = _variable(args[pos[sig]])
            if name is None or (var is not None and name != var):
                return None
            var = name
            bound = bound or positive
        if var is None or not bound:
            return None
        names.append(var)
    return names

