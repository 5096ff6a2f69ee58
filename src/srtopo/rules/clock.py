"""What the evaluator provides at every time point: the value of ``@now`` and the ``#trigger_frequency`` ticks.

Time point t starts ``t`` time units after time point 0, whose instant is the first record's timestamp (a
date-time, read as UTC when it has no time zone; a number of ``--t-format`` units, or of time points without
it); a stream whose records carry no timestamp (JSON lines, RDF) starts at 1970-01-01T00:00:00. ``@now`` at t
is that instant as a number of seconds, minutes or hours since 1970-01-01T00:00:00 (rounded down), or as the
date-time string ``yyyy-MM-ddTHH:mm:ss`` (``.SSS`` added when a time point is shorter than a second). The K-th
``#trigger_frequency`` of period p time points fires at the stream's first time point (0 for a log; the earliest
record's for records whose time points are given) and every p time points after it.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from fractions import Fraction

from clingo import Function, Number, String

from srtopo.errors import ProgramError
from srtopo.rules.ir import NOW_PREDICATE, TICK_PREDICATE, UNIT_SECONDS
from srtopo.terms import CLINGO_INT_MAX

_EPOCH = datetime(1970, 1, 1)
_PER_UNIT = {"sec": 10 ** 6, "min": 60 * 10 ** 6, "hrs": 3600 * 10 ** 6}
NOW_SIG = (NOW_PREDICATE, 1)
TICK_SIG = (TICK_PREDICATE, 1)


def micros(unit: str) -> int:
    return int(Fraction(UNIT_SECONDS[unit]) * 10 ** 6)


def now_symbol(instant: int, now_format: str, unit_micros: int):
    """``@now`` for the instant ``instant`` (microseconds since 1970-01-01T00:00:00)."""
    if now_format in _PER_UNIT:
        value = instant // _PER_UNIT[now_format]
        if not -CLINGO_INT_MAX - 1 <= value <= CLINGO_INT_MAX:
            raise ProgramError(f"@now = {value} {now_format} is beyond clingo's 32-bit integers",
                               hint="use --now-format min, hrs or datetime")
        return Number(value)
    stamp = _EPOCH + timedelta(microseconds=instant)
    text = stamp.strftime("%Y-%m-%dT%H:%M:%S")
    if unit_micros < 10 ** 6:
        text += f".{stamp.microsecond // 1000:03d}"
    return String(text)


class Clock:
    """The clock atoms of a rules topology's source (``AtomSource``) at each time point."""

    def __init__(self, source, uses_now: bool):
        self.unit_micros = micros(source.unit)
        self.number_micros = micros(source.number_unit) if source.number_unit else self.unit_micros
        self.now_format = source.now_format
        self.periods = tuple(source.triggers)
        self.uses_now = uses_now
        self.origin = 0            # the instant of time point 0, in microseconds since 1970-01-01
        self.first = 0             # the stream's first time point, where the triggers' periods start

    def set_origin(self, kind: str, value: int) -> None:
        """Time point 0's timestamp as the stream reader keeps it (``rules.timestamps.stamp_kind`` and
        ``stamp_value``: microseconds for a date-time, the number itself for a number)."""
        from srtopo.rules.timestamps import NUMBER
        instant = value * self.number_micros if kind == NUMBER else value
        self.origin = instant // self.unit_micros * self.unit_micros     # the start of time point 0's unit

    def set_origin_text(self, stamp: str | None) -> None:
        from srtopo.logic.atoms import RecordError
        from srtopo.rules.timestamps import parse_timestamp, stamp_kind, stamp_value
        if stamp is None:
            return
        try:
            parsed = parse_timestamp(stamp)
        except RecordError:
            return
        self.set_origin(stamp_kind(parsed), stamp_value(parsed))

    def atoms(self, t: int) -> dict:
        out = {}
        if self.uses_now:
            out[NOW_SIG] = {Function(NOW_PREDICATE, [now_symbol(self.origin + t * self.unit_micros, self.now_format,
                                                                self.unit_micros)])}
        if self.periods:
            out[TICK_SIG] = {Function(TICK_PREDICATE, [Number(k)]) for k, p in enumerate(self.periods)
                             if (t - self.first) % p == 0}
        return out

    def phase(self, t: int) -> tuple:
        """Where each trigger's period stands at time point t."""
        return tuple((t - self.first) % p for p in self.periods)
