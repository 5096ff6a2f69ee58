"""Ctrl-C and SIGTERM: stop at the next safe point, say what was done, exit 130 (143 for SIGTERM).

A signal handler that raises wherever the main thread happens to be breaks what it interrupts: a py4j call
into Spark's JVM (``reentrant call``, ``Py4JNetworkError``), a line half written to ``--out``, an interpreter
shutting down while a thread holds standard input. So inside ``deferred()`` (the loops that run a stream) the
first signal only sets a flag, which they look at between records, time points and micro-batches (``check``),
unwinding with :class:`Interrupted` there, after the batch in progress. Outside them (loading a TBox, compiling a
program) and on a second signal ("now"), the handler raises at once.

Nothing here imports a runner; the CLI calls ``install`` and the runners call ``check`` / ``requested``.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal. ``note`` says what was committed and how to go on (the runner that stopped
    fills it in); ``forced``: a second signal stopped it at once, not at a safe point."""

    def __init__(self, signum: int = signal.SIGINT, note: str = "", forced: bool = False):
        super().__init__(signum)
        self.signum = signum
        self.note = note
        self.forced = forced

    @property
    def exit_status(self) -> int:
        return 128 + int(self.signum)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name


class _State:
    def __init__(self):
        self.signum: int | None = None
        self.count = 0
        self.installed = False
        self.deferred = 0
        self.event = threading.Event()


_STATE = _State()


def _handler(signum, _frame) -> None:
    _STATE.count += 1
    if _STATE.signum is None:
        _STATE.signum = signum
    _STATE.event.set()
    if _STATE.count > 1 or not _STATE.deferred:
        raise Interrupted(_STATE.signum, forced=_STATE.count > 1)


@contextmanager
def deferred():
    """A block that looks at ``requested`` itself: a first signal only sets the flag there."""
    _STATE.deferred += 1
    try:
        yield
    finally:
        _STATE.deferred -= 1


def install():
    """Route SIGINT and SIGTERM here (main thread only; a library user keeps Python's defaults). Returns a
    function that puts the previous handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    for signum in SIGNALS:
        signal.signal(signum, _handler)
    _STATE.installed = True

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        _STATE.installed = False
        reset()
    return restore


def installed() -> bool:
    return _STATE.installed


def requested() -> bool:
    """A signal arrived and the run should stop at its next safe point."""
    return _STATE.signum is not None


def signum() -> int | None:
    return _STATE.signum


def check(note=None) -> None:
    """Unwind with :class:`Interrupted` if a signal arrived (``note``: a string, or a function giving one)."""
    if _STATE.signum is not None:
        raise Interrupted(_STATE.signum, note() if callable(note) else (note or ""))


def wait(seconds: float) -> bool:
    """Sleep up to ``seconds``; True as soon as a signal arrives."""
    return _STATE.event.wait(seconds)


def reset() -> None:
    """Forget a signal (tests; a process that goes on after handling one)."""
    _STATE.signum = None
    _STATE.count = 0
    _STATE.event.clear()
