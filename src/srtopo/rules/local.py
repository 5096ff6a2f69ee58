"""The local executor of rules topologies: one time point at a time through the I-DLV-sr evaluator
(``rules.evaluate``), in one process."""
from __future__ import annotations

import time as _time

from srtopo import interrupt
from srtopo.io.sources import AtomLog, Lines, Timeline
from srtopo.ir.records import Model
from srtopo.ir.run import BatchMetrics, RunCounters, StageCounters
from srtopo.rules.evaluate import Reasoner
from srtopo.rules.points import timeline_points

SOURCES = (AtomLog, Timeline, Lines)


def run(topology, sources, config, sink, counters: RunCounters) -> list[BatchMetrics]:
    reasoner = Reasoner(topology, strategy=getattr(config.options, "strategy", None) or "auto")
    counters.stages = [StageCounters(s.id, tasks=1, seconds=0.0) for s in topology.stages]
    batches = []
    source = topology.source
    for point in timeline_points(sources, source.unit, sink, counters, config.lateness, source.number_unit,
                                 config.max_gap):
        interrupt.check()
        started = _time.perf_counter()
        if not batches:                 # the stream's first time point: its earliest record's
            reasoner.start_at(point.time)
        if not point.recorded:          # an empty stretch: evaluated as its windows need (Reasoner.stretch)
            shown = 0
            for result in reasoner.advance(point.last, every=config.print_empty, check=interrupt.check):
                sink.emit(Model(result.time, tuple(reasoner.shown(result)), None, result.satisfiable))
                shown += 1
                if shown % 1024 == 0:
                    interrupt.check()
            counters.outputs += shown
            batches.append(BatchMetrics(point.time, 0, _time.perf_counter() - started, shown))
            continue
        if reasoner.clock is not None and point.time == 0:
            reasoner.clock.set_origin_text(point.stamp)
        result = reasoner.step(point.atoms)
        seconds = _time.perf_counter() - started      # the evaluation; building the output is not timed
        sink.emit(Model(point.time, tuple(reasoner.shown(result)), point.stamp, result.satisfiable))
        counters.records += len(point.atoms)
        counters.outputs += 1
        batches.append(BatchMetrics(point.time, len(point.atoms), seconds, 1))
    for stage_counters, stats in zip(counters.stages, reasoner.stage_stats()):
        for key, value in stats.items():
            setattr(stage_counters, key, value)
    counters.batches = len(batches)
    return batches


def stopped_note(counters: RunCounters) -> str:
    """What a stopped local run has done."""
    return f"{counters.outputs} time points evaluated and written"
