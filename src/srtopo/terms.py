"""clingo's terms as text: the range of its integers and splitting a list of terms. Shared by the stream
readers (``logic.atoms``), the rule parser and the solvers (the lemmas clasp writes), so it sits at the root."""
from __future__ import annotations

#: clingo's integers are 32-bit: a larger literal would wrap silently (4294967296 reads as 0)
CLINGO_INT_MAX = 2 ** 31 - 1


def split_top_level(text: str, separator: str) -> list[str]:
    """Split ``text`` at each ``separator`` outside strings and brackets."""
    out, depth, start, in_str, i = [], 0, 0, False, 0
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == separator and depth == 0:
            out.append(text[start:i])
            start = i + 1
        i += 1
    out.append(text[start:])
    return out
