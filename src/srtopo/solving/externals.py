"""External atoms ``&f(t1,...,tn; u1,...,um)``: the user's Python functions (``--py-script``), called by clingo
while it grounds (its Python function interface), so stream data reaches them, and comes back, only as symbols.

The conventions are those of I-DLV's Python external atoms as the I-DLV-sr corpus's scripts use them:

* f receives the input terms as Python values: an integer as ``int``, a string as ``str`` (its contents, without
  quotes), a constant as ``str`` (its name), any other term as its text;
* with no output term f returns a truth value (``bool``, or the integers 0 / 1); with one output term a value;
  with m > 1 a tuple of m values; a ``list`` of such results gives several answers (none: an empty list). A
  value is an ``int`` within clingo's 32-bit integers (a number) or a ``str`` (a string term).

A script that cannot be loaded, a function it does not define, and a call that raises or returns something
else are errors naming the atom, the script and the input values (``ExternalAtomError``).

They belong to solving, not to the rule parser, because clingo calls them while it grounds: from the grounding
context of every solver (``solving.spec``), here and in the probe process (``solving.probes``).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Callable, Sequence

from clingo import Number, String, Symbol, SymbolType, Tuple_

from srtopo.errors import ProgramError
from srtopo.terms import CLINGO_INT_MAX

#: the clingo function an external atom ``&f`` calls (``@__sr_x_f``), so user names never meet the evaluator's own
EXTERNAL_PREFIX = "__sr_x_"


class ExternalAtomError(ProgramError):
    """An external atom's script is missing or broken, or a call of its function failed."""


def function_name(name: str, outputs: int) -> str:
    """The clingo function an external atom calls: the number of output terms is part of it (it decides how the
    result is read), the prefix keeps user names apart from the evaluator's own context functions."""
    return f"{EXTERNAL_PREFIX}{outputs}_{name}"


def split_function_name(function: str) -> tuple[str, int]:
    """(f, m) of ``function_name(f, m)``."""
    outputs, _, name = function[len(EXTERNAL_PREFIX):].partition("_")
    return name, int(outputs)


def _value(symbol: Symbol):
    if symbol.type == SymbolType.Number:
        return symbol.number
    if symbol.type == SymbolType.String:
        return symbol.string
    if symbol.type == SymbolType.Function and not symbol.arguments and symbol.name:
        return symbol.name
    return str(symbol)


class ExternalFunctions:
    """The functions of the given scripts, by name; ``where`` maps a clingo function name to the external atom
    as written and its location (for messages)."""

    def __init__(self, scripts: Sequence[str], where: dict | None = None):
        self.where = dict(where or {})
        self.scripts = tuple(scripts)
        self.functions: dict[str, tuple[Callable, str]] = {}
        self.defined_by: dict[str, list[str]] = {}     # a function defined (not imported) by several scripts
        for index, script in enumerate(scripts):
            module = _load(script, index)
            for name, value in vars(module).items():
                if callable(value) and not name.startswith("_"):
                    if getattr(value, "__module__", None) == module.__name__:
                        self.defined_by.setdefault(name, []).append(script)
                    if name not in self.functions:
                        self.functions[name] = (value, script)
        self._wrappers: dict[str, Callable] = {}

    def check(self, functions) -> None:
        """Every external atom has a function to call (raised before any time point is evaluated)."""
        for function in sorted(functions):
            name, _outputs = split_function_name(function)
            if len(self.defined_by.get(name, ())) > 1:
                written = self.where.get(function, f"&{name}")
                raise ExternalAtomError(f"external atom {written}: '{name}' is defined by several scripts ("
                                        + ", ".join(self.defined_by[name]) + ")",
                                        hint="rename one of them, or pass only the script meant")
            if name not in self.functions:
                written = self.where.get(function, f"&{name}")
                scripts = ", ".join(self.scripts) or "no --py-script given"
                raise ExternalAtomError(f"external atom {written}: no function '{name}' in the scripts "
                                        f"({scripts})", hint="pass the script that defines it with --py-script")

    def wrapper(self, function: str) -> Callable:
        found = self._wrappers.get(function)
        if found is None:
            found = self._wrappers[function] = self._wrap(function)
        return found

    def _wrap(self, function: str) -> Callable:
        name, outputs = split_function_name(function)
        python, script = self.functions[name]
        written = self.where.get(function, f"&{name}")

        def fail(values, problem: str) -> ExternalAtomError:
            shown = ", ".join(repr(v) for v in values)
            return ExternalAtomError(f"external atom {written}: {name}({shown}) in {script} {problem}",
                                     hint="fix the script, or the program's use of the atom")

        def call(*symbols):
            values = [_value(s) for s in symbols]
            try:
                result = python(*values)
            except Exception as error:      # the user's code: whatever it raises is reported, located
                raise fail(values, f"raised {type(error).__name__}: {error}") from None
            if not outputs:          # 0 when false, so that 'not &f(...;)' holds (an empty answer would drop the rule)
                return Number(1 if _truth(result, lambda problem: fail(values, problem)) else 0)
            answers = result if isinstance(result, list) else [result]
            return [_answer(answer, outputs, lambda problem: fail(values, problem)) for answer in answers]
        return call


def _truth(answer, fail) -> bool:
    if isinstance(answer, bool) or (isinstance(answer, int) and answer in (0, 1)):
        return bool(answer)
    raise fail(f"returned {answer!r} ({type(answer).__name__}) where a truth value is expected (the atom has "
               "no output terms)")


def _answer(answer, outputs: int, fail) -> Symbol:
    if outputs == 1:
        return _symbol(answer, fail)
    if not isinstance(answer, tuple) or len(answer) != outputs:
        raise fail(f"returned {answer!r} where a tuple of {outputs} values is expected")
    return Tuple_([_symbol(v, fail) for v in answer])


def _symbol(value, fail) -> Symbol:
    if isinstance(value, bool):
        raise fail(f"returned the truth value {value!r} where a value (int or str) is expected")
    if isinstance(value, int):
        if not -CLINGO_INT_MAX - 1 <= value <= CLINGO_INT_MAX:
            raise fail(f"returned {value}, beyond clingo's 32-bit integers (return it as a str)")
        return Number(value)
    if isinstance(value, str):
        return String(value)
    raise fail(f"returned {value!r} ({type(value).__name__}); an int or a str is expected")


def _load(script: str, index: int):
    path = Path(script)
    if not path.is_file():
        raise ExternalAtomError("external-atom script not found", file=script,
                                hint="give the path of an existing .py file to --py-script")
    spec = importlib.util.spec_from_file_location(f"srtopo_external_{index}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    directory = str(path.resolve().parent)
    added = directory not in sys.path
    if added:
        sys.path.insert(0, directory)       # a script may import its neighbours, as when run by itself
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as error:
        raise ExternalAtomError(f"external-atom script cannot import '{error.name}'", file=script,
                                hint=f"install it into the environment srtopo runs in: pip install {error.name}") \
            from None
    except SyntaxError as error:
        raise ExternalAtomError(f"external-atom script is not valid Python: {error.msg}", file=script,
                                line=error.lineno) from None
    except Exception as error:          # the user's module code
        raise ExternalAtomError(f"external-atom script failed while loading: {type(error).__name__}: {error}",
                                file=script) from None
    finally:
        if added:
            sys.path.remove(directory)
    return module
