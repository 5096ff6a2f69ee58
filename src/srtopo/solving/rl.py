"""``rl``: the choice part on one kept Control with a learned-constraint cache ("Managing caching strategies for
stream reasoning with reinforcement learning", Alg. 2): the lemmas clasp writes are read back (a pseudo-terminal),
weighted, and the best are added as constraints switched by externals. ``rl:lambda=..,store=..,active=..,lbd=..``
sets its parameters (``RlParams``)."""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import clingo

from srtopo.errors import ProgramError
from srtopo.solving.control import HostedControl, chosen_answer
from srtopo.solving.kept import KeptChoiceSolver
from srtopo.solving.spec import SubprogramSpec
from srtopo.terms import split_top_level


class _LemmaPipe:
    """Where clasp writes the lemmas it learns (``--lemma-out``): a pseudo-terminal, so that its C library
    flushes each line as it is written (a file or a pipe would be flushed in 4 kB blocks, often only when the
    Control ends), drained by a thread while clingo solves (a full terminal buffer would stop the solver)."""

    def __init__(self):
        import tty  # Unix only, as pseudo-terminals are
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self._chunks: list = []
        self._rest = b""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="srtopo-lemmas", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._chunks.append(chunk)

    def lines(self) -> list[str]:
        """The whole lines written since the last call."""
        with self._lock:
            data, self._chunks = self._rest + b"".join(self._chunks), []
        *lines, self._rest = data.split(b"\n")
        return [line.decode("utf-8", "replace") for line in lines if line.strip()]

    def close(self) -> None:
        for fd in (self.slave, self.master):
            try:
                os.close(fd)
            except OSError:
                pass


@dataclass(frozen=True)
class RlParams:
    """The learned-constraint cache of ``rl`` ("Managing caching strategies for stream reasoning with
    reinforcement learning", Alg. 2): learning rate, constraints stored (n) and activated (k) per time point,
    and the largest LBD of a lemma clasp hands over."""
    rate: float = 0.1
    store: int = 400
    active: int = 200
    lbd: int = 4

    @staticmethod
    def parse(strategy: str) -> "RlParams":
        """``rl`` or ``rl:lambda=0.1,store=400,active=200,lbd=4`` (any of them)."""
        _name, _, text = strategy.partition(":")
        values: dict = {}
        names = {"lambda": ("rate", float), "store": ("store", int), "active": ("active", int), "lbd": ("lbd", int)}
        for item in filter(None, (p.strip() for p in text.split(","))):
            key, _, value = item.partition("=")
            if key not in names:
                raise ProgramError(f"unknown rl parameter {key!r} in {strategy!r}", hint="use lambda, store, "
                                   "active and lbd, e.g. rl:lambda=0.1,store=400,active=200,lbd=4")
            field_name, kind = names[key]
            try:
                values[field_name] = kind(value)
            except ValueError:
                raise ProgramError(f"rl parameter {key} must be a number, not {value!r}") from None
        params = RlParams(**values)
        if not 0 < params.rate <= 1 or params.store < 1 or not 0 <= params.active <= params.store or params.lbd < 1:
            raise ProgramError(f"bad rl parameters in {strategy!r}", hint="0 < lambda <= 1, 0 <= active <= store, "
                               "store >= 1, lbd >= 1")
        return params

    def name(self) -> str:
        return f"rl:lambda={self.rate:g},store={self.store},active={self.active},lbd={self.lbd}"


#: the reward's coefficient a and the optimistic initial weight w1 (Alg. 2 and section 3.1 of the paper)
RL_SCALE, RL_INITIAL = 20.0, 1000.0


class _Lemma:
    __slots__ = ("literals", "lbd", "weight", "guard", "on")

    def __init__(self, literals: tuple, lbd: int):
        self.literals = literals        # ((positive, Symbol), ...): the constraint ":- l1, ..., ln."
        self.lbd = lbd
        self.weight = RL_INITIAL
        self.guard = None               # the program literal of its switch in the current Control
        self.on = False                 # active at the last solve


class RlChoiceSolver(KeptChoiceSolver):
    """``rl``: the paper's reinforcement-learned constraint cache on one kept Control. clasp forgets its own
    lemmas at every time point (``--forget-on-step=lemmaScores,lemmas``, all constraints "frozen") and writes
    the lemmas it learns over shown atoms with their LBD (``--lemma-out-txt``, ``--lemma-out-dom=output``,
    ``--lemma-out-lbd``); a store keeps at most ``store`` of them with weights ``w <- w + lambda (R - w)`` and
    adds the ``active`` best as integrity constraints, each switched by an external atom of its own (Alg. 2).

    Approximations, where clingo does not expose what the paper's solver does (docs/reasoning.md): only lemmas
    over shown atoms can be handed back (clasp names no other atom); a lemma counts as used when it was active
    and binding in the answer (all its literals but one true); a lemma written after the answer was found is
    counted at the next time point; LBD enters the reward relative to the ``lbd`` bound."""

    def __init__(self, spec: SubprogramSpec, static: dict | None = None, externals=None,
                 params: RlParams = RlParams()):
        self.params = params
        self.lemmas: dict = {}          # literals -> _Lemma
        self.dead = 0                   # switches turned off for good in the current Control
        self._host = self._pipe = None
        super().__init__(spec, static, externals, "lemmaScores,lemmas")
        self.kind = "rl"

    def _new_control(self):
        self.close()
        self._pipe = _LemmaPipe()
        self._host = HostedControl(self.args + ["--outf=3", "-V0", f"--lemma-out={self._pipe.path}",
                                                 "--lemma-out-txt", "--lemma-out-dom=output",
                                                 f"--lemma-out-lbd={self.params.lbd}"])
        return self._host.ctl

    def _rebuild(self, current) -> None:
        super()._rebuild(current)
        self.dead = 0
        for lemma in self.lemmas.values():
            lemma.guard = None
        self._add(list(self.lemmas.values()))

    def _add(self, lemmas: list) -> None:
        """The lemmas' constraints, each guarded by a new external atom (false until activated)."""
        atoms = self.ctl.symbolic_atoms
        with self.ctl.backend() as backend:
            for lemma in lemmas:
                body = []
                for positive, symbol in lemma.literals:
                    found = atoms[symbol]
                    if found is None:
                        break
                    body.append(found.literal if positive else -found.literal)
                else:
                    guard = backend.add_atom()
                    backend.add_external(guard, clingo.TruthValue.False_)
                    backend.add_rule([], body + [guard])
                    lemma.guard = guard

    def _answer(self):
        started = time.perf_counter()
        ranked = sorted(self.lemmas.values(), key=lambda c: -c.weight)
        active = {id(c) for c in ranked[:self.params.active]}
        for lemma in ranked:
            on = id(lemma) in active and lemma.guard is not None
            if lemma.guard is not None:
                self.ctl.assign_external(lemma.guard, on)
            lemma.on = on
        answer = chosen_answer(self.ctl)
        self._learn(answer, active)
        self.stats["search_s"] = self.stats.get("search_s", 0.0) + time.perf_counter() - started
        return answer

    def _learn(self, answer, active: set) -> None:
        """Alg. 2, lines 10-13: rewards of every stored lemma, the new ones added, the store cut to ``store``."""
        learned = {}
        for line in self._pipe.lines():
            lemma = _parse_lemma(line)
            if lemma is not None:
                learned[lemma[0]] = lemma[1]
        true = set(answer or ())
        p, scale = self.params, RL_SCALE
        new = {}
        for literals, lbd in learned.items():
            if literals not in self.lemmas:
                lemma = self.lemmas[literals] = _Lemma(literals, lbd)
                reward = scale * (1 - 2 * lbd / p.lbd)
                lemma.weight = RL_INITIAL + p.rate * reward
                new[literals] = lemma
        for literals, lemma in self.lemmas.items():
            if literals in new:
                continue
            rediscovered = literals in learned
            if rediscovered:
                lemma.lbd = learned[literals]
            used = lemma.on and answer is not None and \
                sum((symbol in true) == positive for positive, symbol in literals) == len(literals) - 1
            frozen = id(lemma) not in active
            reward = scale * (1 - 2 * lemma.lbd / p.lbd + used - (frozen and rediscovered)
                              - 0.25 * (frozen and not rediscovered))
            lemma.weight += p.rate * (reward - lemma.weight)
        if len(self.lemmas) > p.store:
            keep = sorted(self.lemmas.values(), key=lambda c: -c.weight)[:p.store]
            kept = {id(c) for c in keep}
            for literals in [k for k, c in self.lemmas.items() if id(c) not in kept]:
                lemma = self.lemmas.pop(literals)
                if lemma.guard is not None:
                    self.ctl.release_external(lemma.guard)
                    self.dead += 1
        self._add([c for k, c in new.items() if k in self.lemmas])
        if self.dead > 4 * p.store:             # released switches keep their rules: the next call starts over
            self.ctl = None
        self.stats["lemmas"] = len(self.lemmas)

    def close(self) -> None:
        if self._host is not None:
            self._host.close()
        if self._pipe is not None:
            self._pipe.close()
        self._host = self._pipe = self.ctl = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _parse_lemma(line: str):
    """``:- a(1), not b(2).  %lbd = 3`` (clasp's text lemmas) as ((positive, Symbol), ...) sorted, and the LBD;
    None for anything else. The atoms are read by clingo's term parser (clasp prints them from the symbols)."""
    text, marked, comment = line.rpartition("%lbd")
    text = text.strip() if marked else line.strip()
    if not text.startswith(":-") or not text.endswith("."):
        return None
    lbd = comment.replace("=", "").strip() if marked else ""
    literals = []
    for piece in split_top_level(text[2:-1], ","):
        piece = piece.strip()
        positive = not piece.startswith("not ")
        try:
            symbol = clingo.parse_term(piece if positive else piece[4:].strip())
        except RuntimeError:
            return None
        literals.append((positive, symbol))
    if not literals:
        return None
    return tuple(sorted(literals)), int(lbd) if lbd.isdigit() else 1
