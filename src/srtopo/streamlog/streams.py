"""Streamlog input: fact lines from one or more streams, punctuation, and how several streams are merged.

A stream is lines ``msg(3,red).`` (one ground fact, its timestamp first, timestamps non-decreasing per stream)
and ``#punctuation 7.`` (no later fact of this stream has a timestamp below 7). Blank lines and ``%`` comments
are skipped. A timestamp-free predicate read with ``uts(T)`` is stamped on arrival: the n-th such fact (over all
streams, in reading order) gets timestamp n.

A timestamp is **complete** once no stream can still send a fact at it; then its facts are evaluated and written,
in increasing timestamp order. How several streams decide that is the union (Zaniolo's slides, "Multiple
Streams"):

* ``synchronized`` (default): every stream has passed the timestamp, by a later fact or by punctuation. Idle
  waiting for a silent stream ends with its punctuation (in the stream, or ``punctuate()`` on demand, or after
  ``idle`` seconds without a line when read live).
* ``sort-merge``: every stream has passed it by a later *fact*; punctuation is ignored, so a silent stream blocks.
* ``plain``: some stream has passed it. Nothing waits for the slower streams, so their facts at timestamps already
  evaluated are rejected as late (counted and written with the rejected records): the plain union does not
  preserve the order of the merged stream.

Every line that cannot be used becomes one rejected record (stream, line, text, reason); the run goes on.
"""
from __future__ import annotations

import heapq
import math
import queue
import re
import threading
import time
from dataclasses import dataclass, field

from clingo import Function, Number, Symbol, SymbolType

from srtopo import interrupt
from srtopo.errors import StreamInputError, TopologyError
from srtopo.io.tnt import NOT_UTF8, NotUtf8
from srtopo.ir.records import Model, RejectedRecord
from srtopo.io.lines import open_lines
from srtopo.logic.atoms import RecordError, parse_atom
from srtopo.streamlog.evaluate import Evaluator, model
from srtopo.streamlog.program import Program

UNIONS = ("synchronized", "sort-merge", "plain")
_PUNCTUATION = re.compile(r"#punctuation\s+(-?\d+)\s*\.?\s*$")
_MAX_TEXT = 200


@dataclass
class _Source:
    name: str
    last: int | None = None          # the largest data timestamp seen
    data_passed: float = -math.inf   # every timestamp up to this is complete as far as data says
    punct_passed: float = -math.inf  # ... as far as punctuation says
    closed: bool = False

    def passed(self, union: str) -> float:
        if self.closed:
            return math.inf
        return self.data_passed if union == "sort-merge" else max(self.data_passed, self.punct_passed)


@dataclass
class Counters:
    lines: int = 0
    facts: int = 0
    punctuations: int = 0
    rejected: int = 0
    unused: int = 0                  # facts of predicates the program does not read
    timestamps: int = 0              # timestamps evaluated
    written: int = 0                 # timestamps written (those with shown facts)
    unused_predicates: set = field(default_factory=set)

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "unused_predicates"}
        out["unused_predicates"] = sorted(self.unused_predicates)
        return out


class Streamlog:
    """A Streamlog program over named streams: push lines (or punctuation) per stream, get the models of the
    timestamps that became complete. ``rejected`` holds the lines that could not be used."""

    def __init__(self, program: Program, streams=("stream",), union: str = "synchronized",
                 retain: int | None = None, on_reject=None, max_gap: int | None = None):
        """``on_reject``: called with each RejectedRecord as it happens (then ``rejected`` stays empty, so that a
        long run does not keep them all). ``max_gap``: a fact more than this many timestamps after the latest of
        its stream is rejected (None: any gap), since a mistyped timestamp far ahead would otherwise make every
        later good fact of the stream out of order."""
        if union not in UNIONS:
            raise TopologyError(f"unknown union {union!r}", hint="use one of " + ", ".join(UNIONS))
        if not streams:
            raise TopologyError("a Streamlog run reads at least one stream")
        self.program = program
        self.max_gap = max_gap
        self.evaluator = Evaluator(program, retain)
        self.union = union
        self.sources = [_Source(str(name)) for name in streams]
        self.pending: dict[int, dict] = {}
        self.heap: list[int] = []
        self.evaluated = -math.inf
        self.arrivals = 0
        self.rejected: list[RejectedRecord] = []
        self.on_reject = on_reject
        self.counters = Counters()
        self.temporal = program.temporal
        self.uts = program.uts
        #: called before each timestamp is evaluated (a runner stopping its run stops the evaluation there)
        self.check = None
        for sym in program.timed_facts:
            self._add(sym.arguments[0].number, sym)

    # --- input ------------------------------------------------------------------------------------------------

    def push(self, stream: int, text: str, line: int | None = None, file: str | None = None) -> list[Model]:
        """One line of stream ``stream`` (an index into ``streams``); ``file``: the file of a directory stream it
        comes from (rejected records name it)."""
        source = self.sources[stream]
        where = file or source.name
        self.counters.lines += 1
        stripped = text.strip()
        if not stripped or stripped.startswith("%"):
            return []
        if isinstance(text, NotUtf8):
            return self._reject(where, line, text, NOT_UTF8)
        if stripped.startswith("#"):
            m = _PUNCTUATION.match(stripped)
            if not m:
                return self._reject(where, line, text, "not a fact or '#punctuation T.'")
            self.counters.punctuations += 1
            return self.punctuate(stream, int(m.group(1)))
        if not stripped.endswith("."):
            return self._reject(where, line, text, "a fact ends with '.'")
        try:
            sym = parse_atom(stripped[:-1])
        except RecordError as error:
            return self._reject(where, line, text, str(error))
        sig = (sym.name, len(sym.arguments))
        stamped_by_arrival = sig in self.uts
        if stamped_by_arrival:
            self.arrivals += 1
            ts = self.arrivals
            sym = Function(sym.name, [Number(ts)] + list(sym.arguments), sym.positive)
            sig = (sig[0], sig[1] + 1)
        elif sig in self.program.statics:
            return self._reject(where, line, text, f"{sig[0]}/{sig[1]} is a background predicate of the program "
                                                    "(no timestamp); streams give stream predicates")
        elif not sym.arguments or sym.arguments[0].type != SymbolType.Number:
            return self._reject(where, line, text, "the first argument of a stream fact is its integer timestamp")
        else:
            ts = sym.arguments[0].number
        reason = self._order_problem(source, ts)
        if reason:
            return self._reject(where, line, text, reason)
        source.last = ts
        source.data_passed = max(source.data_passed, ts if stamped_by_arrival else ts - 1)
        if sig in self.temporal:
            self.counters.facts += 1
            self._add(ts, sym)
        else:
            self.counters.unused += 1
            self.counters.unused_predicates.add(f"{sig[0]}/{sig[1]}")
        return self._advance()

    def punctuate(self, stream: int, ts: int) -> list[Model]:
        """Punctuation: stream ``stream`` sends no fact with a timestamp below ``ts`` any more."""
        source = self.sources[stream]
        source.punct_passed = max(source.punct_passed, ts - 1)
        return self._advance()

    def close(self, stream: int) -> list[Model]:
        """Stream ``stream`` ended: it holds back no timestamp any more."""
        self.sources[stream].closed = True
        return self._advance()

    def finish(self) -> list[Model]:
        out = []
        for k in range(len(self.sources)):
            out += self.close(k)
        return out

    def _order_problem(self, source: _Source, ts: int) -> str | None:
        if source.last is not None and ts < source.last:
            return (f"timestamp {ts} is earlier than {source.last}, already seen in this stream (a stream's facts "
                    "come in non-decreasing timestamp order)")
        if self.max_gap is not None and source.last is not None and ts - source.last > self.max_gap:
            return (f"ahead: timestamp {ts} is more than {self.max_gap} after {source.last}, the latest of this "
                    "stream (a mistyped timestamp? if the stream has gaps this long, raise --max-gap or give "
                    "--max-gap none)")
        if ts <= source.punct_passed:
            return f"timestamp {ts} is below this stream's punctuation {int(source.punct_passed) + 1}"
        if ts <= self.evaluated:
            why = " (the plain union does not wait for the slower streams)" if self.union == "plain" else ""
            return f"timestamp {ts} was already evaluated{why}"
        return None

    def _reject(self, where: str, line, text: str, reason: str) -> list[Model]:
        shown = text.rstrip("\n")
        shown = shown if len(shown) <= _MAX_TEXT else shown[:_MAX_TEXT - 3] + "..."
        record = RejectedRecord(where, line, shown, reason)
        if self.on_reject is not None:
            self.on_reject(record)
        else:
            self.rejected.append(record)
        self.counters.rejected += 1
        return []

    def _add(self, ts: int, sym: Symbol) -> None:
        slot = self.pending.get(ts)
        if slot is None:
            slot = self.pending[ts] = {}
            heapq.heappush(self.heap, ts)
        slot.setdefault((sym.name, len(sym.arguments)), []).append(sym)

    # --- state, for a runner that checkpoints it ------------------------------------------------------------------

    def state(self, after: int | None = None) -> dict:
        """Everything the evaluation of later lines depends on, as JSON-ready data: each stream's progress, the
        facts of timestamps not yet complete, the last evaluated timestamp, the arrival counter of ``uts`` facts
        and the history the evaluator keeps (``Evaluator.kept``). Atoms are written as clingo prints them.

        ``after``: only the history of timestamps later than it (a delta over a state that has the rest, so that
        writing it costs what changed); ``kept_from`` says where the history now starts (``retain`` drops)."""
        def number(x):
            return None if x == -math.inf else ("inf" if x == math.inf else x)
        kept = self.evaluator.kept
        recent = []
        for ts, atoms in reversed(kept):
            if after is not None and ts <= after:
                break
            recent.append([ts, [str(a) for a in atoms]])
        return {"sources": [[s.last, number(s.data_passed), number(s.punct_passed), s.closed] for s in self.sources],
                "pending": [[ts, [str(a) for atoms in slot.values() for a in atoms]] for ts, slot in
                            sorted(self.pending.items())],
                "evaluated": number(self.evaluated), "arrivals": self.arrivals,
                "kept": recent[::-1], "kept_from": kept[0][0] if kept else None,
                "rebuilt_at": self.evaluator.rebuilt_at}

    def restore(self, state: dict) -> None:
        """Continue from ``state()`` of an earlier run of the same program and streams: the output from here on
        is the one the earlier run would have given."""
        from clingo import parse_term

        def number(x, default=-math.inf):
            return default if x is None else (math.inf if x == "inf" else x)
        for source, (last, data, punct, closed) in zip(self.sources, state["sources"]):
            source.last, source.data_passed, source.punct_passed = last, number(data), number(punct)
            source.closed = closed
        self.pending, self.heap = {}, []
        for ts, atoms in state["pending"]:
            self.pending[ts] = {}
            heapq.heappush(self.heap, ts)
            for text in atoms:
                self._add(ts, parse_term(text))
        self.evaluated, self.arrivals = number(state["evaluated"]), state["arrivals"]
        self.evaluator.restore([(ts, [parse_term(a) for a in atoms]) for ts, atoms in state["kept"]],
                               state["rebuilt_at"])

    # --- evaluation -------------------------------------------------------------------------------------------

    def _evaluated(self, now: int) -> None:
        """Called once per timestamp evaluated (a key partition counts them)."""

    def bound(self) -> float:
        """Every timestamp up to this one is complete."""
        passed = [s.passed(self.union) for s in self.sources]
        return max(passed) if self.union == "plain" else min(passed)

    def _advance(self) -> list[Model]:
        bound = self.bound()
        out = []
        while self.heap and self.heap[0] <= bound:
            if self.check is not None:
                self.check()
            now = heapq.heappop(self.heap)
            inputs = self.pending.pop(now, {})
            atoms, later = self.evaluator.evaluate(now, inputs)
            self.evaluated = now
            self.counters.timestamps += 1
            self._evaluated(now)
            for ts in later:
                if ts not in self.pending:
                    self.pending[ts] = {}
                    heapq.heappush(self.heap, ts)
            if atoms:
                self.counters.written += 1
                out.append(model(now, atoms))
        return out


# --- reading streams ---------------------------------------------------------------------------------------------

_END = object()


def _reader(index: int, source, out: queue.Queue) -> None:
    try:
        lines = source.lines if hasattr(source, "lines") else open_lines(getattr(source, "spec", source))
        for number, item in enumerate(lines, start=1):
            if isinstance(item, tuple):          # a directory: (file, line number, text)
                out.put((index, (item[0], item[1]), item[2]))
            else:
                out.put((index, (None, number), item))
    except StreamInputError as error:
        out.put((index, None, error))
    except interrupt.Interrupted:      # a run stopping: the main loop says so, this thread just ends
        return
    out.put((index, None, _END))


def run_streams(streamlog: Streamlog, specs: list, emit, idle: float | None = None):
    """Read every stream (``io.sources.FactLines`` or a spec: files, directories, ``-`` for stdin,
    ``tcp://HOST:PORT``; or lines held in memory, ``io.sources.Lines``) concurrently, one thread each,
    feeding lines to ``streamlog`` in arrival order and passing each complete timestamp's Model to ``emit`` at once.
    With ``idle`` seconds, a stream silent that long gets punctuation at the largest timestamp another stream
    has reached, so that a quiet stream does not hold the output back."""
    lines: queue.Queue = queue.Queue(maxsize=10000)
    threads = [threading.Thread(target=_reader, args=(k, spec, lines), daemon=True) for k, spec in enumerate(specs)]
    for thread in threads:
        thread.start()
    open_streams = set(range(len(specs)))
    heard = {k: time.monotonic() for k in open_streams}
    while open_streams:
        try:     # short waits: a signal stops the run between two lines (srtopo.interrupt)
            index, number, item = lines.get(timeout=min(idle, 0.25) if idle else 0.25)
        except queue.Empty:
            interrupt.check()
            if idle:
                _punctuate_idle(streamlog, open_streams, heard, idle, emit)
            continue
        interrupt.check()
        heard[index] = time.monotonic()
        if item is _END:
            open_streams.discard(index)
            for m in streamlog.close(index):
                emit(m)
        elif isinstance(item, StreamInputError):
            raise item
        else:
            for m in streamlog.push(index, item, number[1], number[0]):
                emit(m)
        if idle:
            _punctuate_idle(streamlog, open_streams, heard, idle, emit)


def _punctuate_idle(streamlog: Streamlog, open_streams: set, heard: dict, idle: float, emit) -> None:
    now = time.monotonic()
    reached = [s.last for s in streamlog.sources if s.last is not None]
    if not reached:
        return
    for k in open_streams:
        if now - heard[k] >= idle:
            for m in streamlog.punctuate(k, max(reached)):
                emit(m)
            heard[k] = now
