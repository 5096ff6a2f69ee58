"""Stream atoms as clingo symbols: every atom of a stream is parsed by ``clingo.parse_term`` and only the resulting
Symbol is used, so stream text never becomes program text. RDF statements become ``triple/3`` atoms."""
from __future__ import annotations

import re

from clingo import Function, Number, String, Symbol, SymbolType, parse_term

from srtopo.errors import StreamInputError
from srtopo.logic.syntax import RESERVED
from srtopo.terms import CLINGO_INT_MAX, split_top_level


class RecordError(StreamInputError):
    """One stream record is malformed (reason in the message); the record is rejected, the stream goes on."""


def _quiet(_code, _message):
    pass


_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
_INTEGER = re.compile(r"(-?)\b(\d+)\b")
_TEN_DIGITS = re.compile(r"\d{10}")


def _integer_beyond_clingo(text: str) -> str | None:
    """The first integer literal outside strings that clingo cannot hold, or None."""
    if not _TEN_DIGITS.search(text):       # 2^31 has ten digits: the common case costs one scan
        return None
    for sign, digits in _INTEGER.findall(_STRING.sub('""', text)):
        if int(digits) > CLINGO_INT_MAX + (1 if sign else 0):
            return sign + digits
    return None


def parse_atom(text: str) -> Symbol:
    """One ground atom, parsed as a clingo term; anything else is a RecordError."""
    text = text.strip()
    if not text:
        raise RecordError("empty atom")
    if "\x00" in text:         # clingo reads a C string: it would take the text up to the NUL as the atom
        raise RecordError(f"'{short(text)}' holds a NUL character")
    try:
        sym = parse_term(text, logger=_quiet)
    except (RuntimeError, UnicodeDecodeError):    # clingo's message may quote text it cannot decode back
        if not _STRING.sub('""', text).isascii():
            raise RecordError(f"'{short(text)}': clingo names are ASCII (write other text as a string: "
                              "b(\"café\"))") from None
        raise RecordError(f"'{short(text)}' is not a ground atom") from None
    name = sym.name if sym.type == SymbolType.Function else ""
    if not name or not sym.positive:
        raise RecordError(f"'{short(text)}' is not an atom")
    if name.startswith(RESERVED):
        raise RecordError(f"'{short(text)}' uses the reserved prefix '{RESERVED}'")
    too_large = _integer_beyond_clingo(text)
    if too_large is not None:
        raise RecordError(f"'{short(text)}': the integer {too_large} is beyond clingo's 32-bit integers "
                          f"(write it as a string: \"{too_large}\")")
    return sym


#: what is read or printed of a symbol, by its clingo representation: clingo interns symbols (one representation
#: per symbol for the life of the process), and a stream's derived atoms recur from time point to time point,
#: where asking clingo again is foreign calls per atom and per argument
_SIGNATURES: dict = {}
_TEXTS: dict = {}
_FIELDS: dict = {}
#: symbols each of them keeps before starting over
PRINTED_LIMIT = 1_000_000


def symbol_signature(sym: Symbol) -> tuple[str, int]:
    """(name, arity) of a function symbol, kept."""
    sig = _SIGNATURES.get(sym._rep)
    if sig is None:
        if len(_SIGNATURES) > PRINTED_LIMIT:
            _SIGNATURES.clear()
        sig = _SIGNATURES[sym._rep] = (sym.name, len(sym.arguments))
    return sig


def symbol_text(sym: Symbol) -> str:
    """``str(sym)``, kept."""
    text = _TEXTS.get(sym._rep)
    if text is None:
        if len(_TEXTS) > PRINTED_LIMIT:
            _TEXTS.clear()
        text = _TEXTS[sym._rep] = str(sym)
    return text


def atom_fields(sym: Symbol) -> tuple[str, str, list[str]]:
    """("p/n", text, argument texts) of a named function symbol. The text is assembled from the arguments'
    texts the way clingo prints a function term (``name(a1,...,an)``, ``-`` when negated): one string
    conversion per argument instead of two, which is most of the cost of turning atoms into rows; kept."""
    found = _FIELDS.get(sym._rep)
    if found is None:
        if len(_FIELDS) > PRINTED_LIMIT:
            _FIELDS.clear()
        name = sym.name
        args = tuple(str(x) for x in sym.arguments)
        text = f"{name}({','.join(args)})" if args else name
        found = _FIELDS[sym._rep] = (f"{name}/{len(args)}", text if sym.positive else "-" + text, args)
    return found[0], found[1], list(found[2])


def short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def split_atoms(text: str) -> list[str]:
    """Split ``a(1); b("x;y"); c`` at top-level ';' (not inside strings or brackets)."""
    return [p for p in (s.strip() for s in split_top_level(text, ";")) if p]


#: an atom in the form clingo prints it, with constant, integer and plain string arguments (``b(1,-2)``,
#: ``p(x,"a b")``): clingo parses such a text back to a symbol that prints as the same text, so the row fields
#: of a line made only of them are read off the text (``canonical_fields``)
_NAME = r"[a-z][A-Za-z0-9_']*"
_ARG = r'(?:0|-?[1-9][0-9]{0,9}|' + _NAME + r'|"[^"\\\x00-\x1f\x7f]*")'
_PLAIN_ATOM = re.compile(rf"({_NAME})(?:\(({_ARG}(?:,{_ARG})*)\))?")
_PLAIN_ARG = re.compile(_ARG)


def canonical_fields(pieces: list[str]) -> list | None:
    """The row fields (``atom_fields``) of the atoms ``pieces`` (texts from ``split_atoms``) when every one is
    an atom exactly as clingo prints it (integers within clingo's range), else None: the caller parses them
    with clingo. About six times cheaper than parsing and printing each atom (lines of thousands of atoms)."""
    out = []
    for text in pieces:
        match = _PLAIN_ATOM.fullmatch(text)
        if match is None:
            return None
        name, inner = match.groups()
        if inner is None:
            out.append((name + "/0", text, []))
            continue
        args = _PLAIN_ARG.findall(inner) if '"' in inner else inner.split(",")
        for arg in args:
            if len(arg) >= 10 and arg[-1].isdigit() and arg[0] in "-123456789" and abs(int(arg)) > CLINGO_INT_MAX:
                return None
        out.append((f"{name}/{len(args)}", text, args))
    return out


_ECHAR = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))')
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
XSD_INTEGERS = {"http://www.w3.org/2001/XMLSchema#" + t for t in
                ("integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
                 "nonPositiveInteger", "negativeInteger", "unsignedInt", "unsignedShort", "unsignedByte",
                 "unsignedLong")}


def _literal_symbol(text: str) -> Symbol:
    """An N-Triples literal as a clingo symbol: an integer datatype within clingo's range as a number, anything
    else as the string of its lexical form (language tag and datatype dropped)."""
    end = text.rindex('"')
    lexical = _ECHAR.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)) if (m.group(1) or m.group(2))
                         else _ECHARS[m.group(3)], text[1:end])
    datatype = text[end + 1:]
    if datatype.startswith("^^<") and datatype[3:-1] in XSD_INTEGERS:
        try:
            value = int(lexical.strip())
        except ValueError:
            value = None
        if value is not None and -CLINGO_INT_MAX - 1 <= value <= CLINGO_INT_MAX:
            return Number(value)
    return String(lexical)


def triple_atom(subject: str, predicate: str, obj: str | None, literal: str | None,
                strings: dict | None = None) -> Symbol:
    """The atom of an RDF statement: ``triple(S, P, O)``, IRIs (without brackets) and blank nodes (``_:b``) as
    strings, literals as ``_literal_symbol``. ``strings``: the String symbols of IRIs made before (a caller that
    makes many atoms of few predicates and classes keeps them; each String is a call into clingo)."""
    if strings is None:
        return Function("triple", [String(subject), String(predicate),
                                   _literal_symbol(literal) if obj is None else String(obj)])
    if len(strings) > PRINTED_LIMIT:
        strings.clear()
    terms = []
    for text in (subject, predicate, obj):
        if text is None:
            terms.append(_literal_symbol(literal))
            continue
        found = strings.get(text)
        if found is None:
            found = strings[text] = String(text)
        terms.append(found)
    return Function("triple", terms)


def statement_atom(subject: str, predicate: str, obj: str | None, literal: str | None,
                   strings: dict | None = None) -> Symbol:
    """``triple_atom`` of a statement, or a RecordError when its literal has an escape that is no character (one
    beyond Unicode, a surrogate): clingo cannot hold it."""
    try:
        return triple_atom(subject, predicate, obj, literal, strings)
    except (ValueError, OverflowError, UnicodeError, RuntimeError):
        raise RecordError(f"the literal {short(literal or '')} has an escape that is not a character") from None
