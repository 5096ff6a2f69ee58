"""The local executor of Streamlog topologies: the program evaluated with clingo one complete timestamp at a
time (``streamlog.streams``), its streams read concurrently, in one process."""
from __future__ import annotations

from srtopo.io.sources import FactLines, Lines
from srtopo.ir.run import BatchMetrics, RunCounters, StageCounters
from srtopo.streamlog.program import parse_program
from srtopo.streamlog.streams import Streamlog, run_streams

SOURCES = (FactLines, Lines)


def run(topology, sources, config, sink, counters: RunCounters) -> list[BatchMetrics]:
    """Counters: records are facts, malformed the rejected lines, irrelevant the facts of predicates the program
    does not read, batches the timestamps evaluated, outputs those written; ``extra`` has the punctuations and
    the unread predicates."""
    stage = topology.stages[0]
    program = parse_program(stage.program, stage.file).check()
    streamlog = Streamlog(program, [s.describe() for s in sources], topology.source.union, stage.retain,
                          on_reject=sink.reject, max_gap=config.max_gap)
    counters.stages = [StageCounters(stage.id, tasks=1, seconds=None, window_rows=None, window_peak=None)]
    idle = next((s.idle for s in sources if getattr(s, "idle", None)), None)
    try:
        run_streams(streamlog, list(sources), sink.emit, idle=idle)
    finally:
        c = streamlog.counters
        counters.records, counters.malformed, counters.irrelevant = c.facts, c.rejected, c.unused
        counters.outputs, counters.batches = c.written, c.timestamps
        counters.stages[0].records_in, counters.stages[0].outputs = c.facts, c.written
        counters.extra = {"timestamps": c.timestamps, "punctuations": c.punctuations,
                          "unused_predicates": sorted(c.unused_predicates)}
    return []


def stopped_note(counters: RunCounters) -> str:
    """What a stopped local run has done."""
    return f"{counters.batches} timestamps evaluated, {counters.outputs} written"
