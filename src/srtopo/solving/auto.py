"""``auto`` for the choice part: one strategy solves every time point while a bandit (``solving.bandit``) measures
the others on the same time points in a process of their own (``solving.probes``), and the fastest takes over."""
from __future__ import annotations

import atexit
import json
import queue
import subprocess
import sys
import threading
import time

from srtopo.solving.bandit import ProbingBandit
from srtopo.solving.spec import SubprogramSpec
from srtopo.solving.strategies import AUTO_ARMS, make_fixed_choice_solver


class _ProbeProcess:
    """The process where ``auto``'s challengers solve (``python -m srtopo.solving.probes``): requests go as JSON
    lines on its stdin, each time point's input atoms as the text clingo prints for their Symbols; its replies
    are read by a thread into a queue, so that the stream never waits for a probe."""

    def __init__(self, spec: SubprogramSpec, static: dict | None, externals):
        self.process = subprocess.Popen([sys.executable, "-m", "srtopo.solving.probes"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, encoding="utf-8")
        self.replies: queue.SimpleQueue = queue.SimpleQueue()
        self.alive = True
        self._texts: dict = {}          # Symbol -> the text clingo prints for it (str() costs ~2 us a call)
        self._reader = threading.Thread(target=self._read, name="srtopo-probe-replies", daemon=True)
        self._reader.start()
        self._send({"rules": spec.rules_text, "inputs": spec.input_sigs, "shown": spec.shown_sigs,
                    "match": [spec.match(k) for k in range(len(spec.input_sigs))], "domains": spec.domains,
                    "static": _rows(static or {}, spec.input_sigs),
                    "scripts": None if externals is None else list(externals.scripts),
                    "where": None if externals is None else externals.where})
        _PROBES.add(self)

    def _read(self) -> None:
        for line in self.process.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)

    def _send(self, message: dict) -> None:
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self.alive = False

    def probe(self, step: int, arm: str, inputs) -> None:
        """Have ``arm`` solve the time point ``step`` with ``inputs`` (sig -> atoms)."""
        if len(self._texts) > 1 << 16:      # a stream whose atoms keep changing: the cache stays bounded
            self._texts.clear()
        self._send({"step": step, "arm": arm, "inputs": _rows(inputs, None, self._texts)})

    def close(self) -> None:
        _PROBES.discard(self)
        self.alive = False
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=10)


def _rows(atoms: dict, sigs, texts: dict | None = None) -> list:
    """sig -> Symbols as JSON rows [name, arity, [text of each Symbol]] (only ``sigs`` when given); ``texts``
    caches the text of each Symbol."""
    def text(atom) -> str:
        if texts is None:
            return str(atom)
        found = texts.get(atom)
        if found is None:
            found = texts[atom] = str(atom)
        return found
    return [[name, n, [text(a) for a in found]] for (name, n), found in atoms.items()
            if sigs is None or (name, n) in sigs]


#: probe processes still running: ended before the interpreter exits
_PROBES: set = set()
atexit.register(lambda: [probes.close() for probes in list(_PROBES)])


class AutoChoiceSolver:
    """``auto`` for the choice part: a bandit over measured step times (``solving.bandit.ProbingBandit``) among
    the strategies of ``AUTO_ARMS``. The incumbent solves every time point here; now and then a challenger
    solves the same time points in the probe process (``_ProbeProcess``; its answers are not used), so that
    they are compared on the same inputs without slowing the stream; one that is clearly faster takes over.
    A kept solver that was not run for a while catches up on its next step: it is given the whole current
    input, as at every step."""
    kind = "auto"

    def __init__(self, spec: SubprogramSpec, static: dict | None = None, externals=None, arms=AUTO_ARMS,
                 probing: bool = True):
        self.spec, self.static, self.externals = spec, static, externals
        self.bandit = ProbingBandit(tuple(arms))
        self.solvers: dict = {}
        self.probing = probing and len(self.bandit.arms) > 1
        self._probes: _ProbeProcess | None = None
        self._pending: dict = {}            # step -> (challenger, incumbent's seconds, warm)
        self.probe_stats: dict = {}         # arm -> the probe process's counts for it
        self.probe_errors: list = []

    @property
    def stats(self) -> dict:
        out: dict = {"solves": 0, "groundings": 0, "ground_s": 0.0, "search_s": 0.0}
        for solver in self.solvers.values():
            for key in out:
                out[key] += solver.stats.get(key, 0)
        out["pulls"] = dict(self.bandit.pulls)
        out["incumbent"] = self.bandit.incumbent
        return out

    def _solver(self, arm):
        solver = self.solvers.get(arm)
        if solver is None:
            # not adaptive: an arm runs on some time points only, so its input domain grows between its calls
            # and it would fall back to restarting; restart is an arm of its own, and the bandit picks it if it
            # is faster
            solver = self.solvers[arm] = make_fixed_choice_solver(arm, self.spec, self.static, self.externals,
                                                                  adaptive=False)
        return solver

    def solve(self, inputs) -> list | None:
        self._collect(wait=False)
        started = time.perf_counter()
        answer = self._solver(self.bandit.incumbent).solve(inputs)
        seconds = time.perf_counter() - started
        step = self.bandit.step
        challenger = self.bandit.challenger(busy=bool(self._pending)) if self.probing else None
        warm = self.bandit.warm
        self.bandit.record(seconds)
        if challenger is not None:
            if self._probes is None:
                self._probes = _ProbeProcess(self.spec, self.static, self.externals)
            if self._probes.alive:
                self._pending[step] = (challenger, seconds, warm)
                self._probes.probe(step, challenger, inputs)
            else:
                self.probing = False
        return answer

    def _collect(self, wait: bool) -> None:
        """The probes' outcomes to the bandit, as they arrive (``wait``: until none is pending)."""
        while self._pending and self._probes is not None:
            try:
                reply = self._probes.replies.get(block=wait, timeout=600 if wait else None)
            except queue.Empty:
                return
            if reply is None:           # the probe process ended: no more probes
                self._pending.clear()
                self.probing = False
                return
            challenger, incumbent_seconds, warm = self._pending.pop(reply["step"], (None, 0.0, False))
            if challenger is None:
                continue
            if "error" in reply:        # the arm cannot run this program: not a candidate
                self.probe_errors.append(f"{challenger}: {reply['error']}")
                self.bandit.retire(challenger)
                continue
            self.probe_stats[challenger] = {"solves": reply["solves"], "groundings": reply["groundings"]}
            self.bandit.probed(challenger, reply["seconds"], incumbent_seconds, warm)

    @property
    def probe_pid(self) -> int | None:
        """The probe process's pid while it runs (its memory is part of what ``auto`` costs)."""
        return None if self._probes is None or not self._probes.alive else self._probes.process.pid

    def settle(self) -> None:
        """Wait for the pending probes' outcomes (tests use it to make the bandit's state deterministic)."""
        self._collect(wait=True)

    def close(self) -> None:
        if self._probes is not None:
            self._probes.close()
            self._probes = None
        self._pending.clear()
        for solver in self.solvers.values():
            close = getattr(solver, "close", None)
            if close is not None:
                close()

    def __del__(self):
        try:
            if self._probes is not None:
                self._probes.close()
        except Exception:
            pass
