"""clingo's side of the rule front ends: one subprogram, inputs in, shown atoms out. Both I-DLV-sr
(``rules.evaluate``) and Streamlog (``streamlog.evaluate``) solve through it, and it owns every clingo Control.

* ``control``: where Controls are made (the one module that calls ``clingo.Control``), and reading an answer;
* ``spec``: the subprogram a solver solves and the grounding context through which inputs reach it as Symbols;
* ``externals``: the Python functions of external atoms, which clingo calls while it grounds;
* ``restart``, ``incremental``, ``adaptive``: the stratified part's strategies (a new Control per call; one kept
  Control whose input atoms are externals; kept while the input domain settles, restarting once it keeps growing);
* ``kept``, ``rl``, ``auto``: the choice part's kept Control (forgetting what the strategy says), its
  learned-constraint cache, and the bandit (``bandit``) that picks a strategy by measuring the others in the probe
  process (``probes``);
* ``strategies``: the strategy names and the solver each one makes;
* ``step``: Streamlog's multi-shot Control, ground timestamp by timestamp.
"""
from __future__ import annotations

from srtopo.solving.auto import AutoChoiceSolver
from srtopo.solving.control import grounding_errors  # noqa: F401
from srtopo.solving.rl import RlParams  # noqa: F401
from srtopo.solving.spec import SubprogramSpec
from srtopo.solving.step import StepSolver  # noqa: F401
from srtopo.solving.strategies import (  # noqa: F401
    ALL_STRATEGIES,
    AUTO_ARMS,
    CHOICE_STRATEGIES,
    DEFAULT_CHOICE_STRATEGY,
    RL,
    STRATEGIES,
    check_strategy,
    make_fixed_choice_solver,
    make_solver,
)


def make_choice_solver(strategy: str, spec: SubprogramSpec, static: dict | None = None, externals=None,
                       adaptive: bool = True):
    """The choice part's solver for ``strategy`` (``CHOICE_STRATEGIES``, or ``auto``: a bandit among
    ``AUTO_ARMS``; the stratified part's other strategy names give ``DEFAULT_CHOICE_STRATEGY``)."""
    if strategy == "auto":
        return AutoChoiceSolver(spec, static, externals)
    return make_fixed_choice_solver(strategy, spec, static, externals, adaptive)
