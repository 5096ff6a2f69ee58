"""Streamlog's solver: one Control kept across the timestamps of a stream, ground step by step (multi-shot)."""
from __future__ import annotations

from clingo import Number

from srtopo.errors import SrtopoError
from srtopo.solving.control import ARGS, new_control


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
        ctl = new_control(ARGS)
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
