"""A Streamlog program: parsed by ``clingo.ast``, its predicates and rules classified by timestamp order.

Zaniolo, "A Logic-Based Language for Data Streams": every stream predicate and every predicate derived from one
carries its timestamp as the first argument. A rule is

* **sequential** when a positive goal has the head's timestamp and no goal is later;
* **strictly sequential** when every goal is earlier than the head;
* **forward** when no goal is later but no positive goal is known to equal the head
  (``h(T) :- a(T0), b(T1), T = T0 + 1, T1 <= T``): its facts are also final at their timestamp, but they need a
  visit of a timestamp no input may have reached;
* **time-warping** when a positive goal may be later than the head: its facts would be emitted out of timestamp
  order, and the program is rejected.

Negation and aggregates are **non-blocking** when every fact they look at has a timestamp no later than the head's
and the predicates they look at are final at a timestamp once the input has passed it (inputs, background, and
predicates no time-warping rule feeds); otherwise the program is **blocking** and rejected, naming rule and goal.
The **bistate** version renames goals at the head's timestamp ``_new`` and earlier ones ``_old``; the program is
XY-stratified, and accepted, iff the bistate version is stratified.

Built-ins (used when the program does not define them): ``lgr(T1,T2,T)`` is ``T = max(T1,T2)`` (the rule is split
in two: ``T = T1, T2 <= T1`` and ``T = T2, T1 <= T2``); ``uts(T)`` binds T to the arrival timestamp of the rule's
one timestamp-free stream goal (``singlearc(T,X,Y) :- darc(X,Y), uts(T)``).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import networkx as nx
from clingo import SymbolType, ast, parse_term

from srtopo.errors import ProgramError
from srtopo.logic.syntax import RESERVED, Loc, is_atom_term, parse_statements, read_program, term_signature, walk
from srtopo.streamlog.order import EARLIER, EQUAL, NOT_LATER, UNKNOWN, TimeOrder

LGR = ("lgr", 3)
UTS = ("uts", 1)

SEQUENTIAL = "sequential"
STRICT = "strictly sequential"
FORWARD = "forward"
WARPING = "time-warping"
STATIC = "background"
INPUT = "input"

POSITIVE, NEGATIVE, AGGREGATE = "positive", "negative", "aggregate"
_T = ast.ASTType


@dataclass(frozen=True)
class Goal:
    """A body atom of a temporal predicate, how it is used, and how its timestamp compares with the head's."""
    signature: tuple
    use: str                 # POSITIVE, NEGATIVE (under ``not``) or AGGREGATE (in an aggregate or a condition)
    text: str
    order: str               # EQUAL, NOT_LATER, EARLIER or UNKNOWN


@dataclass(frozen=True)
class Rule:
    loc: Loc
    text: str
    head: tuple                      # (name, arity)
    temporal: bool
    goals: tuple = ()                # Goals on temporal predicates (static goals are not listed)
    statics: tuple = ()              # signatures of background predicates in the body
    kind: str = STATIC
    node: ast.AST = field(default=None, compare=False, repr=False)   # the rule as clingo parsed it (rewritten)

    @property
    def anchored(self) -> bool:
        return any(g.use == POSITIVE and g.order == EQUAL for g in self.goals)


@dataclass(frozen=True)
class Finding:
    """An error that rejects the program (``kind``: blocking, time-warping, not XY-stratified, unsafe, ...)."""
    kind: str
    message: str
    loc: Loc | None = None
    hint: str | None = None

    def error(self) -> ProgramError:
        loc = self.loc
        return ProgramError(f"{self.kind}: {self.message}", file=loc.file if loc else None,
                            line=loc.line if loc else None, col=loc.col if loc else None, hint=self.hint)


@dataclass(frozen=True)
class Program:
    file: str
    rules: tuple                     # Rules, lgr and uts rewritten
    background: tuple                # texts of facts and rules without timestamps, and #const definitions
    timed_facts: tuple               # Symbols: the program's ground facts of temporal predicates
    inputs: frozenset                # temporal signatures the stream may give (as stored: uts ones with +1 arity)
    derived: frozenset               # temporal signatures some rule derives
    statics: frozenset               # background signatures
    uts: frozenset                   # timestamp-free stream signatures (as written in the stream)
    shown: frozenset                 # temporal signatures written to the output
    predicate_kinds: dict            # signature -> SEQUENTIAL / STRICT / FORWARD / WARPING / INPUT / STATIC
    findings: tuple                  # Findings; the program runs only when there are none
    source_text: str = field(default="", compare=False, repr=False)

    def check(self) -> "Program":
        """The program itself, or the first finding as a ProgramError (blocking ones first); an empty program
        (no rule, no fact) is an error of its own, not a stream that gives nothing."""
        if not self.rules and not self.timed_facts and not self.background:
            raise ProgramError("the program is empty: it has no rule and no fact", file=self.file,
                               hint="a Streamlog rule derives timestamped facts from a stream, e.g. "
                                    "first(T,X) :- msg(T,X), not previous(T,X).")
        if self.findings:
            raise self.findings[0].error()
        return self

    @property
    def temporal(self) -> frozenset:
        return self.inputs | self.derived

    @property
    def history(self) -> frozenset:
        """The predicates some rule reads at an earlier timestamp (the bistate program's ``_old`` ones): the only
        facts of past timestamps the evaluation needs."""
        return frozenset(g.signature for r in self.rules for g in r.goals if g.order != EQUAL)


# --- parsing -----------------------------------------------------------------------------------------------

_UNSUPPORTED = {
    _T.Minimize: "#minimize and weak constraints", _T.External: "#external", _T.Heuristic: "#heuristic",
    _T.ProjectAtom: "#project", _T.ProjectSignature: "#project", _T.Edge: "#edge", _T.Script: "#script",
    _T.TheoryDefinition: "#theory", _T.Defined: "#defined", _T.ShowTerm: "#show of a term",
}


def _loc(node, file: str) -> Loc:
    begin = node.location.begin
    return Loc(file, begin.line, begin.column)


def _error(message: str, node, file: str, hint: str | None = None) -> ProgramError:
    loc = _loc(node, file)
    return ProgramError(message, file=loc.file, line=loc.line, col=loc.col, hint=hint)


def _atoms(node):
    """(SymbolicAtom, use) below a body literal."""
    if node.ast_type == _T.Literal:
        if node.atom.ast_type == _T.SymbolicAtom:
            yield node.atom, (POSITIVE if node.sign == ast.Sign.NoSign else NEGATIVE)
        elif node.atom.ast_type == _T.BodyAggregate:
            for atom in (n for n in walk(node.atom) if n.ast_type == _T.SymbolicAtom):
                yield atom, AGGREGATE
    elif node.ast_type == _T.ConditionalLiteral:
        for atom in (n for n in walk(node) if n.ast_type == _T.SymbolicAtom):
            yield atom, AGGREGATE


def _signature(atom, file: str) -> tuple:
    term = atom.symbol
    if term.ast_type == _T.UnaryOperation:
        raise _error("classical negation (-p) is not supported in Streamlog", atom.symbol, file,
                     hint="use a predicate of its own, e.g. not_p")
    if not is_atom_term(term):
        raise _error(f"'{term}' is not an atom", term, file)
    sig = term_signature(term)
    if sig[0].startswith(RESERVED):
        raise _error(f"predicate '{sig[0]}' uses the reserved prefix '{RESERVED}'", term, file,
                     hint="rename it; names starting with '__' are generated by srtopo")
    return sig


def _check_reserved(node, file: str) -> None:
    if RESERVED not in str(node):            # clingo prints every name as written: nothing to look for
        return
    for n in walk(node):
        name = n.name if n.ast_type == _T.Function else \
            _reserved_in(n.symbol) if n.ast_type == _T.SymbolicTerm else None
        if name and name.startswith(RESERVED):
            raise _error(f"'{name}' uses the reserved prefix '{RESERVED}'", n, file,
                         hint="rename it; names starting with '__' are generated by srtopo")


def _reserved_in(symbol) -> str | None:
    """The first name with the reserved prefix in a parsed constant (``__sl_now`` alone is one: it would be read as
    the current timestamp, the part's parameter)."""
    if symbol.type != SymbolType.Function:
        return None
    if symbol.name.startswith(RESERVED):
        return symbol.name
    return next(filter(None, (_reserved_in(a) for a in symbol.arguments)), None)


def _check_rule(rule, file: str) -> None:
    _check_reserved(rule, file)
    head = rule.head
    if head.ast_type == _T.Literal and head.atom.ast_type == _T.BooleanConstant:
        raise _error("integrity constraints are not supported in Streamlog (there is no timestamp to report a "
                     "violation at)", rule, file, hint="derive a timestamped atom instead: violation(T) :- ...")
    if head.ast_type != _T.Literal or head.atom.ast_type != _T.SymbolicAtom or head.sign != ast.Sign.NoSign:
        raise _error("only atoms are heads in Streamlog (no choice, disjunction or aggregate head)", rule, file,
                     hint="Streamlog is Datalog with stratified negation")
    _signature(head.atom, file)
    for lit in rule.body:
        if lit.ast_type == _T.Literal and lit.sign == ast.Sign.DoubleNegation:
            raise _error("double negation (not not) is not supported in Streamlog", lit, file)
        if lit.ast_type == _T.Literal and lit.atom.ast_type == _T.TheoryAtom:
            raise _error("theory atoms are not supported in Streamlog", lit, file)
        for atom, _use in _atoms(lit):
            _signature(atom, file)


def _source_text(lines: list, node) -> str:
    """The statement as the user wrote it (whitespace folded), or clingo's printing when the text is not at hand."""
    begin, end = node.location.begin, node.location.end
    if lines and 0 < begin.line <= end.line <= len(lines):
        if begin.line == end.line:
            part = lines[begin.line - 1][begin.column - 1:end.column - 1]
        else:
            part = "\n".join([lines[begin.line - 1][begin.column - 1:]] + lines[begin.line:end.line - 1]
                             + [lines[end.line - 1][:end.column - 1]])
        part = " ".join(part.split())
        if part:
            return part
    return str(node)


def _head_sig(rule) -> tuple:
    return term_signature(rule.head.atom.symbol)


def _is_fact(rule) -> bool:
    return not rule.body and not any(n.ast_type == _T.Variable for n in walk(rule.head))


# --- lgr and uts ----------------------------------------------------------------------------------------------

def _comparison(loc, left, op, right):
    return ast.Literal(loc, ast.Sign.NoSign, ast.Comparison(left, [ast.Guard(op, right)]))


def _expand_lgr(rule, defined: set) -> list:
    """``lgr(T1,T2,T)`` (``T = max(T1,T2)``) as two rules, once per lgr goal."""
    if LGR in defined:
        return [rule]
    for i, lit in enumerate(rule.body):
        if lit.ast_type == _T.Literal and lit.atom.ast_type == _T.SymbolicAtom and lit.sign == ast.Sign.NoSign \
                and is_atom_term(lit.atom.symbol) and term_signature(lit.atom.symbol) == LGR:
            t1, t2, t = lit.atom.symbol.arguments
            ops = ast.ComparisonOperator
            out = []
            for first, second in ((t1, t2), (t2, t1)):
                body = list(rule.body[:i]) + [_comparison(lit.location, t, ops.Equal, first),
                                               _comparison(lit.location, second, ops.LessEqual, first)] \
                    + list(rule.body[i + 1:])
                out.extend(_expand_lgr(rule.update(body=body), defined))
            return out
    return [rule]


def _rewrite_uts(rule, defined: set, facts: set, file: str, uts: set) -> object:
    """``darc(X,Y), uts(T)`` as ``darc(T,X,Y)``: the stream reader stamps each darc line with its arrival."""
    if UTS in defined or UTS in facts:
        return rule
    body = list(rule.body)
    stamps = [i for i, lit in enumerate(body) if lit.ast_type == _T.Literal and lit.atom.ast_type == _T.SymbolicAtom
              and is_atom_term(lit.atom.symbol) and term_signature(lit.atom.symbol) == UTS]
    if not stamps:
        return rule
    if len(stamps) > 1 or body[stamps[0]].sign != ast.Sign.NoSign:
        raise _error("a rule reads uts(T) once, positively", body[stamps[-1]], file)
    stamp = body[stamps[0]].atom.symbol.arguments[0]
    if stamp.ast_type != _T.Variable:
        raise _error("uts(T) binds a variable", body[stamps[0]], file, hint="write uts(T) with a fresh variable T")
    inputs = [i for i, lit in enumerate(body) if lit.ast_type == _T.Literal and lit.atom.ast_type == _T.SymbolicAtom
              and lit.sign == ast.Sign.NoSign and i != stamps[0]
              and term_signature(lit.atom.symbol) not in defined | facts]
    if len(inputs) != 1:
        raise _error(f"a rule with uts({stamp}) reads exactly one timestamp-free stream goal, this one reads "
                     f"{len(inputs)}", body[stamps[0]], file,
                     hint="join the stamped facts in a rule of their own: s(T,X) :- d(X), uts(T).")
    target = body[inputs[0]]
    uts.add(term_signature(target.atom.symbol))
    symbol = target.atom.symbol
    stamped = ast.Function(symbol.location, symbol.name, [stamp] + list(symbol.arguments), symbol.external) \
        if symbol.ast_type == _T.Function else ast.Function(symbol.location, symbol.symbol.name, [stamp], 0)
    body[inputs[0]] = target.update(atom=target.atom.update(symbol=stamped))
    del body[stamps[0]]
    return rule.update(body=body)


# --- analysis -------------------------------------------------------------------------------------------------

def _order(body) -> TimeOrder:
    order = TimeOrder()
    for lit in body:
        if lit.ast_type == _T.Literal and lit.sign == ast.Sign.NoSign and lit.atom.ast_type == _T.Comparison:
            order.add_comparison(lit.atom)
    return order


def _element_orders(lit, order: TimeOrder):
    """(atom, use, order) for the atoms of an aggregate or conditional literal: each element's own comparisons
    added to the rule's."""
    if lit.ast_type == _T.ConditionalLiteral:
        local = order.copy()
        for cond in lit.condition:
            if cond.atom.ast_type == _T.Comparison and cond.sign == ast.Sign.NoSign:
                local.add_comparison(cond.atom)
        for atom in (n for n in walk(lit) if n.ast_type == _T.SymbolicAtom):
            yield atom, AGGREGATE, local
        return
    for element in lit.atom.elements:
        local = order.copy()
        for cond in element.condition:
            if cond.ast_type == _T.Literal and cond.atom.ast_type == _T.Comparison and cond.sign == ast.Sign.NoSign:
                local.add_comparison(cond.atom)
        for atom in (n for n in walk(element) if n.ast_type == _T.SymbolicAtom):
            yield atom, AGGREGATE, local


def _rule_goals(rule, temporal: set):
    """Goals on temporal predicates (with their order) and the background signatures of the body."""
    head_ts = rule.head.atom.symbol.arguments[0]
    order = _order(rule.body)
    goals, statics = [], []
    for lit in rule.body:
        if lit.ast_type == _T.Literal and lit.atom.ast_type == _T.SymbolicAtom:
            found = [(lit.atom, POSITIVE if lit.sign == ast.Sign.NoSign else NEGATIVE, order)]
        elif lit.ast_type == _T.ConditionalLiteral or (lit.ast_type == _T.Literal
                                                         and lit.atom.ast_type == _T.BodyAggregate):
            found = list(_element_orders(lit, order))
        else:
            continue
        for atom, use, local in found:
            sig = term_signature(atom.symbol)
            if sig not in temporal:
                statics.append(sig)
                continue
            text = str(atom) if use != NEGATIVE else f"not {atom}"
            goals.append(Goal(sig, use, text, local.relation(atom.symbol.arguments[0], head_ts)))
    return tuple(goals), tuple(sorted(set(statics)))


def _rule_kind(goals) -> str:
    if any(g.use == POSITIVE and g.order == UNKNOWN for g in goals):
        return WARPING
    if any(g.use == POSITIVE and g.order == EQUAL for g in goals):
        return SEQUENTIAL
    if all(g.order == EARLIER for g in goals):
        return STRICT
    return FORWARD


def _predicate_kinds(rules, inputs, statics) -> dict:
    kinds = {sig: INPUT for sig in inputs}
    kinds.update({sig: STATIC for sig in statics})
    by_head: dict = {}
    for r in rules:
        if r.temporal:
            by_head.setdefault(r.head, []).append(r.kind)
    for sig, found in by_head.items():
        if WARPING in found:
            kinds[sig] = WARPING
        elif all(k == STRICT for k in found):
            kinds[sig] = STRICT
        elif all(k == SEQUENTIAL for k in found):
            kinds[sig] = SEQUENTIAL
        else:
            kinds[sig] = FORWARD
    return kinds


def _late_predicates(rules) -> dict:
    """Predicates whose facts at a timestamp may still grow after the input passed it: those a time-warping rule
    derives, and those derived from them. Maps each to the warping rule that makes it late."""
    late = {r.head: r for r in rules if r.temporal and r.kind == WARPING}
    changed = True
    while changed:
        changed = False
        for r in rules:
            if r.temporal and r.head not in late:
                cause = next((late[g.signature] for g in r.goals if g.signature in late), None)
                if cause is not None:
                    late[r.head] = cause
                    changed = True
    return late


def _blocking(rules, late: dict) -> list:
    found = []
    for r in rules:
        for g in r.goals:
            if g.use == POSITIVE:
                continue
            what = "negated goal" if g.use == NEGATIVE else "aggregate over"
            if g.order == UNKNOWN:
                found.append(Finding("blocking", f"the {what} '{g.text}' of rule '{r.text}' looks at facts that may "
                                     "be later than the head's timestamp, so the answer waits for the whole stream",
                                     r.loc, hint="compare the goal's timestamp with the head's (e.g. T0 < T) or "
                                                 "answer the query over a finite stream"))
            elif g.signature in late:
                cause = late[g.signature]
                found.append(Finding("blocking", f"the {what} '{g.text}' of rule '{r.text}' looks at "
                                     f"{g.signature[0]}/{g.signature[1]}, whose facts are not final at their "
                                     f"timestamp (rule '{cause.text}' at {cause.loc} derives them from a later goal)",
                                     r.loc, hint="a query that needs the end of the stream cannot answer "
                                                 "continuously"))
    return found


def dependency_graph(rules) -> nx.DiGraph:
    """The bistate program's predicate graph: head_new -> goal_new for goals at the head's timestamp (or maybe
    at it), head -> background goal; edge attribute ``negative`` for negation and aggregates."""
    graph = nx.DiGraph()
    for r in rules:
        head = (r.head, "new") if r.temporal else (r.head, "static")
        graph.add_node(head)
        if r.temporal:
            targets = [((g.signature, "new"), g.use != POSITIVE) for g in r.goals if g.order in (EQUAL, NOT_LATER)]
            targets += [((sig, "static"), False) for sig in r.statics]    # background never depends back
        else:
            targets = [((term_signature(a.symbol), "static"), use != POSITIVE)
                       for lit in r.node.body for a, use in _atoms(lit)]
        for target, negative in targets:
            old = graph.get_edge_data(head, target)
            graph.add_edge(head, target, negative=negative or bool(old and old["negative"]), rule=r)
    return graph


def _unstratified(rules) -> list:
    graph = dependency_graph(rules)
    found = []
    for component in nx.strongly_connected_components(graph):
        for u, v, data in graph.subgraph(component).edges(data=True):
            if data["negative"]:
                r = data["rule"]
                name = f"{u[0][0]}/{u[0][1]}"
                where = "at the same timestamp " if u[1] == "new" else ""
                found.append(Finding("not XY-stratified", f"{name} depends through negation or an aggregate on "
                                     f"itself {where}(rule '{r.text}'): its bistate version is not stratified",
                                     r.loc, hint="make the recursion through negation go to an earlier "
                                                 "timestamp (T0 < T)"))
                break
    return found


def _warping(rules) -> list:
    out = []
    for r in rules:
        if r.temporal and r.kind == WARPING:
            later = next(g for g in r.goals if g.use == POSITIVE and g.order == UNKNOWN)
            out.append(Finding("time-warping", f"rule '{r.text}' derives {r.head[0]}/{r.head[1]} from the goal "
                               f"'{later.text}' that may be later than its head, so its facts would be emitted out "
                               "of timestamp order", r.loc,
                               hint="give the head the latest goal's timestamp (repeated(T,X) :- msg(T,X), "
                                    "msg(T0,X), T0 < T)"))
    return out


def analyse(statements: list, file: str, text: str = "") -> Program:
    rules, background, shows = [], [], []
    show_given = False
    for st in statements:
        kind = st.ast_type
        if kind == _T.Program:
            if st.name != "base" or st.parameters:
                raise _error("#program parts are not supported in Streamlog", st, file)
        elif kind == _T.Rule:
            _check_rule(st, file)
            rules.append(st)
        elif kind == _T.ShowSignature:
            show_given = True
            if st.name:
                shows.append((st.name, st.arity))
        elif kind == _T.Definition:
            background.append(str(st))
        elif kind == _T.Comment:
            continue
        elif kind in _UNSUPPORTED:
            raise _error(f"{_UNSUPPORTED[kind]} is not supported in Streamlog", st, file,
                         hint="#show p/n selects output predicates" if kind == _T.ShowTerm else None)
        else:
            raise _error(f"'{st}' is not supported in Streamlog", st, file)

    fact_rules = [r for r in rules if _is_fact(r)]
    facts = {_head_sig(r) for r in fact_rules}
    defined = {_head_sig(r) for r in rules if not _is_fact(r)}
    uts: set = set()
    expanded = []
    for r in rules:
        if _is_fact(r):
            continue
        for variant in _expand_lgr(r, defined | facts):
            expanded.append(_rewrite_uts(variant, defined, facts, file, uts))
    used = {term_signature(a.symbol) for r in expanded for lit in r.body for a, _use in _atoms(lit)}
    builtins = {s for s in (LGR, UTS) if s not in defined | facts}
    stored_uts = {(name, n + 1) for name, n in uts}
    shown_unread = {sig for sig in shows if sig not in used | defined | facts}   # shown stream predicates
    inputs = (used - defined - facts - builtins) | stored_uts | shown_unread
    inputs -= uts - (used & stored_uts)     # a uts predicate exists only stamped (unless read stamped too)
    for name, n in uts:
        if (name, n) in used:
            bad = next(r for r in expanded for lit in r.body for a, _u in _atoms(lit)
                       if term_signature(a.symbol) == (name, n))
            raise _error(f"{name}/{n} is read with uts() in one rule and without it here; a timestamp-free stream "
                         "predicate is read with uts(T) in every rule", bad, file)
    temporal = set(inputs)
    changed = True
    while changed:
        changed = False
        for r in expanded:
            sig = _head_sig(r)
            if sig not in temporal and any(term_signature(a.symbol) in temporal
                                           for lit in r.body for a, _u in _atoms(lit)):
                temporal.add(sig)
                changed = True
    for sig in temporal:
        if sig[1] == 0:
            where = next((r for r in expanded if _head_sig(r) == sig), None)
            raise _error(f"{sig[0]} has no timestamp argument, but it is a stream predicate or derived from one",
                         where if where is not None else statements[0], file,
                         hint=f"give it the timestamp as first argument: {sig[0]}(T)")

    text_lines = text.split("\n")
    out_rules = []
    for r in expanded:
        sig = _head_sig(r)
        written = _source_text(text_lines, r)
        if sig in temporal:
            goals, statics = _rule_goals(r, temporal)
            out_rules.append(Rule(_loc(r, file), written, sig, True, goals, statics, _rule_kind(goals), r))
        else:
            statics = tuple(sorted({term_signature(a.symbol) for lit in r.body for a, _u in _atoms(lit)}))
            out_rules.append(Rule(_loc(r, file), written, sig, False, (), statics, STATIC, r))
            background.append(str(r))
    timed = []
    for r in fact_rules:
        if _head_sig(r) in temporal:
            first = r.head.atom.symbol.arguments[0] if r.head.atom.symbol.ast_type == _T.Function else None
            if first is None or first.ast_type != _T.SymbolicTerm or first.symbol.type.name != "Number":
                raise _error(f"the fact '{r.head}' of the stream predicate {_head_sig(r)[0]}/{_head_sig(r)[1]} needs "
                             "an integer timestamp as first argument", r, file)
            timed.append(parse_term(str(r.head.atom.symbol)))
        else:
            background.append(str(r))
    derived = {r.head for r in out_rules if r.temporal}
    statics_all = (facts | {r.head for r in out_rules if not r.temporal}) - temporal
    shown = {s for s in shows if s in temporal} if show_given else set(derived)
    findings = _blocking(out_rules, _late_predicates(out_rules)) + _warping(out_rules) + _unstratified(out_rules)
    return Program(file=file, rules=tuple(out_rules), background=tuple(background), timed_facts=tuple(timed),
                   inputs=frozenset(temporal - derived), derived=frozenset(derived),
                   statics=frozenset(statics_all), uts=frozenset(uts), shown=frozenset(shown),
                   predicate_kinds=_predicate_kinds(out_rules, temporal - derived, statics_all),
                   findings=tuple(findings), source_text=text)


def parse_program(text: str, file: str = "<program>") -> Program:
    """Parse and classify; the findings are kept (``Program.check()`` raises the first)."""
    return analyse(parse_statements(text, file, lambda msg: ProgramError(msg, file=file)), file, text)


def load_program(path: str) -> Program:
    return parse_program(read_program(path), str(path))


# --- the bistate version --------------------------------------------------------------------------------------

class _Substitute(ast.Transformer):
    def __init__(self, name: str, term):
        self.name = name
        self.term = term

    def visit_Variable(self, node):
        return self.term if node.name == self.name else node


def substitute(node, name: str, term):
    """``node`` with the variable ``name`` replaced by ``term`` everywhere."""
    return _Substitute(name, term).visit(node)


#: the current timestamp: the parameter of the per-timestamp program part (reserved, so that a program's own
#: constant ``now`` keeps its meaning); the bistate version prints it as ``now``
NOW = "__sl_now"


def now_term(location, name: str = NOW):
    return ast.Function(location, name, [], False)


def _renamed(atom, suffix: str, keep_time: bool):
    sym = atom.symbol
    args = list(sym.arguments) if keep_time else list(sym.arguments[1:])
    return atom.update(symbol=ast.Function(sym.location, f"{sym.name}_{suffix}", args, sym.external))


def _variants(atom, temporal: set, order: TimeOrder, head_ts):
    """The bistate forms of one atom: [(atom, extra comparison or None)]."""
    if term_signature(atom.symbol) not in temporal:
        return [(atom, None)]
    ts = atom.symbol.arguments[0]
    relation = order.relation(ts, head_ts)
    ops = ast.ComparisonOperator
    new = (_renamed(atom, "new", False), None if str(ts) == str(head_ts) else (ts, ops.Equal, head_ts))
    old = (_renamed(atom, "old", True), None)
    if relation == EQUAL:
        return [new]
    if relation == EARLIER:
        return [old]
    if relation == NOT_LATER:
        return [new, (old[0], (ts, ops.LessThan, head_ts))]
    return [old]       # a later goal: time-warping, rejected; printed as the slides would not


def bistate_rules(program: Program) -> list[str]:
    """The bistate version (``_new``: at the head's timestamp, without it; ``_old``: earlier, keeping the timestamp
    so that old facts still join on it), one text per rule variant; background rules as they are."""
    temporal = set(program.temporal)
    out = []
    for r in program.rules:
        if not r.temporal:
            out.append(r.text)
            continue
        node = r.node
        head_ts = node.head.atom.symbol.arguments[0]
        order = _order(node.body)
        choices = []
        for lit in node.body:
            if lit.ast_type == _T.Literal and lit.atom.ast_type == _T.SymbolicAtom:
                choices.append([(lit.update(atom=a), extra) for a, extra in _variants(lit.atom, temporal, order,
                                                                                        head_ts)])
            elif lit.ast_type == _T.Literal and lit.atom.ast_type == _T.BodyAggregate:
                elements = []
                for element in lit.atom.elements:
                    local = order.copy()
                    for cond in element.condition:
                        if cond.ast_type == _T.Literal and cond.atom.ast_type == _T.Comparison:
                            local.add_comparison(cond.atom)
                    per_cond = []
                    for cond in element.condition:
                        if cond.ast_type == _T.Literal and cond.atom.ast_type == _T.SymbolicAtom:
                            per_cond.append([[cond.update(atom=a)] + ([_comparison(cond.location, *x)] if x else [])
                                             for a, x in _variants(cond.atom, temporal, local, head_ts)])
                        else:
                            per_cond.append([[cond]])
                    for combo in itertools.product(*per_cond):
                        elements.append(element.update(condition=[c for part in combo for c in part]))
                choices.append([(lit.update(atom=lit.atom.update(elements=elements)), None)])
            else:
                choices.append([(lit, None)])
        head = node.head.update(atom=_renamed(node.head.atom, "new", False))
        for combo in itertools.product(*choices):
            body = []
            for lit, extra in combo:
                body.append(lit)
                if extra is not None:
                    body.append(_comparison(lit.location, *extra))
            rule = node.update(head=head, body=body)
            if head_ts.ast_type == _T.Variable:
                rule = substitute(rule, head_ts.name, now_term(head_ts.location, "now"))
            else:
                rule = rule.update(body=list(rule.body) + [_comparison(head_ts.location,
                                                                       now_term(head_ts.location, "now"),
                                                                       ast.ComparisonOperator.Equal, head_ts)])
            out.append(str(rule))
    return out


def explain(program: Program) -> str:
    """Every rule and predicate classified, the bistate version, and the findings."""
    lines = [f"% Streamlog program {program.file}", "% rules:"]
    for r in program.rules:
        kind = r.kind if r.temporal else "background"
        lines.append(f"%   {r.loc}: {kind}: {r.text}")
        for g in r.goals:
            lines.append(f"%       {g.text}: timestamp {g.order} head's ({g.use})")
    lines.append("% predicates:")
    for sig in sorted(program.predicate_kinds):
        extra = " (timestamp-free in the stream, stamped by uts)" if (sig[0], sig[1] - 1) in program.uts else ""
        lines.append(f"%   {sig[0]}/{sig[1]}: {program.predicate_kinds[sig]}{extra}")
    lines.append("% bistate version (_new: at the head's timestamp now; _old: earlier):")
    lines.extend(bistate_rules(program))
    if program.findings:
        lines.append("% rejected:")
        lines.extend(f"%   {f.error()}" for f in program.findings)
    else:
        lines.append("% accepted: non-blocking, no time-warping rule, the bistate version is stratified "
                     "(XY-stratified)")
    return "\n".join(lines)
