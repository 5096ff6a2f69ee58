"""Which strategy to run, learned from measured step times: the ``auto`` strategy of a program's choice part.

What a kept solver is worth depends on continuity: its saved phases and lemmas help the next time point only if
it solved the one before. Running strategies in turns (a classic bandit's exploration) takes that away from
every kept one and measures them on different time points, where one stretch of a stream can be ten times
harder than the next. So this bandit runs one strategy, the incumbent, at every time point, and measures the
others on the same time points: every ``period`` time points one challenger also solves the ``block`` time
points that follow, in turn (elsewhere: its answers are not used; the first of them, where a kept strategy
catches up on what changed since it last ran, is not measured), which gives paired ratios, challenger time over
incumbent time. A challenger whose median ratio over its last ``window`` probes (all of them measured since the
incumbent took over; by default one block's) is below ``1 / switch`` becomes the incumbent. A challenger much
slower than the incumbent (a ratio above ``give_up``: on a hard instance a strategy that forgets the saved
phases takes seconds where the best takes milliseconds) is probed again only after 2, 4, 8... periods, so that
it costs little. A new block waits while earlier probes are still being solved.
"""
from __future__ import annotations

from collections import deque
from statistics import median


class ProbingBandit:
    def __init__(self, arms: tuple, period: int = 16, window: int = 7, switch: float = 1.5, give_up: float = 8.0,
                 first: int = 4, block: int = 8):
        if not arms:
            raise ValueError("a bandit needs an arm")
        self.arms = tuple(arms)
        self.period, self.switch, self.give_up, self.first, self.block = period, switch, give_up, first, block
        self._current, self._left, self.warm = None, 0, False
        self.incumbent = self.arms[0]
        self.ratios = {arm: deque(maxlen=window) for arm in self.arms}
        self.backoff = {arm: 0 for arm in self.arms}    # times in a row the arm was found far slower
        self.next_probe = {arm: 0 for arm in self.arms}
        self.step = 0
        self._due = first                                # the step from which the next probe may start
        self.pulls = {arm: 0 for arm in self.arms}       # time points each arm solved (probes included)
        self.switches = 0
        self._turn = 0

    def challenger(self, busy: bool = False):
        """The arm to probe at this time point after the incumbent, or None; ``warm`` says whether it also
        solved the time point before (a probe's first time point is not measured: a kept strategy first catches
        up on what changed since it last ran). ``busy``: earlier probes are still running, so a new block
        waits (a block under way goes on: its time points queue up behind each other)."""
        if self._left > 0 and self._current != self.incumbent:
            self._left -= 1
            self.warm = True
            return self._current
        self._left = 0
        if busy or self.step < self._due:
            return None
        self._due = self.step + self.period
        others = [arm for arm in self.arms if arm != self.incumbent and self.next_probe[arm] <= self.step]
        if not others:
            return None
        self._turn += 1
        self._current = others[(self._turn - 1) % len(others)]
        self._left = self.block - 1
        self.warm = False
        return self._current

    def retire(self, arm) -> None:
        """``arm`` cannot run (its solver failed): never probed again."""
        self.next_probe[arm] = float("inf")
        if arm == self._current:
            self._left = 0

    def record(self, incumbent_seconds: float, challenger=None, challenger_seconds: float | None = None,
               warm: bool = True) -> None:
        """The time the incumbent took at this time point, and the probed challenger's if there was one."""
        self.pulls[self.incumbent] += 1
        if challenger is not None:
            self.probed(challenger, challenger_seconds, incumbent_seconds, warm)
        self.step += 1

    def probed(self, challenger, challenger_seconds: float, incumbent_seconds: float, warm: bool = True) -> None:
        """A probe's outcome: the challenger's and the incumbent's time on the same time point (a probe may end
        after later time points were solved); only a ``warm`` probe is measured."""
        if challenger == self.incumbent:
            return
        self.pulls[challenger] += 1
        if not warm:
            return
        ratio = challenger_seconds / max(incumbent_seconds, 1e-6)
        self.ratios[challenger].append(ratio)
        if ratio > self.give_up:
            if challenger == self._current:
                self._left = 0
            if self.next_probe[challenger] <= self.step:        # once per block, whose probes may all be queued
                self.backoff[challenger] += 1
                self.next_probe[challenger] = self.step + self.period * 2 ** self.backoff[challenger]
        else:
            self.backoff[challenger] = 0
        found = self.ratios[challenger]
        if len(found) == found.maxlen and median(found) < 1 / self.switch:
            self.incumbent = challenger
            self.switches += 1
            for arm in self.arms:       # every arm is now measured against the new incumbent
                self.ratios[arm].clear()
