"""The local executor of chains: one process, the reference semantics every other runner is checked against.

Statements are read in each source's order and merged by event time, as the consistency executor reads them
(``io.read``); each statement's tuples go through the consistency checker (``consistency.local``), which decides
which are late and emits the reports as they become due. A statement waits, with the others of its time point,
until that time point is closed: no source can still send an accepted tuple at it (the checker's horizon, from
the one definition of lateness, ``ir.lateness``), so no report can still fall on it. Then the saturation stage
withholds and saturates the time point's statements (``chain.entail``) and the program evaluates it
(``rules.evaluate``), as ``srtopo reason --stream-format tnt`` evaluates a time point whose statements are the
kept and entailed ones. Time points no statement reached are evaluated as the program's windows need
(``Reasoner.advance``).
"""
from __future__ import annotations

import heapq
import time as _time

from srtopo import interrupt
from srtopo.chain.entail import Entailment
from srtopo.consistency.local import ConsistencyChecker
from srtopo.io.read import STATEMENT_SOURCES, merged, statement_batches
from srtopo.io.sources import SocketLines
from srtopo.io.tnt import Punctuation, statement_tuples
from srtopo.ir.records import Model, RejectedRecord, Statement
from srtopo.ir.run import BatchMetrics, RunCounters, StageCounters
from srtopo.logic.atoms import RecordError, statement_atom
from srtopo.rules.evaluate import Reasoner

SOURCES = STATEMENT_SOURCES


def statement_text(statement: Statement) -> str:
    """A statement as one canonical ``.tnt`` line (what a rejected record of the program's side shows)."""
    def term(value: str) -> str:
        return value if value.startswith("_:") else f"<{value}>"
    obj = term(statement.object) if statement.object is not None else statement.literal
    return f"{statement.time}\t{term(statement.subject)} <{statement.predicate}> {obj} ."


class LocalChain:
    """A chain in one process: push statements, close time points, evaluate them (see the module docstring)."""

    def __init__(self, topology, config, sink, counters: RunCounters, n_sources: int):
        consistency, saturation, rules = topology.parts()
        options = config.options
        self.checker = ConsistencyChecker(consistency, config.window, config.lateness,
                                          getattr(options, "physical_plan", None) or "indexed", n_sources)
        self.reasoner = Reasoner(rules, strategy=getattr(options, "strategy", None) or "auto")
        self.entail = Entailment(saturation)
        self.sink = sink
        self.print_empty = config.print_empty
        self.counters = counters
        self.saturation = StageCounters(saturation.id, tasks=1, seconds=0.0)
        self.rule_stages = [StageCounters(s.id, tasks=1, seconds=0.0) for s in rules.stages]
        counters.stages = list(self.checker.counters.stages) + [self.saturation] + self.rule_stages
        counters.extra.update(reports=0, withheld=0, withheld_points=0, models=0)
        #: seconds spent in each part: checking, withholding and saturating, evaluating the program
        self.seconds = {"consistency_s": 0.0, "saturation_s": 0.0, "program_s": 0.0}
        self.pending: dict[int, list] = {}      # time point -> [(statement, source, line)]
        self.times: list[int] = []              # a heap of the pending time points
        self.reported: dict[int, set] = {}      # time point -> individuals with a report there
        self.closed = -1                        # the last time point the program evaluated
        self.strings: dict = {}                 # the String symbols of IRIs (``logic.atoms.triple_atom``)

    # --- statements in -------------------------------------------------------------------------------------
    def push(self, statement: Statement, source: str, line: int, index: int, socket: bool) -> None:
        started = _time.perf_counter()
        try:
            self._push(statement, source, line, index, socket)
        finally:
            self.seconds["consistency_s"] += _time.perf_counter() - started

    def _push(self, statement: Statement, source: str, line: int, index: int, socket: bool) -> None:
        checker, sink = self.checker, self.sink
        late = False
        for item in statement_tuples(statement):
            reports = checker.push(item, index)
            if reports is None:
                late = True
                continue
            self.report(reports)
        if late:        # a statement's tuples share its time and source: all of them are late, one record
            sink.reject(RejectedRecord(source, None if socket else line,
                                       f"{item.time}\t{item.subject} {item.asserted}", checker.why))
            return
        if statement.time not in self.pending:
            self.pending[statement.time] = []
            heapq.heappush(self.times, statement.time)
        self.pending[statement.time].append((statement, source, line))

    def report(self, reports) -> None:
        """Reports the checker has closed: written, and kept for withholding at their time points."""
        for report in reports:
            self.reported.setdefault(report.time, set()).add(report.subject)
            self.counters.extra["reports"] += 1
            self.sink.emit(report)

    def close(self, final: bool = False) -> None:
        """Evaluate every time point below the checker's horizon (``final``: every pending one)."""
        if final:
            self.report(self.checker.finish())
            limit = max(self.pending) if self.pending else self.closed
        else:
            horizon = self.checker.horizon()
            if horizon is None:
                return
            limit = horizon - 1
        while self.closed < limit:
            upcoming = self.times[0] if self.times and self.times[0] <= limit else None
            if upcoming is None or upcoming > self.closed + 1:
                last = limit if upcoming is None else upcoming - 1
                started = _time.perf_counter()
                for result in self.reasoner.advance(last, every=self.print_empty):
                    self._emit(result, None)
                self.seconds["program_s"] += _time.perf_counter() - started
                self.closed = last
                continue
            self.closed += 1
            heapq.heappop(self.times)
            interrupt.check()
            self._evaluate(self.closed, self.pending.pop(self.closed))

    # --- a closed time point --------------------------------------------------------------------------------
    def _evaluate(self, t: int, statements: list) -> None:
        started = _time.perf_counter()
        reported = self.reported.pop(t, None)
        entail, stage, extra = self.entail, self.saturation, self.counters.extra
        triples: dict = {}        # duplicates collapse: a statement's triple, or one entailed, once
        withheld = 0
        for statement, source, line in statements:
            stage.records_in += 1
            if entail.withheld(statement, reported):
                withheld += 1
                continue
            stage.forwarded += 1
            for n, triple in enumerate(entail.saturate(statement)):
                if triple not in triples:
                    triples[triple] = (n == 0, statement, source, line)
        atoms, own, strings = {}, 0, self.strings     # two literals may be one atom ("01" and "1" integers)
        for (s, p, o, literal), (first, statement, source, line) in triples.items():
            try:
                atom = statement_atom(s, p, o, literal, strings)
            except RecordError as error:      # only a statement's own literal can fail
                self.counters.malformed += 1
                self.sink.reject(RejectedRecord(source, line, statement_text(statement), error.message))
                continue
            if atom not in atoms:
                atoms[atom] = None
                own += first
        stage.inferred += len(atoms) - own
        stage.outputs += len(atoms)
        extra["withheld"] += withheld
        extra["withheld_points"] += withheld > 0
        saturated = _time.perf_counter()
        stage.seconds += saturated - started
        self.seconds["saturation_s"] += saturated - started
        self._emit(self.reasoner.step(list(atoms)), None)
        self.seconds["program_s"] += _time.perf_counter() - saturated

    def _emit(self, result, stamp) -> None:
        self.sink.emit(Model(result.time, tuple(self.reasoner.shown(result)), stamp, result.satisfiable))
        self.counters.outputs += 1
        self.counters.extra["models"] += 1

    def settle(self) -> None:
        """The run's counters from the checker's (tuples, late, irrelevant) and the program's (clingo's work)."""
        mine, theirs = self.counters, self.checker.counters
        mine.records, mine.late, mine.irrelevant = theirs.records, theirs.late, theirs.irrelevant
        mine.extra.update({k: round(v, 6) for k, v in self.seconds.items()})
        for stage, stats in zip(self.rule_stages, self.reasoner.stage_stats()):
            for key, value in stats.items():
                setattr(stage, key, value)


def run(topology, sources, config, sink, counters: RunCounters) -> list[BatchMetrics]:
    chain = LocalChain(topology, config, sink, counters, len(sources))
    per_source = [statement_batches(s, k, first_time=0) for k, s in enumerate(sources)]
    sockets = {s.describe() for s in sources if isinstance(s, SocketLines)}
    batches: list[BatchMetrics] = []
    ended: set[int] = set()
    try:
        while True:
            parts = []
            for k, it in enumerate(per_source):
                if k in ended:
                    continue
                part = next(it, None)
                if part is None:
                    ended.add(k)
                    chain.report(chain.checker.end(k))
                    chain.close()
                else:
                    parts.append(part)
            if not parts:
                break
            started = _time.perf_counter()
            records, outputs = chain.checker.counters.records, counters.outputs
            for n, item in enumerate(merged(parts)):
                if not n & 1023 and interrupt.requested():
                    interrupt.check()
                cls = item.__class__
                if cls is RejectedRecord:
                    counters.malformed += 1
                    sink.reject(item)
                    continue
                if cls is Punctuation:
                    chain.report(chain.checker.punctuate(item.time, item.line))
                    chain.close()
                    continue
                statement, source, line, index = item
                chain.push(statement, source, line, index, source in sockets)
                chain.close()
            chain.settle()
            batches.append(BatchMetrics(len(batches), chain.checker.counters.records - records,
                                        _time.perf_counter() - started, counters.outputs - outputs))
        chain.close(final=True)
    finally:
        chain.settle()
    counters.batches = len(batches)
    return batches


def stopped_note(counters: RunCounters) -> str:
    """What a stopped local run has done."""
    return (f"{counters.records} tuples checked, {counters.extra.get('reports', 0)} reports and "
            f"{counters.outputs} time points written")
