"""The strategy names, what each keeps between time points, and the solver each one makes (``auto``, which
chooses among the others, is made in ``srtopo.solving``)."""
from __future__ import annotations

from srtopo.errors import ProgramError
from srtopo.solving.adaptive import AdaptiveSolver
from srtopo.solving.incremental import IncrementalSolver
from srtopo.solving.kept import KeptChoiceSolver
from srtopo.solving.restart import ChoiceSolver, RestartSolver
from srtopo.solving.rl import RlChoiceSolver, RlParams
from srtopo.solving.spec import SubprogramSpec

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


def make_fixed_choice_solver(strategy: str, spec: SubprogramSpec, static: dict | None = None, externals=None,
                             adaptive: bool = True):
    """The choice part's solver for one strategy of ``CHOICE_STRATEGIES`` or ``rl`` (the stratified part's other
    strategy names give ``DEFAULT_CHOICE_STRATEGY``); ``auto`` chooses among these (``solving.auto``)."""
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
