"""Timestamps and time points: a record's timestamp (a number, or an ISO date-time with or without a time zone)
and the time point it falls in, counted in the program's unit from the source's first record."""
from __future__ import annotations

import math
from datetime import datetime, timezone
from fractions import Fraction

from srtopo.errors import StreamInputError
from srtopo.logic.atoms import RecordError, short
from srtopo.rules.ir import UNIT_SECONDS


def parse_timestamp(text: str):
    """ISO date-time (``2021-05-17T13:38:27``, seconds optional) or a plain number of time units (below 2^62
    in magnitude, as a JSON record's time: a mistyped number must not become a time point no runner can hold)."""
    try:
        number = int(text)
    except ValueError:
        pass
    else:
        if abs(number) >= 2 ** 62:
            raise RecordError(f"timestamp {short(text)} is beyond 2^62")
        return number
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise RecordError(f"bad timestamp '{short(text)}'") from None


class TimeBase:
    """The time base of one source: turns timestamps into time points, the units elapsed since its first record's
    timestamp. A numeric timestamp
    counts time points, or ``number_unit``s when given (I-DLV-sr's ``--t-format``)."""

    def __init__(self, unit: str = "sec", number_unit: str | None = None):
        for name in (unit, number_unit):
            if name is not None and name not in UNIT_SECONDS:
                raise StreamInputError(f"unknown time unit '{name}'", hint="use " + ", ".join(sorted(UNIT_SECONDS)))
        self.unit = Fraction(UNIT_SECONDS[unit])
        self.number_scale = None if number_unit is None else Fraction(UNIT_SECONDS[number_unit]) / self.unit
        self.first = None

    def time_point(self, stamp) -> int:
        if self.first is None:
            self.first = (stamp_kind(stamp), stamp_value(stamp))
        return time_point_of(self.first, stamp_kind(stamp), stamp_value(stamp), unit_micros(self.unit),
                             self.number_scale)


def time_point_of(first: tuple, kind: str, value: int, unit_us: int, number_scale: Fraction | None) -> int:
    """The time point of a timestamp (kind, value as ``stamp_value`` gives it) given the first record's: numbers
    count time points (or ``number_scale`` of them per number), date-times fall in units of ``unit_us``
    microseconds of the clock (a minute is 00:01:00 to 00:01:59), time point 0 being the first record's unit.
    Raises RecordError when the two cannot be compared."""
    problem = stamp_mismatch(first[0], kind)
    if problem:
        raise RecordError(problem)
    if kind == NUMBER:
        if number_scale is None:
            return value - first[1]
        return math.floor(value * number_scale) - math.floor(first[1] * number_scale)
    return value // unit_us - first[1] // unit_us       # whole units of the clock: 00:00:59, 00:01:01 are 2 minutes


#: kinds of record times: a number of time units, a date-time without / with a time zone, a JSON record's time
NUMBER, LOCAL_TIME, ZONED_TIME, GIVEN = "n", "d", "z", "j"
_EPOCH = datetime(1970, 1, 1)


def stamp_kind(stamp) -> str:
    if isinstance(stamp, int):
        return NUMBER
    return LOCAL_TIME if stamp.tzinfo is None else ZONED_TIME


def stamp_value(stamp) -> int:
    """A timestamp as an integer: the number itself, or microseconds since 1970-01-01 (UTC for zoned ones)."""
    if isinstance(stamp, int):
        return stamp
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(timezone.utc).replace(tzinfo=None)
    delta = stamp - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 10 ** 6 + delta.microseconds


def unit_micros(unit: Fraction) -> int:
    micros = Fraction(unit) * 10 ** 6
    if micros.denominator != 1:
        raise StreamInputError(f"a time unit of {unit} s is not a whole number of microseconds")
    return int(micros)


def stamp_mismatch(first: str, kind: str) -> str | None:
    """Why a record's timestamp cannot be compared with the first record's, or None."""
    if first == kind:
        return None
    if NUMBER in (first, kind):
        return "timestamp kind differs from the first record's (date-time vs number)"
    return "timestamp kind differs from the first record's (date-time with vs without a time zone)"
