"""``restart``: a new Control per call, the inputs ground as facts. ``RestartSolver`` for a stratified part,
``ChoiceSolver`` for a choice part (the paper's RESTART)."""
from __future__ import annotations

import time

from srtopo.solving.control import ARGS, chosen_answer, new_control, read_answer
from srtopo.solving.spec import EMPTY, Inputs, SubprogramSpec, atom_pattern, show_statements


class RestartSolver:
    kind = "restart"

    def __init__(self, spec: SubprogramSpec, externals=None):
        self.spec = spec
        self.externals = externals
        bridges = "".join(f"{atom_pattern(name, n)} :- {atom_pattern(spec.match(k), n)} = @sr_in({k}).\n"
                          for k, (name, n) in enumerate(spec.input_sigs))
        self.text = spec.rules_text + "\n" + bridges + show_statements(spec)
        self.stats = {"solves": 0, "groundings": 0}

    #: the Control's arguments
    args = ARGS

    def solve(self, inputs) -> list:
        started = time.perf_counter()
        ctl = new_control(self.args)
        ctl.add("base", [], self.text)
        lists = [list(inputs.get(sig, EMPTY)) for sig in self.spec.input_sigs]
        ctl.ground([("base", [])], context=Inputs(lists, self.externals))
        grounded = time.perf_counter()
        self.stats["solves"] += 1
        self.stats["groundings"] += 1
        answer = self._answer(ctl)
        self.stats["ground_s"] = self.stats.get("ground_s", 0.0) + grounded - started
        self.stats["search_s"] = self.stats.get("search_s", 0.0) + time.perf_counter() - grounded
        return answer

    @staticmethod
    def _answer(ctl):
        return read_answer(ctl)


class ChoiceSolver(RestartSolver):
    """The choice part of a program (choices, disjunctions, constraints, weak constraints, unstratified
    negation): a new Control per time point, as the paper's RESTART; the answer is one answer set, the first
    clingo finds, or under weak constraints the optimal one clingo proves (its last model), None when there is
    none. clingo's search is deterministic for a given program and input, so a replay chooses the same model."""
    kind = "choice"
    args = ARGS + ["--opt-mode=opt"]
    _answer = staticmethod(chosen_answer)
