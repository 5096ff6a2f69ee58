"""Parse I-DLV-sr concrete syntax into the IR of rules.ir.

A small tokenizer finds statements, ``#temp``/``#show`` and streaming literals (the only syntax clingo does
not know); each statement is then handed to ``clingo.ast`` with every streaming literal replaced by a
placeholder atom of at most the same length, padded so clingo's reported line:col are the file's own.
"""
from __future__ import annotations

import bisect
import re
from pathlib import Path
from typing import NamedTuple

from clingo import Function, Number, ast, parse_term

from srtopo.errors import ProgramError
from srtopo.logic.syntax import parse_statements, read_program
from srtopo.rules.analysis import condition_bound
from srtopo.rules.ir import (
    NOW_PREDICATE,
    NOW_VARIABLE,
    RESERVED,
    UNIT_SECONDS,
    ExternalLiteral,
    Fact,
    InputDomain,
    Loc,
    PlainLiteral,
    Program,
    Rule,
    StreamingLiteral,
    Window,
    is_atom_term,
    symbolic_atoms,
    term_signature,
    variables,
)
from srtopo.solving.externals import function_name
from srtopo.terms import CLINGO_INT_MAX

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<block>%\*.*?\*%)
  | (?P<comment>%[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<op>:-|:~|\.\.|!=|<>|<=|>=|==|\*\*)
  | (?P<directive>\#[A-Za-z_]\w*)
  | (?P<at>@[A-Za-z_]\w*)
  | (?P<amp>&[A-Za-z_]\w*)
  | (?P<ident>_*[A-Za-z][A-Za-z0-9_']*|_)
  | (?P<number>\d+)
  | (?P<punct>[()\[\]{},.;:|=<>+\-*/\\^~?!&@#$])
""", re.S | re.X)

_RULE_DIRECTIVES = ("#temp", "#trigger_frequency")
_OPEN = "([{"
_CLOSE = ")]}"


class Tok(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


class _Source:
    def __init__(self, text: str, file: str):
        self.text = text
        self.file = file
        self.nl = [i for i, c in enumerate(text) if c == "\n"]

    def loc(self, offset: int) -> Loc:
        line = bisect.bisect_left(self.nl, offset)
        col = offset - (self.nl[line - 1] + 1 if line else 0)
        return Loc(self.file, line + 1, col + 1)

    def error(self, message: str, offset: int, hint: str | None = None) -> ProgramError:
        loc = self.loc(offset)
        return ProgramError(message, file=loc.file, line=loc.line, col=loc.col, hint=hint)

    def unsupported(self, construct: str, offset: int) -> ProgramError:
        loc = self.loc(offset)
        # the shape users grep for: "unsupported: <construct> at file:line"
        # (file stays unset so the location is not printed twice)
        return ProgramError(f"unsupported: {construct} at {loc.file}:{loc.line}", line=loc.line, col=loc.col)


def parse_file(path: str | Path) -> Program:
    return parse_program(read_program(path), str(path))


def parse_facts(texts) -> list:
    """Ground facts written as clingo prints them (a rules topology's background) back into Symbols."""
    out = []
    for text in texts:
        try:
            symbol = parse_term(text, logger=lambda _code, _message: None)
        except RuntimeError:
            raise ProgramError(f"background fact {text!r} is not a ground term") from None
        out.append(symbol)
    return out


def parse_program(text: str, file: str = "<string>") -> Program:
    src = _Source(text, file)
    tokens = _tokenize(src)
    if any(t.kind == "at" and t.text == "@now" for t in tokens):
        src, tokens = _now_as_variable(src, tokens)
    shows: list[tuple[str, int]] | None = None
    prepared = []
    chars = ["\n" if c == "\n" else " " for c in text]   # one clingo text for the whole file
    streaming: dict[str, StreamingLiteral] = {}
    externals: dict[str, tuple] = {}
    facts: list[Fact] = []
    optimize: list[Rule] = []
    domains: list[InputDomain] = []
    for stmt in _statements(src, tokens):
        first = stmt[0]
        if first.kind == "directive" and first.text == "#show":
            shows = [] if shows is None else shows
            sig = _parse_show(src, stmt)
            if sig is not None and sig not in shows:
                shows.append(sig)
            continue
        if first.kind == "directive" and first.text in ("#minimize", "#maximize"):
            optimize.extend(_optimize_statement(src, stmt))
            continue
        if first.kind == "directive" and first.text == "#external":
            domains.append(_domain_statement(src, stmt))
            continue
        fact = _simple_fact(stmt)
        if fact is not None:
            facts.append(Fact(fact, src.loc(stmt[0].start)))
            continue
        prepared.append((stmt, _prepare_rule(src, stmt, chars, streaming, externals)))
    parsed = [s for s in _clingo_parse(src, "".join(chars), 0) if s.ast_type != ast.ASTType.Program]
    if len(parsed) != len(prepared):
        raise ProgramError("clingo read a different number of statements than expected", file=file)
    rules = tuple(_finish_rule(src, stmt, temp, trigger, rule_ast, streaming, externals)
                  for (stmt, (temp, trigger)), rule_ast in zip(prepared, parsed))
    program = Program(rules + tuple(optimize), None if shows is None else tuple(shows), file, tuple(facts),
                      tuple(domains))
    derived = {p for r in program.rules for p in r.head_preds}
    for domain in domains:
        if domain.pred in derived:
            name = f"{domain.pred[0]}/{domain.pred[1]}"
            raise ProgramError(f"#external declares the stream atoms of {name}, which the program derives",
                               file=file, line=domain.loc.line, col=domain.loc.col,
                               hint="declare the input domain of predicates that only the stream gives")
    return program


def _domain_statement(src: _Source, stmt: list[Tok]) -> InputDomain:
    """``#external p(t) : body.``: the input domain of stream predicate p (parsed on its own by clingo)."""
    for i, tok in enumerate(stmt):
        if tok.kind == "amp" or (tok.kind == "ident" and tok.text == "in" and
                                 (i + 1 == len(stmt) or stmt[i + 1].text != "(")):
            raise src.unsupported(f"{'external atom' if tok.kind == 'amp' else 'streaming literal'} inside "
                                  "#external", tok.start)
    start, end = stmt[0].start, stmt[-1].end
    loc = src.loc(start)
    text = "\n" * (loc.line - 1) + " " * (loc.col - 1) + src.text[start:end]
    found = [s for s in _clingo_parse(src, text, start) if s.ast_type == ast.ASTType.External]
    if len(found) != 1:
        raise src.error("malformed #external", start, hint="write #external p(X) : body.")
    statement = found[0]
    if statement.atom.ast_type != ast.ASTType.SymbolicAtom:
        raise src.error("#external declares an atom", start)
    _check_atom_term(src, statement.atom.symbol, start)
    unbound = sorted(variables(statement.atom) - condition_bound(statement.body))
    if unbound:
        raise src.error(f"#external declares atoms with the unbound variable(s) {', '.join(unbound)}", start,
                        hint="bind them in its body, e.g. #external p(X) : dom(X).")
    for atom in symbolic_atoms(statement.body):
        _check_atom_term(src, atom.symbol, start)
    return InputDomain(statement, loc)


def _optimize_statement(src: _Source, stmt: list[Tok]) -> list[Rule]:
    """``#minimize { w@p, t : body; ... }.`` / ``#maximize``: a weak constraint per element, as clingo reads it
    (parsed on its own: one statement becomes several)."""
    for i, tok in enumerate(stmt):
        if (tok.kind == "at" and tok.text[1].islower()) or (tok.kind == "ident" and tok.text == NOW_VARIABLE):
            term = "@now" if tok.kind == "ident" else tok.text      # (@now is already the variable here)
            raise src.unsupported(f"{term} inside {stmt[0].text} (write a weak constraint :~ body. [w@p, t])",
                                  tok.start)
        if tok.kind == "amp" or (tok.kind == "ident" and tok.text == "in" and
                                 (i + 1 == len(stmt) or stmt[i + 1].text != "(")):
            raise src.unsupported(f"{'external atom' if tok.kind == 'amp' else 'streaming literal'} inside "
                                  f"{stmt[0].text}", tok.start)
    start, end = stmt[0].start, stmt[-1].end
    loc = src.loc(start)
    text = "\n" * (loc.line - 1) + " " * (loc.col - 1) + src.text[start:end]
    out = []
    for statement in _clingo_parse(src, text, start):
        if statement.ast_type != ast.ASTType.Minimize:
            continue
        for atom in symbolic_atoms(statement.body):
            _check_atom_term(src, atom.symbol, start)
        out.append(Rule(statement, tuple(PlainLiteral(b) for b in statement.body), False, loc,
                        getattr(src, "original", src.text)[start:end], None, "weak"))
    return out


def _now_as_variable(src: _Source, tokens: list[Tok]):
    """``@now`` becomes the variable NOW_VARIABLE (same width, so every position stays the file's own); a rule
    that mentions it gets the body atom that binds it at each time point (``_finish_rule``)."""
    for tok in tokens:
        if tok.kind == "ident" and tok.text == NOW_VARIABLE:
            raise src.error(f"the variable name {NOW_VARIABLE} is reserved for @now", tok.start,
                            hint="rename the variable")
    chars = list(src.text)
    for tok in tokens:
        if tok.kind == "at" and tok.text == "@now":
            chars[tok.start:tok.end] = list(NOW_VARIABLE.ljust(tok.end - tok.start))
    text = "".join(chars)
    new = _Source(text, src.file)
    new.original = src.text
    return new, _tokenize(new)


def _tokenize(src: _Source) -> list[Tok]:
    out: list[Tok] = []
    pos, text = 0, src.text
    skip = ("ws", "block", "comment")
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            raise src.error(f"unexpected character {text[pos]!r}", pos)
        pos = m.end()
        kind = m.lastgroup
        if kind not in skip:
            if kind == "number" and int(m.group()) > CLINGO_INT_MAX + (1 if out and out[-1].text == "-" else 0):
                raise src.error(f"the integer {m.group()} is beyond clingo's 32-bit integers", m.start(),
                                hint="write it as a string, or in smaller units")
            out.append(Tok(kind, m.group(), m.start(), pos))
    if pos != len(text):
        raise src.error(f"unexpected character {text[pos]!r}", pos)
    return out


def _statements(src: _Source, tokens: list[Tok]):
    """Split at top-level '.'; a ``#show p/n`` without '.' ends at the end of its line (as in the corpus)."""
    stmt: list[Tok] = []
    depth = 0
    weight = False          # inside the [w@p, t] that ends a weak constraint
    for tok in tokens:
        if (stmt and stmt[0].text == "#show" and depth == 0
                and "\n" in src.text[stmt[-1].end:tok.start]):
            yield stmt
            stmt = []
        if (stmt and stmt[0].text == ":~" and depth == 0 and not weight and stmt[-1].text == "."
                and tok.text != "["):
            raise src.error("weak constraint without its [weight@level, terms]", stmt[0].start,
                            hint="write :~ body. [w@p, t1, ..., tn]")
        if tok.kind == "punct" and tok.text in _OPEN:
            depth += 1
            weight = weight or bool(tok.text == "[" and stmt and stmt[0].text == ":~" and stmt[-1].text == "."
                                    and depth == 1)
        elif tok.kind == "punct" and tok.text in _CLOSE:
            depth = max(0, depth - 1)
        stmt.append(tok)
        if weight and depth == 0 and tok.text == "]":
            yield stmt
            stmt, weight = [], False
        elif tok.kind == "punct" and tok.text == "." and depth == 0 and stmt[0].text != ":~":
            yield stmt
            stmt = []
    if stmt:
        if stmt[0].text == "#show":
            yield stmt
        elif stmt[0].text == ":~" and stmt[-1].text == ".":
            raise src.error("weak constraint without its [weight@level, terms]", stmt[0].start,
                            hint="write :~ body. [w@p, t1, ..., tn]")
        else:
            raise src.error("statement does not end with '.'", stmt[0].start, hint="add the final '.'")


def _parse_show(src: _Source, stmt: list[Tok]):
    body = [t for t in stmt[1:] if t.text != "."]
    if not body:
        return None
    texts = [t.text for t in body]
    if len(texts) == 3 and body[0].kind == "ident" and texts[1] == "/" and body[2].kind == "number":
        return (texts[0], int(texts[2]))
    raise src.unsupported("#show with terms or conditions (use #show p/n)", stmt[0].start)


def _split_top(tokens: list[Tok], sep: str) -> list[list[Tok]]:
    parts: list[list[Tok]] = [[]]
    depth = 0
    for tok in tokens:
        if tok.kind == "punct" and tok.text in _OPEN:
            depth += 1
        elif tok.kind == "punct" and tok.text in _CLOSE:
            depth -= 1
        if depth == 0 and tok.text == sep and tok.kind in ("punct", "op"):
            parts.append([])
        else:
            parts[-1].append(tok)
    return parts


def _simple_fact(stmt: list[Tok]):
    """``p(c1,...,cn).`` with integer/constant/string arguments becomes a Symbol without clingo's parser
    (background data such as the 60k ``link`` facts of Photo-voltaic would otherwise dominate set-up)."""
    n = len(stmt)
    head = stmt[0]
    if head.kind != "ident" or not head.text[0].islower() or head.text.startswith(RESERVED):
        return None
    if n == 2:
        return Function(head.text) if stmt[1].text == "." else None
    if n < 5 or stmt[1].text != "(" or stmt[-2].text != ")" or stmt[-1].text != ".":
        return None
    args = []
    expect_arg = True
    i = 2
    while i < n - 2:
        tok = stmt[i]
        if expect_arg:
            neg = tok.text == "-"
            if neg:
                i += 1
                tok = stmt[i]
            if tok.kind == "number":
                args.append(Number(-int(tok.text) if neg else int(tok.text)))
            elif neg:
                return None
            elif tok.kind == "ident" and tok.text[0].islower():
                args.append(Function(tok.text))
            elif tok.kind == "string":
                return None
            else:
                return None
        elif tok.text != ",":
            return None
        expect_arg = not expect_arg
        i += 1
    if expect_arg:
        return None
    return Function(head.text, args)


def _prepare_rule(src: _Source, stmt: list[Tok], chars: list[str], streaming: dict, externals: dict):
    """Copy the statement after its #temp / #trigger_frequency into ``chars`` (blank elsewhere), with streaming
    literals and external atoms as placeholders; returns (temp, trigger window or None)."""
    start = stmt[0].start
    weak_level = _weak_suffix_start(stmt)
    for tok in stmt:
        if tok.kind == "at" and tok.start < weak_level:
            raise src.unsupported(f"{tok.text} (built-in function term; only @now is known)", tok.start)
    temp, trigger = False, None
    toks = stmt
    while toks and toks[0].kind == "directive":
        directive = toks[0]
        if directive.text == "#temp" and not temp:
            temp = True
            toks = toks[1:]
        elif directive.text == "#trigger_frequency" and trigger is None:
            trigger, toks = _frequency(src, toks)
        elif directive.text in _RULE_DIRECTIVES:
            raise src.error(f"{directive.text} given twice", directive.start)
        else:
            raise src.unsupported(f"directive {directive.text}", directive.start)
    for tok in toks:
        if tok.kind == "directive" and tok.text in _RULE_DIRECTIVES:
            raise src.unsupported(tok.text + " inside a rule", tok.start)
    if not toks:
        raise src.error("a rule directive without its rule", start)
    stmt_start = toks[0].start
    if toks[0].text == ":~":
        if temp or trigger is not None:
            raise src.error("#temp and #trigger_frequency apply to rules with a head, not to weak constraints",
                            start)
        dot = next(i for i, t in enumerate(toks) if t.text == "." and _depth_at(toks, i) == 0)
        head_toks, body_toks = [], toks[1:dot]
        if not body_toks:
            raise src.error("weak constraint with an empty body", start)
    else:
        parts = _split_top(toks[:-1], ":-")
        if len(parts) > 2:
            raise src.error("rule has more than one ':-'", start)
        head_toks = parts[0]
        body_toks = parts[1] if len(parts) == 2 else []
        if len(parts) == 2 and not body_toks:
            raise src.error("rule has ':-' but an empty body", start)
        if not head_toks and not body_toks:
            raise src.error("empty rule", start)
    if any(t.kind == "amp" for t in head_toks):
        raise src.error("an external atom cannot be a rule head", head_toks[0].start)
    for tok in head_toks:
        if tok.kind == "directive":
            raise src.unsupported(f"{tok.text} in a rule head", tok.start)

    chars[stmt_start:stmt[-1].end] = src.text[stmt_start:stmt[-1].end]
    texts = {t.text for t in body_toks}
    kinds = {t.kind for t in body_toks}
    if "in" not in texts and "amp" not in kinds:
        return temp, trigger             # fast path: no streaming literal, no external atom
    for lit in _split_top(body_toks, ","):
        if not lit:
            raise src.error("empty body literal", start)
        if any(t.kind == "amp" for t in lit):
            _external_literal(src, lit, chars, externals)
            continue
        found = _streaming_literal(src, lit, len(streaming))
        if found is None:
            continue
        sl, span_start, span_end, name = found
        streaming[name] = sl
        span = src.text[span_start:span_end]
        if len(name) <= len(span) and "\n" not in span[:len(name)]:
            repl = name + "".join("\n" if c == "\n" else " " for c in span[len(name):])
        else:
            raise src.error("streaming literal too short to be rewritten", span_start)
        chars[span_start:span_end] = list(repl)
    return temp, trigger


def _weak_suffix_start(stmt: list[Tok]) -> int:
    """Where a weak constraint's ``[w@p, t]`` starts (past the end for other statements): ``@P`` there is a
    level, not a function term."""
    if stmt and stmt[0].text == ":~":
        dots = [t.start for i, t in enumerate(stmt) if t.text == "." and _depth_at(stmt, i) == 0]
        if dots:
            return dots[0]
    return stmt[-1].end + 1 if stmt else 0


def _frequency(src: _Source, toks: list[Tok]):
    """``#trigger_frequency(f [unit])``: the frequency as a Window of size f, and the tokens after it."""
    directive = toks[0]
    inner = []
    i = 1
    if i < len(toks) and toks[i].text == "(":
        i += 1
        while i < len(toks) and toks[i].text != ")":
            inner.append(toks[i])
            i += 1
    if i >= len(toks) or len(inner) not in (1, 2) or inner[0].kind != "number" or int(inner[0].text) < 1:
        raise src.error("malformed #trigger_frequency", directive.start,
                        hint="write #trigger_frequency(f unit) with a positive integer f, e.g. (4 sec)")
    return _sized(src, inner, "#trigger_frequency"), toks[i + 1:]


def _sized(src: _Source, inner: list[Tok], what: str) -> Window:
    """``w [unit]`` (a number, then maybe a unit) of a window or a frequency."""
    unit = None
    if len(inner) == 2:
        unit = inner[1].text
        if unit not in UNIT_SECONDS:
            raise src.error(f"unknown time unit '{unit}' in {what}", inner[1].start,
                            hint="use " + ", ".join(sorted(UNIT_SECONDS)))
    return Window(size=int(inner[0].text), unit=unit)


def _external_literal(src: _Source, lit: list[Tok], chars: list[str], externals: dict) -> None:
    """``[not] &f(t1,...,tn; u1,...,um)`` becomes a placeholder atom; its terms are parsed by clingo."""
    toks = lit[1:] if lit[0].text == "not" else lit
    amp = toks[0]
    if amp.kind != "amp" or any(t.kind == "amp" for t in toks[1:]):
        raise src.unsupported("external atom inside another literal (aggregate, condition or comparison)",
                              next(t for t in lit if t.kind == "amp").start)
    name = amp.text[1:]
    inputs: list[Tok] = []
    outputs: list[Tok] = []
    if len(toks) > 1:
        if toks[1].text != "(" or toks[-1].text != ")":
            raise src.error(f"malformed external atom '{src.text[amp.start:toks[-1].end]}'", amp.start,
                            hint="write &f(t1,...,tn; u1,...,um)")
        halves = _split_top(toks[2:-1], ";")
        if len(halves) > 2:
            raise src.error("an external atom has one ';' between its input and output terms", amp.start)
        inputs = halves[0]
        outputs = halves[1] if len(halves) == 2 else []
    placeholder = f"__e{len(externals)}"
    span_start, span_end = amp.start, toks[-1].end
    if len(placeholder) > span_end - span_start:
        raise src.error("external atom too short to be rewritten", amp.start)
    loc = src.loc(amp.start)
    externals[placeholder] = (name, _terms(src, inputs, amp.start), _terms(src, outputs, amp.start), loc)
    span = src.text[span_start:span_end]
    chars[span_start:span_end] = list(placeholder + "".join("\n" if c == "\n" else " "
                                                           for c in span[len(placeholder):]))


def _terms(src: _Source, toks: list[Tok], where: int) -> tuple:
    """The clingo AST terms of an external atom's comma-separated term list."""
    if not toks:
        return ()
    text = src.text[toks[0].start:toks[-1].end]
    for part in _split_top(toks, ","):
        if not part:
            raise src.error(f"empty term in the external atom's terms '{text}'", where)
    loc = src.loc(toks[0].start)
    pad = "\n" * (loc.line - 1) + " " * max(0, loc.col - 5)      # clingo's positions stay the file's own
    parsed = [s for s in _clingo_parse(src, f"{pad}__t({text}).", where) if s.ast_type == ast.ASTType.Rule]
    term = parsed[0].head.atom.symbol if parsed and parsed[0].head.ast_type == ast.ASTType.Literal else None
    if term is None or term.ast_type != ast.ASTType.Function:
        raise src.error(f"malformed terms '{text}' in an external atom", where)
    return tuple(term.arguments)


def _finish_rule(src: _Source, stmt: list[Tok], temp: bool, trigger, rule_ast, streaming: dict,
                 externals: dict) -> Rule:
    start = stmt[0].start
    loc = src.loc(start)
    kind = _head_kind(src, rule_ast, start)
    if kind != "atom" and (temp or trigger is not None):
        raise src.error("#temp and #trigger_frequency apply to rules with an atom head, not to choices, "
                        "disjunctions or constraints", start,
                        hint="derive the atoms with a rule of its own and put the directive there")
    head = rule_ast if kind == "weak" else rule_ast.head
    if kind in ("choice", "disjunction"):
        if _mentions_placeholder(head, streaming) or _mentions_placeholder(head, externals):
            raise src.unsupported("streaming literal or external atom inside a rule head", start)
        for element in head.elements:
            literal = element.literal
            if literal.ast_type != ast.ASTType.Literal or literal.atom.ast_type != ast.ASTType.SymbolicAtom \
                    or literal.sign != ast.Sign.NoSign:
                raise src.unsupported(f"head element '{element}' (a choice or a disjunction chooses atoms)", start)
            _check_atom_term(src, literal.atom.symbol, start)
            for atom in symbolic_atoms(element.condition):
                _check_atom_term(src, atom.symbol, start)
    elif kind == "atom":
        _check_atom_term(src, head.atom.symbol, start)
    body = []
    for lit in rule_ast.body:
        external = _placeholder(lit, externals)
        if external is not None:
            if lit.sign == ast.Sign.DoubleNegation:
                raise src.unsupported("'not not' before an external atom", start)
            body.append(_external(external, lit.sign == ast.Sign.Negation))
            continue
        if _mentions_placeholder(lit, externals):
            raise src.unsupported("external atom inside an aggregate or condition", start)
        sl = _placeholder(lit, streaming)
        if sl is not None:
            if lit.sign == ast.Sign.DoubleNegation:
                raise src.unsupported("'not not' before a streaming literal", start)
            if lit.sign == ast.Sign.Negation:
                sl = StreamingLiteral(sl.atom, sl.op, sl.count, sl.window, True, sl.loc, sl.shortcut)
            body.append(sl)
            continue
        if _mentions_placeholder(lit, streaming):
            raise src.unsupported("streaming literal inside an aggregate or condition", start)
        for atom in symbolic_atoms(lit):
            _check_atom_term(src, atom.symbol, start)
        body.append(PlainLiteral(lit))
    if NOW_VARIABLE in variables(rule_ast) or any(
            NOW_VARIABLE in variables(b.atom if isinstance(b, StreamingLiteral) else b.ast) for b in body):
        where = head.location
        now = ast.SymbolicAtom(ast.Function(where, NOW_PREDICATE, [ast.Variable(where, NOW_VARIABLE)], 0))
        body.append(PlainLiteral(ast.Literal(where, ast.Sign.NoSign, now)))
    text = getattr(src, "original", src.text)[start:stmt[-1].end]
    return Rule(head, tuple(body), temp, loc, text, trigger, kind)


def _head_kind(src: _Source, rule_ast, start: int) -> str:
    """``HEAD_KINDS`` of a statement clingo read (a weak constraint is a Minimize statement)."""
    if rule_ast.ast_type == ast.ASTType.Minimize:
        return "weak"
    if rule_ast.ast_type != ast.ASTType.Rule:
        raise src.unsupported(f"statement clingo reads as {rule_ast.ast_type.name}", start)
    head = rule_ast.head
    if head.ast_type == ast.ASTType.Disjunction:
        return "disjunction"
    if head.ast_type == ast.ASTType.Aggregate:
        return "choice"
    if head.ast_type == ast.ASTType.Literal and head.atom.ast_type == ast.ASTType.BooleanConstant:
        if head.atom.value or head.sign != ast.Sign.NoSign:
            raise src.unsupported("#true or a negated #false as a rule head", start)
        return "constraint"
    if head.ast_type != ast.ASTType.Literal or head.atom.ast_type != ast.ASTType.SymbolicAtom:
        raise src.unsupported(f"rule head '{head}' (an atom, a choice, a disjunction or none)", start)
    if head.sign != ast.Sign.NoSign:
        raise src.error("a rule head cannot be negated", start)
    return "atom"


def _external(found: tuple, negated: bool) -> ExternalLiteral:
    """The comparison an external atom is evaluated as: ``(u1,...,um) = @__sr_x_f(t1,...,tn)``."""
    name, inputs, outputs, loc = found
    where = ast.Location(ast.Position(loc.file, loc.line, loc.col), ast.Position(loc.file, loc.line, loc.col))
    call = ast.Function(where, function_name(name, len(outputs)), list(inputs), 1)
    if not outputs:
        left = ast.SymbolicTerm(where, Number(1))
    elif len(outputs) == 1:
        left = outputs[0]
    else:
        left = ast.Function(where, "", list(outputs), 0)
    comparison = ast.Comparison(left, [ast.Guard(ast.ComparisonOperator.Equal, call)])
    literal = ast.Literal(where, ast.Sign.Negation if negated else ast.Sign.NoSign, comparison)
    return ExternalLiteral(literal, name, tuple(inputs), tuple(outputs), negated, loc)


def _streaming_literal(src: _Source, lit: list[Tok], index: int):
    """Recognise ``[not] ATOM [at least c|at most c|always|count t] in WINDOW``; None if ``lit`` is plain."""
    pos = [i for i, t in enumerate(lit) if t.kind == "ident" and t.text == "in" and _depth_at(lit, i) == 0]
    if not pos:
        return None
    i_in = pos[0]
    before, window_toks = lit[:i_in], lit[i_in + 1:]
    if before and before[0].text == "not":
        before = before[1:]
    words = [t.text for t in before]
    if len(words) >= 3 and words[-2] == "-" and before[-1].kind == "number" and \
            (words[-3] == "count" or (len(words) >= 4 and words[-4] == "at" and words[-3] in ("least", "most"))):
        op = "count" if words[-3] == "count" else f"at {words[-3]}"
        least = "a positive" if op == "at least" else "a non-negative"
        raise src.error(f"the constant of '{op}' must be {least} integer, got -{words[-1]}", before[-2].start)
    op, count, shortcut = "at_least", 1, False
    if len(words) >= 3 and words[-3] == "at" and words[-2] in ("least", "most"):
        op = "at_least" if words[-2] == "least" else "at_most"
        count, atom_toks = _count_term(src, before[-1], op), before[:-3]
    elif len(words) >= 2 and words[-2] == "count":
        op, count, atom_toks = "count", _count_term(src, before[-1], "count"), before[:-2]
    elif words and words[-1] == "always":
        op, count, atom_toks = "always", None, before[:-1]
    else:
        atom_toks, shortcut = before, True
    if not atom_toks:
        raise src.error("streaming literal without an atom", lit[0].start)
    window = _window(src, window_toks, lit[i_in])
    atom_text = src.text[atom_toks[0].start:atom_toks[-1].end]
    atom_loc = src.loc(atom_toks[0].start)
    text = "\n" * (atom_loc.line - 1) + " " * (atom_loc.col - 1) + atom_text + "."
    parsed = [s for s in _clingo_parse(src, text, atom_toks[0].start) if s.ast_type == ast.ASTType.Rule]
    if (len(parsed) != 1 or parsed[0].body or parsed[0].head.ast_type != ast.ASTType.Literal
            or parsed[0].head.atom.ast_type != ast.ASTType.SymbolicAtom
            or parsed[0].head.sign != ast.Sign.NoSign):
        raise src.error(f"'{atom_text}' is not an atom", atom_toks[0].start,
                        hint="a streaming literal is p(t1,...,tn) followed by its operator and window")
    term = parsed[0].head.atom.symbol
    _check_atom_term(src, term, atom_toks[0].start)
    name = f"__p{index}"
    sl = StreamingLiteral(term, op, count, window, False, atom_loc, shortcut)
    return sl, atom_toks[0].start, window_toks[-1].end, name


def _depth_at(toks: list[Tok], index: int) -> int:
    depth = 0
    for t in toks[:index]:
        if t.kind == "punct" and t.text in _OPEN:
            depth += 1
        elif t.kind == "punct" and t.text in _CLOSE:
            depth -= 1
    return depth


def _count_term(src: _Source, tok: Tok, op: str):
    if tok.kind == "number":
        value = int(tok.text)
        if value < 1 and op != "at_most" and op != "count":
            raise src.error(f"the constant of '{op.replace('_', ' ')}' must be a positive integer", tok.start)
        return value
    if tok.kind == "ident" and (tok.text[0].isupper() or tok.text[0] == "_") and tok.text != "_":
        return tok.text
    raise src.error(f"expected an integer or a variable after '{op.replace('_', ' ')}', got '{tok.text}'",
                    tok.start)


def _window(src: _Source, toks: list[Tok], in_tok: Tok) -> Window:
    texts = [t.text for t in toks]
    where = toks[0].start if toks else in_tok.end
    if len(texts) >= 3 and texts[0] == "[" and texts[-1] == "]":
        inner = toks[1:-1]
        if len(inner) in (1, 2) and inner[0].kind == "number":
            return _sized(src, inner, "window")
    if len(texts) >= 3 and texts[0] == "{" and texts[-1] == "}":
        inner = toks[1:-1]
        nums = inner[0::2]
        seps = inner[1::2]
        if nums and all(t.kind == "number" for t in nums) and all(t.text == "," for t in seps) \
                and len(nums) == len(seps) + 1:
            return Window(points=tuple(sorted({int(t.text) for t in nums})))
    raise src.error("malformed window after 'in'", where,
                    hint="write [w], [w sec] or {d1,...,dm} with non-negative integers")


#: a streaming literal written inside an aggregate's braces, which clingo reads as a syntax error
_AGGREGATE_WINDOW = re.compile(r"#\w+\s*\{[^{}]*?\b((at\s+(least|most)\s+\w+\s+|always\s+|count\s+\w+\s+)?in\s*[\[{])")


def _clingo_parse(src: _Source, text: str, offset: int) -> list:
    try:
        return parse_statements(text, src.file, lambda msg: src.error(msg, offset))
    except ProgramError:
        found = _AGGREGATE_WINDOW.search(text)
        if found is not None:
            raise src.unsupported("streaming literal inside an aggregate (I-DLV-sr: aggregate elements cannot "
                                  "feature streaming literals)", offset + found.start(1)) from None
        raise


def _placeholder(lit, streaming: dict[str, StreamingLiteral]):
    if lit.ast_type != ast.ASTType.Literal or lit.atom.ast_type != ast.ASTType.SymbolicAtom:
        return None
    term = lit.atom.symbol
    if not is_atom_term(term):
        return None
    name, arity = term_signature(term)
    return streaming.get(name) if arity == 0 else None


def _mentions_placeholder(node, streaming) -> bool:
    return any(term_signature(a.symbol)[0] in streaming for a in symbolic_atoms(node) if is_atom_term(a.symbol))


def _check_atom_term(src: _Source, term, offset: int) -> None:
    if term.ast_type == ast.ASTType.UnaryOperation:
        raise src.unsupported("classical negation (-p)", offset)
    if not is_atom_term(term):
        raise src.error(f"'{term}' is not an atom", offset)
    name = term_signature(term)[0]
    if name.startswith(RESERVED):
        raise src.error(f"predicate '{name}' uses the reserved prefix '{RESERVED}'", offset,
                        hint="rename it; names starting with '__' are generated by srtopo")
