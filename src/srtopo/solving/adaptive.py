"""``incremental``: a kept Control while the input domain settles, restarting for a subprogram whose domain keeps
growing (rebuilding then costs as much as restarting, plus the externals)."""
from __future__ import annotations

from collections import deque

from srtopo.solving.incremental import IncrementalSolver
from srtopo.solving.restart import RestartSolver
from srtopo.solving.spec import SubprogramSpec


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
