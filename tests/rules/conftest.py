"""Fixtures for the I-DLV-sr tests, and the independent oracle.

The oracle unrolls the whole stream into ONE ASP program with explicit time points and solves it once:
``s(T, A)`` is the persistent outcome at T (stream atoms and heads of form-(1) rules), ``m(T, A)`` the
streaming model at T (adds ``#temp`` heads). A streaming literal at T becomes a ``#count`` aggregate over
``m(T, a)`` (distance 0) and ``s(T-d, a)`` (d > 0). It shares only the parser with the evaluator: no rewriting,
no graphs, no windows code, no incremental solving.
"""
from __future__ import annotations

import random
from pathlib import Path

import clingo
import pytest
from clingo import ast

from srtopo.rules.ir import NOW_PREDICATE, Program, StreamingLiteral, variables

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
IDLVSR = DATA / "idlvsr"
EXAMPLES = IDLVSR / "examples"


@pytest.fixture
def examples_dir() -> Path:
    if not (EXAMPLES / "programs").is_dir():
        pytest.skip("I-DLV-sr corpus not present in ../shared/data")
    return EXAMPLES


class _ToTime(ast.Transformer):
    def __init__(self, t: int):
        self.t = t

    def visit_SymbolicAtom(self, node):
        loc = node.symbol.location
        return ast.SymbolicAtom(ast.Function(loc, "m", [ast.SymbolicTerm(loc, clingo.Number(self.t)), node.symbol], 0))


def _observed(sl: StreamingLiteral, t: int) -> tuple[str, int]:
    atom = str(sl.atom)
    elems = []
    for d in sorted(sl.window.distances()):
        if t - d < 0:
            continue
        elems.append(f"{d}: m({t},{atom})" if d == 0 else f"{d}: s({t - d},{atom})")
    return ("#count{" + "; ".join(elems) + "}" if elems else "#count{}"), len(elems)


def _streaming(sl: StreamingLiteral, t: int, free: bool) -> list[str]:
    """``free``: the atom has variables no other positive literal of the rule binds."""
    agg, k = _observed(sl, t)
    if sl.op == "at_least":
        cond = f"{agg} >= {sl.count}"
    elif sl.op == "at_most":
        cond = f"{agg} <= {sl.count}"
    elif sl.op == "always":
        cond = f"{agg} >= {max(k, 1)}"      # no observed time point: 'always' does not hold
    elif isinstance(sl.count, str):
        cond = f"{sl.count} = {agg}"
    else:
        cond = f"{agg} = {sl.count}"
    guard = [f"{sl.count} >= 1"] if isinstance(sl.count, str) else []
    if sl.negated:
        return ([f"dom({sl.atom})"] if sl.op == "at_most" else []) + [f"not {cond}"] + guard
    if sl.op == "at_most" and not free:       # count 0 included: the atom is bound elsewhere
        return [cond] + guard
    out = [f"dom({sl.atom})", cond] + guard
    if sl.op == "at_most":                    # binds its atom: an atom its window observes
        out.append(f"{agg} >= 1")
    return out


def _free(rule, sl: StreamingLiteral) -> bool:
    bound = set()
    for item in rule.body:
        if item is sl:
            continue
        if isinstance(item, StreamingLiteral):
            if not item.negated and item.op != "at_most":
                bound |= variables(item.atom)
        elif (item.ast.ast_type == ast.ASTType.Literal and item.ast.sign == ast.Sign.NoSign
              and item.ast.atom.ast_type == ast.ASTType.SymbolicAtom):
            bound |= variables(item.ast)
    for _ in range(3):          # V = expr binds V once expr is bound
        for item in rule.body:
            atom = getattr(getattr(item, "ast", None), "atom", None)
            if atom is not None and atom.ast_type == ast.ASTType.Comparison and len(atom.guards) == 1 \
                    and atom.term.ast_type == ast.ASTType.Variable and variables(atom.guards[0].term) <= bound:
                bound.add(atom.term.name)
    return not variables(sl.atom) <= bound


def oracle(program: Program, timeline: list[list[clingo.Symbol]], now=None, periods=(), context=None) -> list[frozenset]:
    """Streaming model at every time point, from one unrolled ASP program. ``now(t)``: the value of @now at t;
    ``periods``: the #trigger_frequency periods in time points, in order of appearance; ``context``: the
    functions of external atoms (the evaluator's own, ``solving.externals``)."""
    lines = ["dom(A) :- m(_, A).", "m(T, A) :- s(T, A)."]
    triggers = []
    for rule in program.rules:
        if rule.trigger is not None and rule.trigger not in triggers:
            triggers.append(rule.trigger)
    free = {id(item): _free(rule, item) for rule in program.rules for item in rule.body
            if isinstance(item, StreamingLiteral)}          # a rule's, whatever the time point
    for t, atoms in enumerate(timeline):
        lines += [f"s({t}, {a})." for a in atoms]
        lines += [f"s({t}, {f.symbol})." for f in program.facts]
        if now is not None:
            lines.append(f"s({t}, {NOW_PREDICATE}({now(t)})).")
        for rule in program.rules:
            if rule.trigger is not None and t % periods[triggers.index(rule.trigger)] != 0:
                continue
            head = f"{'m' if rule.temp else 's'}({t}, {rule.head.atom.symbol})"
            body = []
            for item in rule.body:
                if isinstance(item, StreamingLiteral):
                    body += _streaming(item, t, free[id(item)])
                else:
                    body.append(str(_ToTime(t)(item.ast)))
            lines.append(f"{head} :- {'; '.join(body)}." if body else f"{head}.")
    ctl = clingo.Control(["--warn=none", "0"])
    ctl.add("base", [], "\n".join(lines) + "\n#show m/2.")
    ctl.ground([("base", [])], context=context)
    models = []
    with ctl.solve(yield_=True) as handle:
        for model in handle:
            models.append(model.symbols(shown=True))
    assert len(models) == 1, f"oracle program has {len(models)} answer sets"
    out = [set() for _ in timeline]
    for sym in models[0]:
        if sym.arguments[1].name != NOW_PREDICATE:
            out[sym.arguments[0].number].add(sym.arguments[1])
    return [frozenset(s) for s in out]


def run_reasoner(program: Program, timeline, strategy: str) -> list[frozenset]:
    from srtopo.rules.evaluate import Reasoner
    reasoner = Reasoner(program, strategy=strategy)
    return [reasoner.step(atoms).atoms for atoms in timeline]


# ---------------------------------------------------------------- random stratified programs
def random_case(seed: int) -> tuple[str, list[list[str]]]:
    """A random safe, stratified program over unary predicates and a random stream (as text)."""
    rng = random.Random(seed)
    derived = [f"p{i}" for i in range(rng.randint(2, 4))]
    level = {p: rng.randint(0, 2) for p in derived}
    inputs = ["e", "f"]

    def window():
        if rng.random() < 0.6:
            return f"[{rng.randint(0, 3)}]"
        return "{" + ",".join(str(d) for d in sorted(rng.sample(range(4), rng.randint(1, 3)))) + "}"

    rules = []
    for head in derived:
        for _ in range(rng.randint(1, 2)):
            harmless = inputs + [p for p in derived if level[p] <= level[head]]
            lower = inputs + [p for p in derived if level[p] < level[head]]
            first = rng.choice(harmless)
            kind = rng.random()
            if kind < 0.3:
                body = [f"{first}(X)"]
            elif kind < 0.6:
                body = [f"{first}(X) in {window()}"]
            elif kind < 0.8:
                body = [f"{first}(X) at least {rng.randint(1, 3)} in {window()}"]
            else:
                body = [f"{first}(X) always in {window()}"]
            for _ in range(rng.randint(0, 2)):
                q = rng.choice(lower)
                choice = rng.random()
                if choice < 0.2:
                    body.append(f"not {q}(X)")
                elif choice < 0.35:
                    body.append(f"not {q}(X) in {window()}")
                elif choice < 0.5:
                    body.append(f"{q}(X) at most {rng.randint(0, 2)} in {window()}")
                elif choice < 0.65:
                    body.append(f"{q}(X) count {rng.randint(1, 2)} in {window()}")
                elif choice < 0.75:
                    body.append(f"{q}(X) count C in {window()}, C >= 2")
                elif choice < 0.85:
                    body.append(f"X != {rng.randint(1, 3)}")
                else:
                    r = rng.choice(harmless)
                    body.append(f"{r}(X) in {window()}")
            temp = "#temp " if rng.random() < 0.25 else ""
            rules.append(f"{temp}{head}(X) :- {', '.join(body)}.")
    if rng.random() < 0.3:
        rules.append(f"{rng.choice(derived)}(1).")
    stream = []
    for _t in range(rng.randint(5, 8)):
        atoms = {f"{rng.choice(inputs + derived[:1])}({rng.randint(1, 3)})" for _ in range(rng.randint(0, 4))}
        stream.append(sorted(atoms))
    return "\n".join(rules), stream


def reason_cli(tmp_path, program: str | None, log: str, *extra, program_path=None) -> tuple[int, list[dict]]:
    """``srtopo reason`` on a program (text, or ``program_path``) and a log, in-process: (exit code, the JSON
    lines it wrote; [] when it wrote none)."""
    import json

    from srtopo.cli import main
    if program_path is None:
        program_path = tmp_path / "p.idlvsr"
        program_path.write_text(program)
    stream = tmp_path / "s.log"
    stream.write_text(log)
    out = tmp_path / "out.jsonl"
    code = main(["reason", "--program", str(program_path), "--stream", str(stream), "--out", str(out), *extra])
    return code, [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
