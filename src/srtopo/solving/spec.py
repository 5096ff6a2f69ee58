"""What a solver solves: a subprogram (``SubprogramSpec``), the program text every solver writes for it, and the
grounding context (``Inputs``) through which inputs reach its rules.

Inputs never become program text: rules receive them through ``@sr_in(k)`` / ``@sr_dom(k)`` context
functions that return the parsed clingo Symbols, matched by ``p(X1,..,Xn) = @sr_in(k)``.
"""
from __future__ import annotations

from dataclasses import dataclass

from srtopo.solving.externals import EXTERNAL_PREFIX

#: the input of a signature no atom was given for (one object, so that solvers can compare inputs by identity)
EMPTY: frozenset = frozenset()


@dataclass(frozen=True)
class SubprogramSpec:
    rules_text: str                  # flat ASP rules (generated from the program's AST, never from stream text)
    input_sigs: tuple                # ((name, arity), ...) read from the caller's inputs
    shown_sigs: tuple                # ((name, arity), ...) returned by solve
    input_match: tuple = ()          # per input sig: the predicate name its given atoms carry (default: same)
    domains: tuple = ()              # ``#external p(t) : body.`` statements: the inputs' declared domains

    def match(self, k: int) -> str:
        return self.input_match[k] if self.input_match else self.input_sigs[k][0]


def _vars(n: int) -> str:
    return ",".join(f"X{i}" for i in range(1, n + 1))


def atom_pattern(name: str, n: int) -> str:
    """``name(X1,..,Xn)`` (``name`` when n is 0)."""
    return f"{name}({_vars(n)})" if n else name


def show_statements(spec: SubprogramSpec) -> str:
    """The subprogram's #show statements (``#show.`` when it shows nothing: clingo would show every atom)."""
    return "".join(f"#show {name}/{n}.\n" for name, n in spec.shown_sigs) or "#show.\n"


class Inputs:
    """Context object: clingo calls ``sr_in(k)`` once per grounding of the bridging rule, and an external atom's
    function (``solving.externals``) once per instance of its input terms."""

    def __init__(self, lists, externals=None):
        self.lists = lists
        self.externals = externals

    def __getattr__(self, name):
        externals = self.__dict__.get("externals")
        if externals is not None and name.startswith(EXTERNAL_PREFIX):
            return externals.wrapper(name)
        raise AttributeError(name)

    def sr_in(self, k):
        return self.lists[k.number]

    sr_dom = sr_in

    def sr_dom_true(self, k):
        return self.lists[k.number][0]

    def sr_dom_false(self, k):
        return self.lists[k.number][1]

    def sr_static(self, k):
        return self.static[k.number]
