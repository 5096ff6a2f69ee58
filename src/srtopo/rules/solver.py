"""The only module that touches ``clingo.Control``: one subprogram, inputs in, shown atoms out.

Inputs never become program text: rules receive them through ``@sr_in(k)`` / ``@sr_dom(k)`` context
functions that return the parsed clingo Symbols, matched by ``p(X1,..,Xn) = @sr_in(k)``.

* ``RestartSolver``: a new Control per call; inputs are facts.
* ``IncrementalSolver``: one Control kept; every input atom ever seen is an ``#external`` (grounded once,
  over-grounding in the spirit of I2-DLV); a call only flips the externals whose truth changed. clingo cannot
  re-ground rules for atoms it has not seen ("redefinition of atom"), so a call that brings an unseen input
  atom rebuilds the Control with the enlarged domain.
* ``AdaptiveSolver``: incremental while the input domain settles; falls back to restart for a subprogram whose
  domain keeps growing (rebuilding then costs as much as restarting, plus the externals).
"""
from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass

import clingo
from clingo import Function, Number, ast
from clingo.application import Application, clingo_main

from srtopo.errors import ProgramError, SrtopoError
from srtopo.solving.externals import EXTERNAL_PREFIX

_EMPTY: frozenset = frozenset()
_ARGS = ["--warn=none"]


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


def _atom(name: str, n: int) -> str:
    return f"{name}({_vars(n)})" if n else name


def _shows(spec: SubprogramSpec) -> str:
    """The subprogram's #show statements (``#show.`` when it shows nothing: clingo would show every atom)."""
    return "".join(f"#show {name}/{n}.\n" for name, n in spec.shown_sigs) or "#show.\n"


def _read(ctl) -> list:
    with ctl.solve(yield_=True) as handle:
        for model in handle:
            return model.symbols(shown=True)
    raise SrtopoError("a subprogram has no answer set (the program is not stratified as analysed)")


class _Inputs:
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


class RestartSolver:
    kind = "restart"

    def __init__(self, spec: SubprogramSpec, externals=None):
        self.spec = spec
        self.externals = externals
        bridges = "".join(f"{_atom(name, n)} :- {_atom(spec.match(k), n)} = @sr_in({k}).\n"
                          for k, (name, n) in enumerate(spec.input_sigs))
        self.text = spec.rules_text + "\n" + bridges + _shows(spec)
        self.stats = {"solves": 0, "groundings": 0}

    #: the Control's arguments
    args = _ARGS

    def solve(self, inputs) -> list:
        started = time.perf_counter()
        ctl = clingo.Control(self.args)
        ctl.add("base", [], self.text)
        lists = [list(inputs.get(sig, _EMPTY)) for sig in self.spec.input_sigs]
        ctl.ground([("base", [])], context=_Inputs(lists, self.externals))
        grounded = time.perf_counter()
        self.stats["solves"] += 1
        self.stats["groundings"] += 1
        answer = self._answer(ctl)
        self.stats["ground_s"] = self.stats.get("ground_s", 0.0) + grounded - started
        self.stats["search_s"] = self.stats.get("search_s", 0.0) + time.perf_counter() - grounded
        return answer

    @staticmethod
    def _answer(ctl):
        return _read(ctl)


def _chosen(ctl) -> list | None:
    """One answer set's shown atoms (the optimal one under optimisation: clingo's last model), None if none."""
    found = None
    with ctl.solve(yield_=True) as handle:
        for model in handle:
            found = model.symbols(shown=True)
        result = handle.get()
    return found if result.satisfiable else None


class ChoiceSolver(RestartSolver):
    """The choice part of a program (choices, disjunctions, constraints, weak constraints, unstratified
    negation): a new Control per time point, as the paper's RESTART; the answer is one answer set, the first
    clingo finds, or under weak constraints the optimal one clingo proves (its last model), None when there is
    none. clingo's search is deterministic for a given program and input, so a replay chooses the same model."""
    kind = "choice"
    args = _ARGS + ["--opt-mode=opt"]
    _answer = staticmethod(_chosen)


class IncrementalSolver:
    kind = "incremental"

    def __init__(self, spec: SubprogramSpec, static: dict | None = None, externals=None, args=None):
        self.spec = spec
        self.externals = externals
        self.args = list(_ARGS if args is None else args)
        # background facts are ground as facts, not externals: 60k true externals would be 60k assumptions
        # in every solve call; only atoms beyond them (from the stream or earlier subprograms) are externals
        self.static = [frozenset((static or {}).get(sig, _EMPTY)) for sig in spec.input_sigs]
        parts = []
        for k, (name, n) in enumerate(spec.input_sigs):
            ext = _atom(f"__sr_x{k}", n)
            given = _atom(spec.match(k), n)
            parts.append(f"#external {ext} : {given} = @sr_dom_true({k}). [true]\n"
                         f"#external {ext} : {given} = @sr_dom_false({k}). [false]\n"
                         f"{_atom(name, n)} :- {ext}.\n")
            if self.static[k]:
                parts.append(f"{_atom(name, n)} :- {_atom(name, n)} = @sr_static({k}).\n")
        self.text = spec.rules_text + "\n" + "".join(parts) + _shows(spec)
        self.ctl = None
        self.domain = [set() for _ in spec.input_sigs]
        self.true: list = [_EMPTY for _ in spec.input_sigs]
        self.stats = {"solves": 0, "groundings": 0}
        self.last_rebuilt = False
        self.last = None

    def solve(self, inputs) -> list:
        current = [inputs.get(sig, _EMPTY) for sig in self.spec.input_sigs]
        current = [c if isinstance(c, (set, frozenset)) else frozenset(c) for c in current]
        current = [c if not s or c is s else (c - s) for c, s in zip(current, self.static)]
        current = [_EMPTY if c is s and s else c for c, s in zip(current, self.static)]
        grows = self.ctl is None or any(len(c) > len(d) or not d.issuperset(c)
                                        for c, d in zip(current, self.domain))
        self.last_rebuilt = grows
        changed = grows
        if grows:
            for d, c in zip(self.domain, current):
                d.update(c)
            self._rebuild(current)
        else:
            assign = self.ctl.assign_external
            for k, (c, old) in enumerate(zip(current, self.true)):
                if c is old:
                    continue
                name = f"__sr_x{k}"
                for atom in c - old if len(c) else ():
                    assign(Function(name, atom.arguments), True)
                    changed = True
                for atom in old - c if len(old) else ():
                    assign(Function(name, atom.arguments), False)
                    changed = True
                self.true[k] = c if isinstance(c, frozenset) else frozenset(c)
        if changed or self.stats["solves"] == 0:
            # same externals as last call: the answer set is reused (the unique one of a stratified program,
            # the chosen one of a choice part)
            self.stats["solves"] += 1
            self.last = self._answer()
        return self.last

    def _answer(self):
        return _read(self.ctl)

    def _new_control(self):
        return clingo.Control(self.args)

    def _rebuild(self, current) -> None:
        ctl = self._new_control()
        ctl.add("base", [], self.text)
        lists = [(list(c), [a for a in d if a not in c]) for c, d in zip(current, self.domain)]
        ctx = _Inputs(lists, self.externals)
        ctx.static = [list(s) for s in self.static]
        ctl.ground([("base", [])], context=ctx)
        self.ctl = ctl
        self.true = [c if isinstance(c, frozenset) else frozenset(c) for c in current]
        self.stats["groundings"] += 1


class AdaptiveSolver:
    """Incremental first; restart once rebuilds happen in at least half of the last ``window`` calls."""

    def __init__(self, spec: SubprogramSpec, window: int = 6, static: dict | None = None, externals=None,
                 inner=None, fallback=RestartSolver):
        self.inner = inner if inner is not None else IncrementalSolver(spec, static, externals)
        self.fallback = fallback
        self.window = window
        self.recent: deque = deque(maxlen=window)
        self.calls = 0

    @property
    def kind(self) -> str:
        return "adaptive:" + self.inner.kind

    @property
    def stats(self) -> dict:
        return dict(self.inner.stats, mode=self.inner.kind)

    def solve(self, inputs) -> list:
        out = self.inner.solve(inputs)
        if isinstance(self.inner, IncrementalSolver):
            self.calls += 1
            if self.calls > 1:
                self.recent.append(self.inner.last_rebuilt)
            if len(self.recent) == self.window and sum(self.recent) * 2 >= self.window:
                stats = self.inner.stats
                self.inner = self.fallback(self.inner.spec, self.inner.externals)
                self.inner.stats.update({k: v for k, v in stats.items() if k != "mode"})
        return out


class KeptChoiceSolver(IncrementalSolver):
    """The choice part on one Control kept across time points ("Managing caching strategies for stream reasoning
    with reinforcement learning", section 3): every input atom seen so far is an ``#external`` (the program is
    over-grounded once per input domain and rebuilt when an unseen input atom arrives), a time point assigns
    the externals and solves again, and what clasp keeps from the previous solve call is what the strategy
    says (clasp's ``--forget-on-step``: variable scores, saved signs, lemma scores, learned lemmas)."""

    def __init__(self, spec: SubprogramSpec, static: dict | None = None, externals=None, forget: str = "",
                 extra: tuple = ()):
        args = _ARGS + ["--opt-mode=opt"] + ([f"--forget-on-step={forget}"] if forget else []) + list(extra)
        super().__init__(spec, static, externals, args)
        self.kind = "kept" + (f" (forgets {forget})" if forget else "")
        self.text += "".join(self._declared(statement) for statement in spec.domains)

    def _declared(self, statement: str) -> str:
        """A declared input domain ``#external p(t) : body.`` as the externals of input p (text generated from
        the program's own AST)."""
        found: list = []
        ast.parse_string(statement, found.append)
        external = next(s for s in found if s.ast_type == ast.ASTType.External)
        term = external.atom.symbol
        sig = (term.name, len(term.arguments)) if term.ast_type == ast.ASTType.Function else (str(term), 0)
        ks = [k for k, input_sig in enumerate(self.spec.input_sigs)
              if input_sig == sig and self.spec.match(k) == sig[0]]
        if not ks:
            return ""
        args = "(" + ",".join(str(a) for a in term.arguments) + ")" if sig[1] else ""
        body = "; ".join(str(b) for b in external.body)
        return f"#external __sr_x{ks[0]}{args}" + (f" : {body}" if body else "") + ". [false]\n"

    def _rebuild(self, current) -> None:
        started = time.perf_counter()
        super()._rebuild(current)
        self.stats["ground_s"] = self.stats.get("ground_s", 0.0) + time.perf_counter() - started
        if not self.spec.domains:
            return
        atoms = self.ctl.symbolic_atoms
        for k, (_name, n) in enumerate(self.spec.input_sigs):       # the declared atoms widen the domain
            match = self.spec.match(k)
            self.domain[k].update(Function(match, a.symbol.arguments) for a in atoms.by_signature(f"__sr_x{k}", n))
            for atom in current[k]:
                self.ctl.assign_external(Function(f"__sr_x{k}", atom.arguments), True)

    def _answer(self):
        started = time.perf_counter()
        answer = _chosen(self.ctl)
        self.stats["search_s"] = self.stats.get("search_s", 0.0) + time.perf_counter() - started
        return answer


class _HostedControl:
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
        self._host = _HostedControl(self.args + ["--outf=3", "-V0", f"--lemma-out={self._pipe.path}",
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
        answer = _chosen(self.ctl)
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
    from srtopo.rules.stream import split_top_level
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


#: "incremental" keeps Controls and falls back to restarting a subprogram whose input domain keeps growing;
#: "incremental-strict" never falls back (tests use it to exercise the external-flipping path everywhere)
STRATEGIES = ("auto", "incremental", "restart", "incremental-strict")

#: what the choice part keeps between time points, per strategy: a new Control per time point (``restart``)
#: or one kept Control (``KeptChoiceSolver``) that forgets, at each time point, the parts of clasp's state
#: named (``--forget-on-step``; extra clasp options after them). ``incremental`` keeps everything;
#: ``progress`` keeps the saved phases (with progress saving on every backjump) and forgets the lemmas.
CHOICE_STRATEGIES = {
    "restart": None,
    "incremental": ("", ()),
    "forget": ("varScores,signs,lemmaScores,lemmas", ()),
    "forget-lemmas": ("lemmaScores,lemmas", ()),
    "forget-signs": ("signs", ()),
    "forget-scores": ("varScores,lemmaScores", ()),
    "progress": ("lemmaScores,lemmas", ("--save-progress=0",)),
}
#: the choice part's strategy under the stratified part's own strategy names (incremental-strict)
DEFAULT_CHOICE_STRATEGY = "incremental"
#: the strategies ``auto`` chooses among, the one most often best first (experiments/README.md, "Choice part")
AUTO_ARMS = ("forget-lemmas", "rl", "incremental", "restart")
#: the choice part's learned-constraint cache (``RlChoiceSolver``); ``rl:lambda=..,store=..,active=..,lbd=..``
#: sets its parameters (``RlParams.parse``)
RL = "rl"
ALL_STRATEGIES = STRATEGIES + tuple(s for s in CHOICE_STRATEGIES if s not in STRATEGIES) + (RL,)


def check_strategy(strategy: str) -> str:
    """``strategy`` if it names one (an ``rl`` one with valid parameters), else a ProgramError."""
    if strategy.partition(":")[0] == RL:
        RlParams.parse(strategy)
        return strategy
    if strategy not in ALL_STRATEGIES:
        raise ProgramError(f"unknown strategy {strategy!r}", hint="use one of " + ", ".join(ALL_STRATEGIES))
    return strategy


class _ProbeProcess:
    """The process where ``auto``'s challengers solve (``python -m srtopo.rules.probes``): requests go as JSON
    lines on its stdin, each time point's input atoms as the text clingo prints for their Symbols; its replies
    are read by a thread into a queue, so that the stream never waits for a probe."""

    def __init__(self, spec: SubprogramSpec, static: dict | None, externals):
        self.process = subprocess.Popen([sys.executable, "-m", "srtopo.rules.probes"], stdin=subprocess.PIPE,
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
        from srtopo.solving.bandit import ProbingBandit
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
            solver = self.solvers[arm] = make_choice_solver(arm, self.spec, self.static, self.externals,
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


def make_choice_solver(strategy: str, spec: SubprogramSpec, static: dict | None = None, externals=None,
                       adaptive: bool = True):
    """The choice part's solver for ``strategy`` (``CHOICE_STRATEGIES``, or ``auto``: a bandit among
    ``AUTO_ARMS``; the stratified part's other strategy names give ``DEFAULT_CHOICE_STRATEGY``)."""
    if strategy == "auto":
        return AutoChoiceSolver(spec, static, externals)
    if strategy.partition(":")[0] == RL:
        kept = RlChoiceSolver(spec, static, externals, RlParams.parse(strategy))
        return AdaptiveSolver(spec, inner=kept, fallback=ChoiceSolver) if adaptive else kept
    if strategy not in CHOICE_STRATEGIES:
        check_strategy(strategy)
        strategy = DEFAULT_CHOICE_STRATEGY
    kept = CHOICE_STRATEGIES[strategy]
    if kept is None:
        return ChoiceSolver(spec, externals)
    forget, extra = kept
    solver = KeptChoiceSolver(spec, static, externals, forget, extra)
    # a kept Control rebuilt at half of the recent time points (an input domain that keeps growing, e.g. @now)
    # restarts instead, as the stratified part's kept solvers do
    return AdaptiveSolver(spec, inner=solver, fallback=ChoiceSolver) if adaptive else solver


def make_solver(strategy: str, spec: SubprogramSpec, static: dict | None = None, externals=None):
    """``static``: sig -> frozenset of background facts that are inputs at every call; ``externals``: the
    functions of external atoms (``solving.externals.ExternalFunctions``), called while clingo grounds (so they
    must be pure functions of their inputs: a kept Control calls them once per input instance)."""
    if strategy == "restart":
        return RestartSolver(spec, externals)
    if strategy == "incremental-strict":
        return IncrementalSolver(spec, static, externals)
    if strategy == "incremental":
        return AdaptiveSolver(spec, static=static, externals=externals)
    raise ProgramError(f"unknown strategy {strategy!r}", hint="use one of " + ", ".join(STRATEGIES))


class _Shown:
    """Observer of a grounding: the shown atoms it passes to the solver, facts apart (clingo reports a fact with
    aspif atom 0; for a stratified program every derived atom is one)."""

    def __init__(self):
        self.facts: list = []
        self.open: list = []
        self.listening = False

    def output_atom(self, symbol, atom):
        if self.listening:
            (self.open.append((symbol, atom)) if atom else self.facts.append(symbol))


class StepSolver:
    """One Control kept across the timestamps of a stream (multi-shot grounding), for programs whose rules derive
    facts at the current timestamp only (Streamlog): the ``step(now)`` part is grounded once per timestamp over
    every atom of earlier steps, which stay in the Control as facts, so no earlier fact is ever derived again.

    A stratified program is solved by grounding alone: the step's shown facts are read from a grounding observer,
    so a timestamp costs what is new at it (solving a growing multi-shot program would cost the whole history
    per call). Shown atoms that grounding leaves open are decided by one solve call.
    ``base`` is ground once (background facts and rules, and the history bridges of a rebuilt Control).
    """

    def __init__(self, base: str, step: str, parameter: str = "now"):
        self.base = base
        self.parameter = parameter
        self.step_text = step
        self.ctl = None
        self.shown = _Shown()
        self.stats = {"solves": 0, "groundings": 0, "rebuilds": 0}

    def reset(self, context=None) -> None:
        """A new Control: the base part grounded (its bridges read ``context``), nothing stepped yet."""
        ctl = clingo.Control(_ARGS)
        self.shown = _Shown()
        ctl.register_observer(self.shown)
        ctl.add("base", [], self.base)
        ctl.add("step", [self.parameter], self.step_text)
        ctl.ground([("base", [])], context=context)
        self.ctl = ctl
        self.stats["rebuilds"] += 1

    def atoms(self) -> int:
        """How many atoms the Control holds (what a compaction would drop)."""
        return len(self.ctl.symbolic_atoms) if self.ctl is not None else 0

    def step(self, now: int, context) -> list:
        """Ground ``step(now)`` (its bridges read ``context``) and return the shown atoms it derived."""
        if self.ctl is None:
            self.reset()
        shown = self.shown
        shown.facts, shown.open, shown.listening = [], [], True
        try:
            self.ctl.ground([("step", [Number(now)])], context=context)
        finally:
            shown.listening = False
        self.stats["groundings"] += 1
        found = shown.facts
        if shown.open:
            self.stats["solves"] += 1
            with self.ctl.solve(yield_=True) as handle:
                model = next(iter(handle), None)
                if model is None:
                    raise SrtopoError("a Streamlog step has no answer set (the program is not stratified as "
                                      "analysed)")
                found = found + [symbol for symbol, atom in shown.open if model.is_true(atom)]
        return found


def grounding_errors(text: str) -> list[str]:
    """clingo's error messages for a program that cannot be ground (unsafe variables, ...), or []."""
    messages: list[str] = []
    ctl = clingo.Control(_ARGS, logger=lambda code, msg: messages.append(msg), message_limit=20)
    try:
        ctl.add("base", [], text)
        ctl.ground([("base", [])])
    except RuntimeError:
        return messages or ["the program cannot be ground"]
    return []
