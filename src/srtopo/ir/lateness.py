"""Lateness: which records of a source are late, decided record by record in the source's own input order.

One definition for every runner (docs/architecture.md, "Lateness"). Per source, with allowed lateness L (a whole
number, or None: nothing is late), a record at time t is

* **late** when t is below the source's *floor* (the largest punctuation ``# watermark T`` it sent before), or
  below its *progress* less L: the progress is the largest time of its earlier accepted records, plus one when
  L is 0 and one of those at that time was its time point whole (an I-DLV-sr log line completes its time
  point, which is then evaluated on arrival as in I-DLV-sr; a ``.tnt`` statement or a JSON record is one record
  of possibly several; with L >= 1 a record at that time point may still come, and wholeness changes nothing);
* **ahead** (rule streams, a largest gap G given) when t is more than G after the largest time of its earlier
  accepted records (a mistyped timestamp far in the future); the first record is never ahead;
* otherwise accepted: it raises the progress. Rejected records change nothing.

It depends only on the source's own earlier records, never on other sources nor on how the input is cut into
micro-batches, so every runner accepts and rejects the same records. The local runners keep a
:class:`SourceClock` per source; the Spark runner computes the same thing per micro-batch (in Spark SQL for
consistency checks, in the parse and first segment passes for rule topologies) from each source's clock as the
previous batch left it.
"""
from __future__ import annotations

from dataclasses import dataclass

#: event times are 64-bit integers on every runner; closing up to NEG (exclusive) closes nothing (no event time is
#: below it; a watermark never is), up to POS every event time
NEG = -(2 ** 63)
POS = 2 ** 63


class SourceClock:
    """One source's progress through its own records (see the module docstring).

    latest: the largest time of its accepted records (None before the first); whole: whether one of them at
    ``latest`` completed its time point; floor: the largest punctuation (None before any)."""
    __slots__ = ("latest", "whole", "floor")

    def __init__(self, latest: int | None = None, whole: bool = False, floor: int | None = None):
        self.latest = latest
        self.whole = whole
        self.floor = floor

    def bound(self, lateness: int) -> int | None:
        """The progress less the lateness: the smallest time a record of this source may still have, its floor
        aside (None before its first record). A rule topology evaluates time point t once every unfinished
        source's bound is above t."""
        if self.latest is None:
            return None
        return self.latest - lateness + (1 if self.whole and lateness == 0 else 0)

    def horizon(self, lateness: int | None) -> int | None:
        """The smallest time this source can still send an accepted record at (None: any)."""
        if lateness is None:
            return None
        bounds = [b for b in (self.floor, self.bound(lateness)) if b is not None]
        return max(bounds) if bounds else None

    def late(self, time: int, lateness: int | None, unit: str = "time point") -> str | None:
        """Why a record at ``time`` is late (``late_reason``, ``floor_reason``), or None."""
        if lateness is None:
            return None
        if self.floor is not None and time < self.floor:
            return floor_reason(time, self.floor, unit)
        if self.latest is not None and time < self.bound(lateness):
            return late_reason(time, self.latest, lateness, unit)
        return None

    def ahead(self, time: int, max_gap: int | None) -> str | None:
        """Why a record at ``time`` is too far ahead (``ahead_reason``), or None."""
        if max_gap is None or self.latest is None or time - self.latest <= max_gap:
            return None
        return ahead_reason(time, self.latest, max_gap)

    def accept(self, time: int, whole: bool = False) -> None:
        if self.latest is None or time > self.latest:
            self.latest, self.whole = time, whole
        elif time == self.latest:
            self.whole = self.whole or whole

    def punctuate(self, time: int) -> None:
        self.floor = time if self.floor is None else max(self.floor, time)

    def to_json(self) -> list:
        return [self.latest, self.whole, self.floor]

    @classmethod
    def from_json(cls, data) -> "SourceClock":
        latest, whole, floor = data
        return cls(latest, bool(whole), floor)


def late_reason(time: int, latest: int, lateness: int, unit: str = "time point") -> str:
    """Why a record is late (the same words on every runner: the Spark SQL of consistency checks builds them too).
    ``latest``: the largest time of the source's earlier accepted records."""
    if time < latest - lateness:
        return f"late: {unit} {time} is more than {lateness} behind {unit} {latest}, the latest of its source"
    # lateness 0, time == latest: a record of the source completed that time point
    hint = " (a log line is a whole time point: --t-duplicate lets consecutive lines make one)" \
        if unit == "time point" else ""
    return f"late: {unit} {time} arrives after its source completed it{hint}"


def floor_reason(time: int, floor: int, unit: str = "time point") -> str:
    return f"late: {unit} {time} is below {floor}, the punctuation of its source"


def ahead_reason(time: int, latest: int, max_gap: int) -> str:
    """Why a record is rejected as too far ahead: a mistyped timestamp (2031 for 2021) would otherwise raise its
    source's progress so far that every later good record of it would be late."""
    return (f"ahead: time point {time} is more than {max_gap} time points after time point {latest}, the latest of "
            f"its source (a mistyped timestamp? if the stream has gaps this long, raise --max-gap or give "
            f"--max-gap none)")


# --- the bounds of a micro-batch (the Spark runner's event-time protocol, ``runners.spark.sql``) -----------------

@dataclass(frozen=True)
class BatchBounds:
    """A batch's bounds as Python integers, in [NEG, POS] (``bounds_sql`` hands them to the SQL in 64 bits)."""
    accept: int        # no tuple below this can still be accepted (W_{b-1})
    lo: int            # close report times in [lo, hi)
    hi: int
    keep: int          # state rows with time >= keep survive
    reach: int = NEG   # the closing reads rows with time >= reach (lo - w; NEG for an unbounded window)


def watermark(clocks: dict, n_sources: int, lateness: int | None) -> int:
    """``min_s max(M_s - L, F_s)`` over the sources' clocks (src -> SourceClock); NEG while a source has sent
    nothing or when the lateness is unbounded."""
    if lateness is None:
        return NEG
    horizons = [clocks[s].horizon(lateness) if s in clocks else None for s in range(n_sources)]
    if any(h is None for h in horizons):
        return NEG
    return max(NEG, min(horizons))


def bounds_for(prev_clocks: dict, prev_closed: int, n_sources: int, lateness: int | None,
               window: int | None, final: bool = False, cur_clocks: dict | None = None) -> BatchBounds:
    """cur_clocks (the sources' clocks through this batch, from the batch's own input): close up to the batch's
    watermark W_b (reading prev state UNION the batch's accepted rows); without it, up to W_{b-1}."""
    w_prev = watermark(prev_clocks, n_sources, lateness)
    hi = POS if final else (w_prev if cur_clocks is None else max(w_prev, watermark(cur_clocks, n_sources, lateness)))
    hi = max(hi, prev_closed)       # what is closed stays closed (a run going on with a smaller watermark)
    keep = NEG if window is None else max(NEG, hi - window)
    reach = NEG if window is None else max(NEG, prev_closed - window)
    return BatchBounds(accept=w_prev, lo=prev_closed, hi=hi, keep=keep, reach=reach)
