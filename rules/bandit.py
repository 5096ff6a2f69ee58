"""Which strategy to run next, learned from measured step times: the ``auto`` strategy of a program's choice part.

A deterministic bandit over a few strategies (arms): it first tries every arm for ``explore`` steps, in blocks
of ``block`` consecutive steps (a kept solver needs a few steps to show what its kept state is worth), then
runs the arm whose recent steps took the least time (median of its last ``window`` steps), and every
``period`` steps gives one block to the arm measured longest ago, so that a change in the stream can change
the choice. Step times of different arms are measured on different steps of the stream; medians over blocks
keep one hard time point from deciding.
"""
from __future__ import annotations

from collections import deque
from statistics import median


class StepBandit:
    def __init__(self, arms: tuple, explore: int = 8, block: int = 4, window: int = 16, period: int = 64):
        if not arms:
            raise ValueError("a bandit needs an arm")
        self.arms = tuple(arms)
        self.explore, self.block, self.period = explore, block, period
        self.times = {arm: deque(maxlen=window) for arm in self.arms}
        self.tried = {arm: 0 for arm in self.arms}
        self.last_step = {arm: -1 for arm in self.arms}
        self.step = 0
        self.current = self.arms[0]
        self.left = block            # steps left in the current block
        self.pulls = {arm: 0 for arm in self.arms}

    def choose(self):
        """The arm for the next step."""
        if self.left <= 0:
            self.current = self._next()
            self.left = self.block
        return self.current

    def record(self, arm, seconds: float) -> None:
        """The measured time of the step ``arm`` just ran."""
        self.times[arm].append(seconds)
        self.tried[arm] += 1
        self.pulls[arm] += 1
        self.last_step[arm] = self.step
        self.step += 1
        self.left -= 1

    def best(self):
        """The arm with the least median step time among those measured."""
        measured = [arm for arm in self.arms if self.times[arm]]
        return min(measured, key=lambda arm: (median(self.times[arm]), self.arms.index(arm)))

    def _next(self):
        unexplored = [arm for arm in self.arms if self.tried[arm] < self.explore]
        if unexplored:
            return unexplored[0]
        if self.period and self.step % self.period < self.block:
            return min(self.arms, key=lambda arm: (self.last_step[arm], self.arms.index(arm)))
        return self.best()
