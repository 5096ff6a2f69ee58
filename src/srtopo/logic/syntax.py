"""What every logic-program front end shares (the I-DLV-sr programs of ``rules`` and the Streamlog programs of
``streamlog``): source locations, the reserved predicate prefix, atom signatures, the one walker over clingo ASTs,
and clingo's parser with its errors at the file's own line and column."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clingo import ast

from srtopo.errors import ProgramError

#: Prefix of every predicate the framework generates (fresh window atoms, input bridges, markers).
#: User programs and stream atoms may not use predicates that start with ``__``.
RESERVED = "__"

Signature = tuple  # (name: str, arity: int)


def sig_str(sig: Signature) -> str:
    return f"{sig[0]}/{sig[1]}"


@dataclass(frozen=True)
class Loc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class NotAnAtom(ProgramError):
    """A term stands where an atom is expected."""


def term_signature(term: ast.AST) -> Signature:
    """name/arity of an atom's term (Function AST or a constant SymbolicTerm)."""
    if term.ast_type == ast.ASTType.Function:
        return (term.name, len(term.arguments))
    if term.ast_type == ast.ASTType.SymbolicTerm and term.symbol.type.name == "Function":
        return (term.symbol.name, len(term.symbol.arguments))
    raise NotAnAtom(f"'{term}' is not an atom")


def is_atom_term(term: ast.AST) -> bool:
    try:
        term_signature(term)
        return True
    except NotAnAtom:
        return False


# --- the one walker over clingo ASTs ----------------------------------------------------------------------

#: the attributes of clingo's AST nodes that never hold a node (a location, a name, an enumeration's value): not
#: read by ``walk``, since reading an attribute through clingo's C API is most of the cost of a walk
LEAF_ATTRIBUTES = frozenset({"location", "name", "operator_name", "code", "operator_type", "external", "comparison",
                             "function", "sequence_type", "sign", "atom_type", "arity", "is_default", "positive",
                             "comment_type"})


def walk(node):
    """Every AST node below ``node`` (itself included), depth first; lists and AST sequences are descended."""
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.AST):
            yield node
            stack.extend(getattr(node, key) for key in reversed(node.keys()) if key not in LEAF_ATTRIBUTES)
        elif isinstance(node, (list, tuple)) or type(node).__name__ == "ASTSequence":
            stack.extend(reversed(node))


def symbolic_atoms(node):
    """Every SymbolicAtom below ``node`` (in literals, aggregate elements, conditions)."""
    return (n for n in walk(node) if n.ast_type == ast.ASTType.SymbolicAtom)


def variables(node) -> set[str]:
    """The names of the variables below ``node`` (the anonymous ``_`` left out)."""
    return {n.name for n in walk(node) if n.ast_type == ast.ASTType.Variable and n.name != "_"}


_CLINGO_LOCATION = re.compile(r"<(?:string|block)>:(\d+):(\d+)(?:-\S+)?: (?:error: )?(.*)", re.S)


def clingo_error(message: str, file: str, detail: str | None = None, hint: str | None = None) -> ProgramError | None:
    """clingo's ``<string>:L:C-...: error: what`` (or ``<block>:...``) as a ProgramError at file:L:C, or None when
    the message has no location. ``detail`` replaces clingo's wording."""
    m = _CLINGO_LOCATION.match(message.strip())
    if not m:
        return None
    return ProgramError(detail or " ".join(m.group(3).split()), file=file, line=int(m.group(1)),
                        col=int(m.group(2)), hint=hint)


def _outside_ascii(text: str) -> tuple[int, str] | None:
    """(offset, character) of the first character clingo's parser must not see: NUL (its C strings would end
    there) or a non-ASCII character outside strings and comments (clingo's lexer reports such a byte in a
    message its Python binding cannot decode, which aborts the process)."""
    if text.isascii() and "\x00" not in text:
        return None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':                    # a string ends at its quote; one that a line end cuts is no string
            i += 1
            first = None
            while i < n and text[i] not in '"\n':
                if text[i] == "\x00" or (first is None and not text[i].isascii()):
                    first = first or i
                    if text[i] == "\x00":
                        return i, text[i]
                i += 2 if text[i] == "\\" else 1
            if (i >= n or text[i] == "\n") and first is not None:
                return first, text[first]
        elif text.startswith("%*", i):
            end = text.find("*%", i + 2)
            i = n if end < 0 else end + 1
        elif c == "%":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == "\x00" or not c.isascii():
            return i, c
        i += 1
    return None


def parse_statements(text: str, file: str, unlocated) -> list:
    """clingo.ast statements of ``text``; a syntax error is a ProgramError at its file:line:col, or
    ``unlocated(message)`` when clingo gives no location."""
    found = _outside_ascii(text)
    if found is not None:
        offset, char = found
        line = text.count("\n", 0, offset) + 1
        col = offset - (text.rfind("\n", 0, offset) + 1) + 1
        what = "a NUL character" if char == "\x00" else f"the non-ASCII character {char!r} outside a string or comment"
        hint = "remove it: clingo would read the program only up to it" if char == "\x00" else \
            "clingo names and operators are ASCII: write other text inside a string, as in p(\"café\")"
        raise ProgramError(what, file=file, line=line, col=col, hint=hint)
    messages: list[str] = []
    out: list = []
    try:
        ast.parse_string(text, out.append, logger=lambda code, msg: messages.append(msg), message_limit=5)
    except RuntimeError:
        msg = messages[0] if messages else "syntax error"
        raise (clingo_error(msg, file) or unlocated(" ".join(msg.split()))) from None
    return out


def read_program(path) -> str:
    """A program file's text: UTF-8, a byte-order mark dropped; a file that cannot be read or is not UTF-8 is a
    ProgramError at the file (and the line of the first byte that is not UTF-8)."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ProgramError(f"cannot read program: {error.strerror}", file=str(path)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise ProgramError("the program is not UTF-8 text", file=str(path), line=line,
                           hint="save it as UTF-8") from None
