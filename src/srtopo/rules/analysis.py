"""Static analysis of I-DLV-sr programs ("I-DLV-sr: A Stream Reasoning System based on I-DLV", sections 3 and 4.1)
with networkx.

Safety and stratification reject programs the streaming-model semantics does not cover; the stream
dependency / component graphs, the precedes relation and the macro-nodes give the processing order.
Graph nodes are predicates written ``name/arity``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx
from clingo import ast

from srtopo.errors import ProgramError
from srtopo.rules.ir import (
    ExternalLiteral,
    Program,
    Rule,
    StreamingLiteral,
    sig_str,
    symbolic_atoms,
    term_signature,
    variables,
)

Component = frozenset  # of "name/arity" strings


# ---------------------------------------------------------------- body inspection
def body_predicates(rule: Rule):
    """Yield (predicate, harmless, non_degenerate, item) for every predicate occurrence in the body.

    Harmless (the paper's term): positive ``at least`` / ``always`` literals, including the degenerate positive atom.
    Atoms under ``not`` or inside aggregates count as non-harmless (stratified aggregates only)."""
    for item in rule.body:
        if isinstance(item, StreamingLiteral):
            yield sig_str(item.pred), item.harmless, True, item
            continue
        lit = item.ast
        if lit.ast_type == ast.ASTType.Literal and lit.atom.ast_type == ast.ASTType.SymbolicAtom:
            yield sig_str(term_signature(lit.atom.symbol)), lit.sign == ast.Sign.NoSign, False, item
            continue
        for node in symbolic_atoms(lit):
            yield sig_str(term_signature(node.symbol)), False, False, item


# ---------------------------------------------------------------- safety
def bound_variables(rule: Rule, skip=None) -> set[str]:
    """The variables the rule's positive body binds (``skip``: leave that body item out): positive atoms and
    streaming literals (a positive ``at most`` binds its atom's variables through the atoms its window observes),
    ``count X``'s variable, ``V = expr`` with expr bound, ``V = #agg{...}``, and an external atom's output terms
    once its input terms are bound."""
    return _binding(rule, skip)[0]


def head_variables(rule: Rule) -> set[str]:
    """The head's variables that the body must bind: a choice's or a disjunction's element keeps local the
    variables its condition binds; a weak constraint needs its weight, level and terms bound."""
    head = rule.head
    if rule.kind == "atom":
        return variables(head)
    if rule.kind == "constraint":
        return set()
    if rule.kind == "weak":
        return variables(head.weight) | variables(head.priority) | variables(list(head.terms))
    out: set[str] = set()
    for guard in (getattr(head, "left_guard", None), getattr(head, "right_guard", None)):
        if guard is not None:
            out |= variables(guard.term)
    for element in head.elements:
        out |= (variables(element.literal) | variables(list(element.condition))) - condition_bound(element.condition)
    return out


def condition_bound(literals) -> set[str]:
    """The variables a condition (or a body) binds: its positive atoms, then ``V = term`` comparisons over bound
    variables (intervals included), to a fixpoint."""
    bound: set[str] = set()
    pending = []
    for literal in literals:
        if literal.ast_type != ast.ASTType.Literal or literal.sign != ast.Sign.NoSign:
            continue
        if literal.atom.ast_type == ast.ASTType.SymbolicAtom:
            bound |= variables(literal.atom)
        elif literal.atom.ast_type == ast.ASTType.Comparison:
            pending.append(literal.atom)
    return _close(bound, pending)


def head_conditions(rule: Rule) -> list[str]:
    """The predicates of a choice's or a disjunction's element conditions (what the head reads)."""
    if rule.kind not in ("choice", "disjunction"):
        return []
    return [sig_str(term_signature(a.symbol)) for e in rule.head.elements for a in symbolic_atoms(e.condition)]


def _binding(rule: Rule, skip=None):
    bound: set[str] = set()
    needed: dict[str, str] = {v: "the head" for v in head_variables(rule)}
    pending = []
    for item in rule.body:
        if item is skip:
            continue
        if isinstance(item, StreamingLiteral):
            names = variables(item.atom)
            counter = {item.count} if isinstance(item.count, str) else set()
            if item.negated and item.op != "at_most":
                needed.update({v: f"'{item}'" for v in names | counter if v not in needed})
            elif item.op == "count":
                bound |= names | counter
            else:                   # the counting term of at least / at most must be bound elsewhere
                bound |= names
                needed.update({v: f"the counting term of '{item}'" for v in counter if v not in needed})
            continue
        if isinstance(item, ExternalLiteral):
            if item.negated:
                needed.update({v: f"'{item}'" for v in variables(item.ast) if v not in needed})
            else:
                pending.append(item)
                needed.update({v: f"the input terms of '{item}'" for t in item.inputs for v in variables(t)
                               if v not in needed})
            continue
        lit = item.ast
        if lit.ast_type != ast.ASTType.Literal:
            continue
        atom = lit.atom
        if atom.ast_type == ast.ASTType.SymbolicAtom:
            if lit.sign == ast.Sign.NoSign:
                bound |= variables(atom)
            else:
                needed.update({v: f"'{item}'" for v in variables(atom) if v not in needed})
        elif atom.ast_type == ast.ASTType.Comparison and lit.sign == ast.Sign.NoSign:
            pending.append(atom)
        elif atom.ast_type == ast.ASTType.BodyAggregate and lit.sign == ast.Sign.NoSign:
            pending.append(atom)
    _close(bound, pending)
    for atom in pending:
        if not isinstance(atom, ExternalLiteral) and atom.ast_type == ast.ASTType.Comparison:
            needed.update({v: f"'{atom}'" for v in variables(atom) if v not in needed})
    return bound, needed


def check_safety(program: Program) -> None:
    """Seed 000 safety, extended with ASP-Core-2 bindings by ``V = expr`` and ``V = #agg{...}``
    (the corpus needs it: ``b(Y) :- a(X), Y = X+1, Y < 3.``), and with the I-DLV-sr README's: a positive
    ``at least`` / ``at most`` literal binds its atom's variables but not its counting term; an external atom
    binds its output terms once its inputs are bound."""
    for rule in program.rules:
        bound, needed = _binding(rule)
        unsafe = sorted(v for v in needed if v not in bound)
        if unsafe:
            where = ", ".join(f"{v} (in {needed[v]})" for v in unsafe)
            raise ProgramError(f"rule '{rule.text.strip()}' is unsafe: variable {where} does not occur in a "
                               f"positive (streaming) literal", file=rule.loc.file, line=rule.loc.line,
                               col=rule.loc.col, hint="add a positive literal that binds it")


def _close(bound: set[str], pending) -> set[str]:
    """``bound`` grown (in place) by what the pending comparisons, aggregates and external atoms assign, to a
    fixpoint."""
    changed = True
    while changed:
        changed = False
        for atom in pending:
            for var in _assignable(atom, bound):
                if var not in bound:
                    bound.add(var)
                    changed = True
    return bound


def _assignable(atom, bound: set[str]):
    if isinstance(atom, ExternalLiteral):
        if all(variables(t) <= bound for t in atom.inputs):
            yield from sorted(v for t in atom.outputs for v in variables(t))
        return
    if atom.ast_type == ast.ASTType.Comparison:
        guards = atom.guards
        if len(guards) == 1 and guards[0].comparison == ast.ComparisonOperator.Equal:
            left, right = atom.term, guards[0].term
            for var_side, other in ((left, right), (right, left)):
                if var_side.ast_type == ast.ASTType.Variable and variables(other) <= bound:
                    yield var_side.name
    elif atom.ast_type == ast.ASTType.BodyAggregate:
        for guard in (atom.left_guard, atom.right_guard):
            if guard is not None and guard.comparison == ast.ComparisonOperator.Equal \
                    and guard.term.ast_type == ast.ASTType.Variable:
                yield guard.term.name


# ---------------------------------------------------------------- graphs
def stream_dependency_graph(program: Program) -> nx.DiGraph:
    """G^SD: nodes = head predicates; arc (p, q) if p occurs in the body of a rule with head q;
    label '<' if some such occurrence is a non-degenerate streaming literal."""
    graph = nx.DiGraph()
    heads = {sig_str(p) for p in program.head_preds}
    graph.add_nodes_from(sorted(heads))
    for rule in program.rules:
        read = [(p, streaming) for p, _harmless, streaming, _item in body_predicates(rule)]
        read += [(p, False) for p in head_conditions(rule)]
        for q in (sig_str(h) for h in rule.head_preds):
            for p, streaming in read:
                if p not in heads:
                    continue
                if graph.has_edge(p, q):
                    if streaming:
                        graph[p][q]["label"] = "<"
                else:
                    graph.add_edge(p, q, label="<" if streaming else "")
    return graph


def stream_component_graph(sd: nx.DiGraph) -> nx.DiGraph:
    """G^SC: nodes = SCCs of G^SD (frozensets); arc labelled '<' if some underlying arc is."""
    cond = nx.condensation(sd)
    comp = {n: frozenset(cond.nodes[n]["members"]) for n in cond.nodes}
    graph = nx.DiGraph()
    graph.add_nodes_from(comp.values())
    for p, q, data in sd.edges(data=True):
        a, b = comp[cond.graph["mapping"][p]], comp[cond.graph["mapping"][q]]
        if a == b:
            continue
        label = "<" if data["label"] == "<" or graph.get_edge_data(a, b, {}).get("label") == "<" else ""
        graph.add_edge(a, b, label=label)
    return graph


def precedes(sc: nx.DiGraph) -> frozenset:
    """A < B iff a path from A to B in G^SC contains an arc labelled '<'."""
    out = set()
    for a, b, data in sc.edges(data=True):
        if data["label"] != "<":
            continue
        for x in nx.ancestors(sc, a) | {a}:
            for y in nx.descendants(sc, b) | {b}:
                out.add((x, y))
    return frozenset(out)


def orderings(sc: nx.DiGraph, prec: frozenset, limit: int = 10) -> list[tuple]:
    """All orderings C1..Cn with no Cj < Ci for i < j (the paper's definition; exponential, small graphs)."""
    nodes = sorted(sc.nodes, key=_component_key)
    if len(nodes) > limit:
        raise ProgramError(f"{len(nodes)} components: too many to enumerate their orderings (at most {limit})")
    return [perm for perm in itertools.permutations(nodes)
            if not any((perm[j], perm[i]) in prec for i in range(len(perm)) for j in range(i + 1, len(perm)))]


def maximal_macro_nodes(ordering, prec: frozenset) -> list[frozenset]:
    """Maximal runs of consecutive components in which no member precedes another.

    Read literally, section 4.1 only asks consecutive members to be alongside, but Example 6 states that o2
    = {a,b},{e},{d} gives {a,b,e} and {d} although {e} is alongside {d}: members must be pairwise alongside."""
    out: list[list] = []
    for comp in ordering:
        if out and not any((m, comp) in prec for m in out[-1]):
            out[-1].append(comp)
        else:
            out.append([comp])
    return [frozenset().union(*run) for run in out]


def processing_order(sc: nx.DiGraph, prec: frozenset) -> list[tuple[Component, ...]]:
    """Macro-nodes in processing order, each a tuple of components in a topological order.

    The paper only asks consecutive components to be alongside; evaluating such a run in one solver call
    can miss a '<' dependency between non-consecutive members, so a component joins the open macro-node
    only if no member precedes it, and components are taken in a topological order of G^SC (so ordinary
    dependencies always point forwards). Greedy: prefer a ready component that can join."""
    indeg = {n: sc.in_degree(n) for n in sc.nodes}
    ready = sorted((n for n, d in indeg.items() if d == 0), key=_component_key)
    order: list[list] = []
    while ready:
        current = order[-1] if order else None
        pick = None
        if current is not None:
            pick = next((n for n in ready if not any((m, n) in prec for m in current)), None)
        if pick is None:
            pick = ready[0]
            order.append([pick])
        else:
            current.append(pick)
        ready.remove(pick)
        for succ in sc.successors(pick):
            indeg[succ] -= 1
            if indeg[succ] == 0:
                ready.append(succ)
        ready.sort(key=_component_key)
    return [tuple(run) for run in order]


def _component_key(comp) -> tuple:
    return tuple(sorted(comp))


def streaming_recursive_rules(program: Program, sd: nx.DiGraph) -> frozenset[int]:
    """Indices of rules r with p in preds(B(r)), q = pred(H(r)) on a common cycle of G^SD that has a '<' arc."""
    comp_of = {}
    labelled = set()
    for comp in nx.strongly_connected_components(sd):
        comp = frozenset(comp)
        for n in comp:
            comp_of[n] = comp
        if any(sd[u][v]["label"] == "<" for u in comp for v in sd.successors(u) if v in comp):
            labelled.add(comp)
    out = set()
    for i, rule in enumerate(program.rules):
        for q in (sig_str(h) for h in rule.head_preds):
            if comp_of.get(q) in labelled and any(comp_of.get(p) is comp_of[q] for p, *_ in body_predicates(rule)):
                out.add(i)
    return frozenset(out)


def choice_part(program: Program, sd: nx.DiGraph) -> frozenset:
    """The predicates of the program's choice part: the heads of choices and disjunctions, the predicates on a
    cycle through a plain non-harmless literal (negation or an aggregate: unstratified, several answer sets),
    and every predicate that depends on one of them. Everything else is the stratified part, evaluated as
    before; the choice part is one clingo call per time point after it (with the constraints and weak
    constraints), which keeps one answer set."""
    comp_of = {}
    for comp in nx.strongly_connected_components(sd):
        comp = frozenset(comp)
        for n in comp:
            comp_of[n] = comp
    through_window = set()      # cycles through a window that reads the current time point
    for rule in program.rules:
        for q in (sig_str(h) for h in rule.head_preds):
            for item in rule.body:
                if isinstance(item, StreamingLiteral) and comp_of.get(sig_str(item.pred)) is comp_of.get(q) \
                        and q in comp_of and (item.window.points is None or 0 in item.window.points):
                    through_window.add(comp_of[q])
    roots = set()
    for rule in program.rules:
        if rule.kind in ("choice", "disjunction"):
            roots.update(sig_str(h) for h in rule.head_preds)
            continue
        if rule.kind != "atom":
            continue
        q = sig_str(rule.head_pred)
        for p, harmless, streaming, _item in body_predicates(rule):
            # a cycle through a window that reads the current time point stays the stratified part's (and
            # its error): windows are read before the choice part is solved
            if not harmless and not streaming and p in comp_of and comp_of[p] is comp_of.get(q) \
                    and comp_of[q] not in through_window:
                roots.add(q)
    out = set(roots)
    for root in roots:
        out |= nx.descendants(sd, root)
    return frozenset(out)


def reads_only_the_past(item) -> bool:
    """A streaming literal whose window reads earlier time points only (``{1}``, ``{1,3}``): what it sees is
    fixed before the current time point is evaluated, so it closes no cycle at that time point."""
    window = getattr(item, "window", None)
    return window is not None and window.points is not None and 0 not in window.points


def check_stratified(program: Program, sd: nx.DiGraph, choice: frozenset = frozenset()) -> None:
    """Reject a non-harmless literal whose predicate lies on a cycle through the rule's head, outside the choice
    part (``choice``), and a non-harmless streaming literal on such a cycle anywhere (a window reads the
    current time point's atoms before the rules that derive them are evaluated)."""
    comp_of = {}
    for comp in nx.strongly_connected_components(sd):
        comp = frozenset(comp)
        for n in comp:
            comp_of[n] = comp
    for rule in program.rules:
        if rule.kind != "atom":
            continue
        q = sig_str(rule.head_pred)
        for p, harmless, streaming, item in body_predicates(rule):
            if harmless or p not in comp_of or comp_of[p] is not comp_of.get(q):
                continue
            if q in choice and not streaming:
                continue
            if streaming and reads_only_the_past(item):     # the history, fixed before the time point is solved
                continue
            path = nx.shortest_path(sd, q, p) if p != q else [q]
            cycle = " -> ".join(path + [q])
            raise ProgramError(
                f"program is not stratified: rule '{rule.text.strip()}' uses the non-harmless literal "
                f"'{item}' on the cycle {cycle}", file=rule.loc.file, line=rule.loc.line, col=rule.loc.col,
                hint="negation, 'count', 'at most' and aggregates may only use predicates of lower strata")


@dataclass(frozen=True, eq=False)
class Analysis:
    sd: nx.DiGraph
    sc: nx.DiGraph
    prec: frozenset
    order: tuple                  # macro-nodes, each a tuple of components (frozensets of "p/n")
    recursive_rules: frozenset    # indices into program.rules
    choice: frozenset = frozenset()   # the choice part's predicates ("p/n"; ``choice_part``)

    @property
    def macro_nodes(self) -> list[frozenset]:
        return [frozenset().union(*m) for m in self.order]

    def describe(self) -> str:
        lines = ["stream dependency graph:"]
        lines += [f"  {p} -> {q}{' <' if d['label'] else ''}" for p, q, d in sorted(self.sd.edges(data=True))]
        lines.append("processing order (macro-nodes):")
        lines += ["  " + " | ".join("{" + ",".join(sorted(c)) + "}" for c in m) for m in self.order]
        if self.choice:
            lines.append("choice part (one answer set per time point, after the above): "
                         + ",".join(sorted(self.choice)))
        return "\n".join(lines)


def analyse(program: Program) -> Analysis:
    check_safety(program)
    sd = stream_dependency_graph(program)
    choice = choice_part(program, sd)
    check_stratified(program, sd, choice)
    stratified = sd.subgraph(n for n in sd.nodes if n not in choice).copy()
    sc = stream_component_graph(stratified)
    prec = precedes(sc)
    return Analysis(sd, sc, prec, tuple(processing_order(sc, prec)), streaming_recursive_rules(program, sd), choice)
