"""Time points of one or more record streams merged by event time: which records are late or too far ahead
(``ir.lateness``, record by record in each source's order), when a time point is complete, and the empty
stretches between the time points records reached."""
from __future__ import annotations

import heapq
import json
from dataclasses import dataclass
from typing import Iterable

from srtopo import interrupt
from srtopo.errors import StreamInputError
from srtopo.io.lines import open_lines
from srtopo.ir.lateness import SourceClock
from srtopo.ir.records import RejectedRecord
from srtopo.rules.log import Record, collector, read_records


def time_points(records: Iterable[Record], rejected=None, source: str = "<stream>", lateness: int | None = 0):
    """Group one source's records into consecutive time points 0, 1, 2, ... (see ``merged_time_points``)."""
    yield from merged_time_points([records], rejected, [source], lateness)


def merged_time_points(streams: list, rejected=None, names: list | None = None, lateness: int | None = 0):
    """(time point, timestamp, atoms) for time points 0, 1, 2, ... of several record streams merged by event time
    (``merged_points`` with its empty stretches spelled out)."""
    for point in merged_points(streams, rejected, names, lateness):
        if point.recorded:
            yield point.time, point.stamp, point.atoms
        else:
            for t in range(point.time, point.last + 1):
                yield t, None, []


@dataclass(frozen=True)
class Point:
    """A time point some record reached (``recorded``), or a stretch of empty time points ``time .. last``."""
    time: int
    stamp: str | None = None
    atoms: list = ()
    recorded: bool = True
    last: int | None = None


def merged_points(streams: list, rejected=None, names: list | None = None, lateness: int | None = 0,
                  max_gap: int | None = None):
    """The time points of several record streams merged by event time, in order: a ``Point`` per time point
    some record reached, one per stretch of empty time points between them (however long). The first is the
    stream's first time point, the earliest accepted record's (0 for a log, whose first line is time point 0;
    records whose time points are given may start anywhere): the time points before it are none of the stream's.

    Which records are late or too far ahead is decided record by record in each source's own order
    (``ir.lateness``: a record more than ``lateness`` behind the progress of its source, or more than
    ``max_gap`` ahead of its latest time point, is rejected). Time point t is evaluated once no unfinished source
    may still send a record for it: its latest time point less the lateness is above t, or with lateness 0 it
    has completed t by a record that is its time point whole (``Record.whole``: a log line, unless fragmented
    time points are allowed; ``SourceClock.bound``). A source that ended holds nothing back; ``lateness`` None
    waits for the end of input. Records of one time point are merged, gaps
    become empty time points. The timestamp of a time point is the one of its first record (by source, then
    line) that carries one. Sources are read in turn, one record at a time."""
    reject = collector(rejected)
    names = names or ["<stream>"] * len(streams)
    iterators = [iter(s) for s in streams]
    clocks = [SourceClock() for _ in iterators]
    done = [False] * len(iterators)
    pending: dict[int, list] = {}          # time -> [stamp key, stamp, atoms]
    times: list[int] = []                  # a heap of the pending times
    closed = None                          # the last time point given out (None: none yet)

    def close_upto(limit):
        nonlocal closed
        if closed is None:
            if not times or times[0] > limit:
                return
            closed = times[0] - 1           # the stream starts at its earliest record
        while closed < limit:
            upcoming = times[0] if times and times[0] <= limit else None
            if upcoming is None or upcoming > closed + 1:
                last = limit if upcoming is None else upcoming - 1
                yield Point(closed + 1, recorded=False, last=last)
                closed = last
                continue
            closed += 1
            heapq.heappop(times)
            entry = pending.pop(closed)
            yield Point(closed, entry[1], entry[2])

    while not all(done):
        for index, iterator in enumerate(iterators):
            if done[index]:
                continue
            rec = next(iterator, None)
            clock = clocks[index]
            if rec is None:
                done[index] = True
            elif (why := clock.late(rec.time, lateness) or clock.ahead(rec.time, max_gap)) is not None:
                reject(RejectedRecord(rec.source or names[index], rec.line, rec.text, why))
                continue
            else:
                clock.accept(rec.time, rec.whole)
                entry = pending.get(rec.time)
                if entry is None:
                    entry = pending[rec.time] = [None, None, []]
                    heapq.heappush(times, rec.time)
                entry[2].extend(rec.atoms)
                if rec.timestamp is not None and (entry[0] is None or (index, rec.line) < entry[0]):
                    entry[0], entry[1] = (index, rec.line), rec.timestamp
            if lateness is not None:
                open_sources = [clocks[i].bound(lateness) for i in range(len(iterators)) if not done[i]]
                if open_sources and all(t is not None for t in open_sources):
                    yield from close_upto(min(open_sources) - 1)
                elif not open_sources and pending:
                    yield from close_upto(max(pending))
    if pending:
        yield from close_upto(max(pending))


def timeline_json_lines(points) -> list[str]:
    """Time points held in memory as JSON lines ``{"time": t, "atoms": [...]}`` (what every runner reads)."""
    return [json.dumps({"time": t, "atoms": list(atoms)}, ensure_ascii=False) for t, atoms in enumerate(points)]


def timeline_points(sources, unit: str, sink, counters, lateness: int | None = 0, number_unit: str | None = None,
                    max_gap: int | None = None):
    """The ``Point``s of atom sources (``io.sources.AtomLog``, ``Timeline``, ``Lines``) merged by event
    time; rejected records go to ``sink.reject`` and are counted in ``counters.malformed`` or ``counters.late``."""
    from srtopo.io.sources import AtomLog, Lines, Timeline

    def reject(record: RejectedRecord) -> None:
        if record.reason.startswith("late: "):
            counters.late += 1
        else:
            counters.malformed += 1
        if record.source.startswith("tcp://"):     # a socket's lines are not numbered (as on Spark)
            record = RejectedRecord(record.source, None, record.text, record.reason)
        sink.reject(record)

    streams, names = [], []
    for source in sources:
        duplicates = False
        if isinstance(source, AtomLog):
            lines, fmt, name = open_lines(source.spec, interrupt.check), source.stream_format, source.spec
            duplicates = source.duplicates
        elif isinstance(source, Timeline):
            lines, fmt, name = timeline_json_lines(source.points), "jsonl", source.name
        elif isinstance(source, Lines):
            lines, fmt, name = source.lines, "detect", source.name
        else:
            raise StreamInputError(f"{type(source).__name__} is not a source of atoms")
        streams.append(read_records(lines, unit=unit, fmt=fmt, rejected=reject, source=name, duplicates=duplicates,
                                    number_unit=number_unit))
        names.append(name)
    yield from merged_points(streams, reject, names, lateness, max_gap)
