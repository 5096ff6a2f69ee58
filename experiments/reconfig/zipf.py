"""Zipf-distributed choice of a component, as the paper's generators make it: a random ranking of the
components is drawn once (seeded), and the component of rank i is picked with probability proportional to
1 / i**alpha (alpha 2.2: about 20% of the components are picked 80% of the time; 0.7: 40% / 60%)."""
from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Sequence


class Zipf:
    """Picks from ``items`` by rank ``1 / i**alpha`` under a ranking drawn from ``rng``."""

    def __init__(self, items: Sequence, alpha: float, rng: random.Random):
        if not items:
            raise ValueError("Zipf over no items")
        self.ranked = list(items)
        rng.shuffle(self.ranked)
        self.alpha = alpha
        self.cumulative = list(itertools.accumulate(1.0 / (i ** alpha) for i in range(1, len(self.ranked) + 1)))

    def pick(self, rng: random.Random, allowed=None):
        """One item; ``allowed`` (a predicate) restricts the choice to the items it accepts (None when none is)."""
        if allowed is None:
            x = rng.random() * self.cumulative[-1]
            return self.ranked[min(bisect.bisect_left(self.cumulative, x), len(self.ranked) - 1)]
        candidates = [(i, item) for i, item in enumerate(self.ranked, start=1) if allowed(item)]
        if not candidates:
            return None
        weights = [1.0 / (i ** self.alpha) for i, _item in candidates]
        return rng.choices([item for _i, item in candidates], weights=weights)[0]

    def share_of_picks(self, top_fraction: float) -> float:
        """The probability that a pick falls in the top ``top_fraction`` of the ranking (the skew's meaning)."""
        k = max(1, round(top_fraction * len(self.ranked)))
        return self.cumulative[k - 1] / self.cumulative[-1]
