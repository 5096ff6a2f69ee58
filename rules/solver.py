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

import time
from collections import deque
from dataclasses import dataclass

import clingo
from clingo import Function, Number, ast

from srtopo.errors import ProgramError, SrtopoError
from srtopo.rules.ir import EXTERNAL_PREFIX

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
    function (``rules.externals``) once per instance of its input terms."""

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

    def _rebuild(self, current) -> None:
        ctl = clingo.Control(self.args)
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
#: the strategies ``auto`` chooses among for the choice part (``rules.bandit``)
AUTO_ARMS = ("incremental", "progress", "forget", "restart")
ALL_STRATEGIES = STRATEGIES + tuple(s for s in CHOICE_STRATEGIES if s not in STRATEGIES)


class AutoChoiceSolver:
    """``auto`` for the choice part: a solver per strategy of ``AUTO_ARMS`` (built on first use, each keeping
    its own Control), and a bandit over their measured step times (``rules.bandit.StepBandit``) that picks the
    one to run at each time point. A kept solver that was not run for a while catches up on its next step: it
    is given the whole current input, as at every step."""
    kind = "auto"

    def __init__(self, spec: SubprogramSpec, static: dict | None = None, externals=None, arms=AUTO_ARMS):
        from srtopo.rules.bandit import StepBandit
        self.spec, self.static, self.externals = spec, static, externals
        self.bandit = StepBandit(tuple(arms))
        self.solvers: dict = {}

    @property
    def stats(self) -> dict:
        out: dict = {"solves": 0, "groundings": 0, "ground_s": 0.0, "search_s": 0.0}
        for solver in self.solvers.values():
            for key in out:
                out[key] += solver.stats.get(key, 0)
        out["pulls"] = dict(self.bandit.pulls)
        return out

    def solve(self, inputs) -> list | None:
        arm = self.bandit.choose()
        solver = self.solvers.get(arm)
        if solver is None:
            solver = self.solvers[arm] = make_choice_solver(arm, self.spec, self.static, self.externals)
        started = time.perf_counter()
        answer = solver.solve(inputs)
        self.bandit.record(arm, time.perf_counter() - started)
        return answer


def make_choice_solver(strategy: str, spec: SubprogramSpec, static: dict | None = None, externals=None):
    """The choice part's solver for ``strategy`` (``CHOICE_STRATEGIES``, or ``auto``: a bandit among
    ``AUTO_ARMS``; the stratified part's other strategy names give ``DEFAULT_CHOICE_STRATEGY``)."""
    if strategy == "auto":
        return AutoChoiceSolver(spec, static, externals)
    if strategy not in CHOICE_STRATEGIES:
        if strategy not in STRATEGIES:
            raise ProgramError(f"unknown strategy {strategy!r}", hint="use one of " + ", ".join(ALL_STRATEGIES))
        strategy = DEFAULT_CHOICE_STRATEGY
    kept = CHOICE_STRATEGIES[strategy]
    if kept is None:
        return ChoiceSolver(spec, externals)
    forget, extra = kept
    # a kept Control rebuilt at half of the recent time points (an input domain that keeps growing, e.g. @now)
    # restarts instead, as the stratified part's kept solvers do
    return AdaptiveSolver(spec, inner=KeptChoiceSolver(spec, static, externals, forget, extra), fallback=ChoiceSolver)


def make_solver(strategy: str, spec: SubprogramSpec, static: dict | None = None, externals=None):
    """``static``: sig -> frozenset of background facts that are inputs at every call; ``externals``: the
    functions of external atoms (``rules.externals.ExternalFunctions``), called while clingo grounds (so they
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
