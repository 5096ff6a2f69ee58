"""Where every clingo Control comes from, so that one module owns them: ``new_control`` makes the library's,
``HostedControl`` one made by clingo's own application for the options the library refuses. With them, what
every solver reads from a Control (``read_answer``, ``chosen_answer``) and ``grounding_errors``."""
from __future__ import annotations

import atexit
import threading

import clingo
from clingo.application import Application, clingo_main

from srtopo.errors import SrtopoError

#: every Control's arguments (a strategy adds its own after them)
ARGS = ["--warn=none"]


def new_control(args: list, logger=None, message_limit: int = 20) -> clingo.Control:
    """A Control with ``args``; ``logger`` receives clingo's messages (at most ``message_limit`` of them)."""
    return clingo.Control(args, logger=logger, message_limit=message_limit)


def read_answer(ctl) -> list:
    """The shown atoms of the answer set of a stratified subprogram (its only one)."""
    with ctl.solve(yield_=True) as handle:
        for model in handle:
            return model.symbols(shown=True)
    raise SrtopoError("a subprogram has no answer set (the program is not stratified as analysed)")


def chosen_answer(ctl) -> list | None:
    """One answer set's shown atoms (the optimal one under optimisation: clingo's last model), None if none."""
    found = None
    with ctl.solve(yield_=True) as handle:
        for model in handle:
            found = model.symbols(shown=True)
        result = handle.get()
    return found if result.satisfiable else None


def grounding_errors(text: str) -> list[str]:
    """clingo's error messages for a program that cannot be ground (unsafe variables, ...), or []."""
    messages: list[str] = []
    ctl = new_control(ARGS, logger=lambda code, msg: messages.append(msg), message_limit=20)
    try:
        ctl.add("base", [], text)
        ctl.ground([("base", [])])
    except RuntimeError:
        return messages or ["the program cannot be ground"]
    return []


class HostedControl:
    """A Control made by clingo's own application (``clingo_main``) on a thread of its own, for the options the
    library's Control refuses (``--lemma-out``). Its ``main`` hands the Control over and waits until ``close``;
    the Control is used from the caller's thread meanwhile (it is never used by two threads at once)."""

    def __init__(self, args: list):
        ready, self._done = threading.Event(), threading.Event()
        self.ctl = None
        self._failed = None
        host = self

        class _Main(Application):
            program_name = "srtopo"

            def main(self, ctl, files):
                host.ctl = ctl
                ready.set()
                host._done.wait()

        def run():
            try:
                clingo_main(_Main(), args)
            except BaseException as error:      # a bad option: reported to the caller below
                host._failed = error
            finally:
                ready.set()
        self._thread = threading.Thread(target=run, name="srtopo-clingo", daemon=True)
        self._thread.start()
        ready.wait()
        if self.ctl is None:
            raise SrtopoError(f"clingo could not start with {' '.join(args)}: {self._failed}")
        _HOSTED.add(self)

    def close(self) -> None:
        self._done.set()
        self._thread.join()
        _HOSTED.discard(self)


#: hosted Controls still open: closed before the interpreter exits (a thread still inside clingo_main when
#: Python finalizes is unwound through clingo's C++ frames, which aborts the process)
_HOSTED: set = set()


def _close_hosted() -> None:
    for host in list(_HOSTED):
        host.close()


atexit.register(_close_hosted)
