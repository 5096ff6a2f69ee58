"""The local runner's columnar plan: a micro-batch at a time, in arrays, with the reports, rejected records, late
records and counters of the record-by-record plan (``consistency.local``, the semantic reference).

Per micro-batch (``--files-per-batch`` files of each source, or a part of records held in memory):

1. **read**: each ``.tnt`` file is read whole and parsed into columns (``io.tntarrow``: lines validated by RE2,
   the rare line that fails by the line-by-line reader); other file formats and records in memory are read by
   the reference readers and put into columns;
2. **lateness**, per source in its own order: a tuple's clock before it is the prefix maximum of the source's
   earlier tuple times and punctuations (``np.maximum.accumulate``), started from the source's clock
   (``ir.lateness.SourceClock``); a late tuple never raises it, so the maximum over every earlier tuple is the
   maximum over the accepted ones;
3. **routing** (``consistency.columnar.Vocabulary``): concept ids to stage rows by an index take, counters by a
   ``bincount``; subjects get integer codes from one dictionary of the batch's subjects and the window's;
4. **closing** (``consistency.sweep``): the reports of times the batch's horizon closes (every unfinished
   source's horizon, as the reference plan closes them), from the window state and the batch's rows, and the
   window pruned to what a future tuple can reach.

Reports are emitted when their time closes, at the end of the batch that closes it, in (time, subject) order;
rejected records at the end of their batch, each source's in its order. A standard input, a socket or a named
pipe, read as the lines come, takes the reference plan: a batch there has no end to wait for
(``run`` says so in the run's physical plan).
"""
from __future__ import annotations

import time as _time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from srtopo import interrupt
from srtopo.consistency.columnar import STAGE_COUNTERS, ReportBatch, Vocabulary
from srtopo.io.read import _files, _located, _rdf_file
from srtopo.io.sinks import emit_all
from srtopo.io.sources import Lines, RdfFiles, SocketLines, TntFiles, TupleFiles, Tuples
from srtopo.io.tnt import TIME_MAX, TIME_MIN, Punctuation, file_lines, tnt_records
from srtopo.io.tntarrow import LARGEST_BLOCK, Block, block_of, read_block, string_view_array
from srtopo.io.tsv import tuple_records
from srtopo.ir.lateness import SourceClock, floor_reason, late_reason
from srtopo.ir.records import RejectedRecord
from srtopo.ir.run import BatchMetrics, RunCounters
from srtopo.ir.topology import Topology

#: closing up to this (exclusive) closes nothing; past the greatest time, everything
NEG, POS = TIME_MIN, TIME_MAX + 1
#: a block's records' order keys stay below this; a part's blocks are ordered by their number above it
_BLOCK = 1 << 44


def reads_live(source) -> bool:
    """Whether a source is read as it comes (standard input, a socket, a named pipe): the columnar plan waits for
    a whole batch, so such a run takes the reference plan."""
    import os
    import stat
    if isinstance(source, SocketLines):
        return True
    path = getattr(source, "path", None)
    if path == "-":
        return True
    if isinstance(path, str) and os.path.exists(path) and not os.path.isdir(path):
        return not stat.S_ISREG(os.stat(path).st_mode)
    return False


def columnar_reads(sources) -> bool:
    """Whether the columnar plan reads these sources (else the run takes the reference plan): no live source,
    and times of records in memory within 64 bits."""
    for source in sources:
        if reads_live(source):
            return False
        if isinstance(source, Tuples) and any(not TIME_MIN <= int(t) <= TIME_MAX for _s, _c, t in source.records):
            return False
    return True


# --- reading: each source as parts (micro-batches) of blocks -------------------------------------------------

def _tnt_file(path: str, lookup) -> Block:
    with open(path, "rb") as handle:
        data = handle.read()
    if len(data) >= LARGEST_BLOCK:      # a string view's offset has 32 bits: read line by line
        return _records_block(path, _numbered(tnt_records(file_lines(path), path, True), path), lookup)
    return read_block(data, path, lookup)


def _records_block(source: str, records, lookup) -> Block:
    """A block of the reference reader's records, in their order: tuples as (tuple, source, line, index),
    RejectedRecord, Punctuation (its ``line``: its line number). A tuple's order key is line * 2 + part (a role
    assertion's second tuple is part 1), a punctuation's line * 2, as ``io.tntarrow.read_block`` gives them."""
    tuples, punctuations, rejected = [], [], []
    previous, part = None, 0
    for record in records:
        cls = record.__class__
        if cls is RejectedRecord:
            rejected.append(record)
        elif cls is Punctuation:
            punctuations.append((2 * record.line, record.time))
        else:
            item, _source, line, _index = record
            part = part + 1 if line == previous else 0
            previous = line
            tuples.append((2 * line + part, line, item.time, item.subject, item.concept))
    return block_of(source, tuples, punctuations, rejected, lookup)


def _numbered(records, source: str, offset: int = 0):
    """``tnt_records``' records as ``_records_block`` takes them, lines moved by ``offset``."""
    for record in records:
        cls = record.__class__
        if cls is RejectedRecord:
            yield RejectedRecord(record.source, record.line + offset, record.text, record.reason)
        elif cls is Punctuation:
            yield Punctuation(record.time, record.line + offset)
        else:
            yield record[0], source, record[1] + offset, 0


def source_parts(source, lookup):
    """The parts (micro-batches) of a source: each a list of blocks, in the source's order."""
    if isinstance(source, TntFiles):
        files = _files(source)
        per = source.files_per_batch or max(1, len(files))
        for i in range(0, len(files), per):
            yield [_tnt_file(f, lookup) for f in files[i:i + per]]
        return
    if isinstance(source, (TupleFiles, RdfFiles)):
        files = _files(source)
        per = source.files_per_batch or max(1, len(files))
        for i in range(0, len(files), per):
            if isinstance(source, TupleFiles):
                yield [_records_block(f, _located(tuple_records(file_lines(f), f), f), lookup)
                       for f in files[i:i + per]]
            else:
                yield [_records_block(f, _rdf_file(f, source.rdf_format), lookup) for f in files[i:i + per]]
        return
    if isinstance(source, Tuples):
        from srtopo.io.read import _chunks
        start = 0
        for chunk in _chunks(source.records, source.batches):
            yield [block_of(source.name, [(2 * i, i, int(t), s, c) for i, (s, c, t) in enumerate(chunk, start + 1)],
                            [], [], lookup)]
            start += len(chunk)
        return
    if isinstance(source, Lines):
        from srtopo.io.read import _chunks
        start = 0
        for chunk in _chunks(source.lines, source.batches):
            yield [_lines_block(chunk, source.name, start, lookup)]
            start += len(chunk)
        return
    raise ValueError(f"the columnar plan does not read {type(source).__name__} sources")


def _lines_block(chunk, name: str, start: int, lookup) -> Block:
    """Lines held in memory, numbered from ``start + 1``: read as a file's lines when they can be (none holds a
    line break or a character UTF-8 cannot encode), else one by one."""
    try:
        if not any("\n" in line for line in chunk):
            data = "\n".join(chunk).encode("utf-8")
            return read_block(data, name, lookup, first_line=start + 1, file_start=False)
    except UnicodeEncodeError:
        pass
    return _records_block(name, _numbered(tnt_records(chunk, name, True), name, start), lookup)


# --- the batches ----------------------------------------------------------------------------------------

class Window:
    """The window state: cached stage rows (stage, subject code, concept id, asserted id, time) and the subjects'
    names (the codes index them)."""

    def __init__(self):
        z = np.zeros(0, dtype=np.int64)
        self.stage, self.subject, self.cid, self.aid, self.time = z, z, z, z, z
        self.names = pa.array([], pa.large_string())

    def __len__(self) -> int:
        return len(self.time)


class ColumnarChecker:
    """The columnar plan's state across micro-batches: the sources' clocks, the window, the closed bound."""

    def __init__(self, topology: Topology, window: int | None, lateness: int | None, n_sources: int,
                 counters: RunCounters):
        self.topology = topology
        self.window = window
        self.lateness = lateness
        self.vocabulary = Vocabulary(topology)
        self.clocks = [SourceClock() for _ in range(max(1, n_sources))]
        self.ended: set[int] = set()
        self.closed = NEG
        self.state = Window()
        self.counters = counters

    def lookup(self, names: list) -> np.ndarray:
        return self.vocabulary.lookup(names)

    def horizon(self) -> int | None:
        bounds = [c.horizon(self.lateness) for k, c in enumerate(self.clocks) if k not in self.ended]
        if not bounds or any(b is None for b in bounds):
            return None
        return min(bounds)

    # --- one batch ---------------------------------------------------------------------------------------
    def batch(self, parts: dict) -> tuple[list, ReportBatch | None]:
        """Take each source's part (source index -> blocks); the rejected records and the reports it closes."""
        rejected, taken = [], []
        for k, blocks in parts.items():
            got, late = self._source_part(k, blocks)
            rejected += late
            if got is not None:
                taken.append(got)
        self._add(taken)
        return rejected, self._close(self.horizon())

    def end(self, source: int) -> ReportBatch | None:
        self.ended.add(source)
        if len(self.ended) >= len(self.clocks):
            return self._close(None, final=True)
        return self._close(self.horizon())

    def finish(self) -> ReportBatch | None:
        return self._close(None, final=True)

    def _source_part(self, k: int, blocks: list) -> tuple:
        """One source's part: its lateness judged in its order, its counters; (its accepted tuples as
        (subjects, times, ids), its rejected records: malformed and late, in order)."""
        counters = self.counters
        clock = self.clocks[k]
        records = []
        for block in blocks:
            counters.malformed += len(block.rejected)
        n = sum(len(b) for b in blocks)
        counters.records += n
        time = np.concatenate([b.time for b in blocks]) if blocks else np.zeros(0, np.int64)
        aid = np.concatenate([b.aid for b in blocks]) if blocks else np.zeros(0, np.int64)
        late = np.zeros(n, dtype=bool)
        p_time = np.concatenate([b.punct_time for b in blocks]) if blocks else np.zeros(0, np.int64)
        if self.lateness is not None and (n or len(p_time)):
            late, latest, floor = self._late(blocks, clock)
        if len(p_time):
            clock.punctuate(int(p_time.max()))
        if n:
            top = int(time.max())
            if clock.latest is None or top > clock.latest:
                clock.latest = top
        # rejected records in the source's order: malformed lines and (one per line) late tuples
        if late.any():
            counters.late += int(np.count_nonzero(late))
            where = np.flatnonzero(late)
            records += self._late_records(blocks, where, latest, floor)
        for block in blocks:
            records += block.rejected
        if late.any() and any(b.rejected for b in blocks):
            place = {b.source: i for i, b in enumerate(blocks)}
            records.sort(key=lambda r: (place.get(r.source, 0), r.line if r.line is not None else 0))
        accepted = ~late
        relevant = accepted & (aid >= 0)
        counters.irrelevant += int(np.count_nonzero(accepted & (aid < 0)))
        if not relevant.any():
            return None, records
        counts = self.vocabulary.stage_counts(aid[relevant])
        for s, stage in enumerate(counters.stages):
            for j, key in enumerate(STAGE_COUNTERS):
                setattr(stage, key, getattr(stage, key) + int(counts[s, j]))
        views, buffers = _views(blocks)
        return (views[relevant], buffers, time[relevant], aid[relevant]), records

    def _late(self, blocks: list, clock: SourceClock):
        """Which tuples of a source's part are late; the largest time and punctuation before each tuple."""
        t_order = np.concatenate([i * _BLOCK + b.order for i, b in enumerate(blocks)])
        p_order = np.concatenate([i * _BLOCK + b.punct_order for i, b in enumerate(blocks)])
        t_time = np.concatenate([b.time for b in blocks])
        p_time = np.concatenate([b.punct_time for b in blocks])
        n = len(t_time)
        order = np.argsort(np.concatenate([t_order, p_order]), kind="stable")
        is_tuple = order < n
        times = np.concatenate([t_time, p_time])[order]
        # NEG for "none": no time is below it, so it never makes a tuple late (as None does not)
        tuples = np.where(is_tuple, times, NEG)
        puncts = np.where(is_tuple, NEG, times)
        start_t = NEG if clock.latest is None else clock.latest
        start_p = NEG if clock.floor is None else clock.floor
        latest = np.maximum.accumulate(np.concatenate([[start_t], tuples]))[:-1]
        floor = np.maximum.accumulate(np.concatenate([[start_p], puncts]))[:-1]
        lateness = np.uint64(int(self.lateness))
        late = is_tuple & ((times < floor) | ((latest > times)
                                              & (latest.view(np.uint64) - times.view(np.uint64) > lateness)))
        # back to the tuples' own order (``order`` lists tuples by their place in the blocks)
        back = np.empty(len(order), dtype=np.int64)
        back[order] = np.arange(len(order))
        at = back[:n]
        return late[at], latest[at], floor[at]

    def _late_records(self, blocks: list, where: np.ndarray, latest, floor) -> list:
        """One rejected record per line holding late tuples (its first late tuple's), with why."""
        sizes = np.array([len(b) for b in blocks], dtype=np.int64)
        firsts = np.cumsum(sizes) - sizes
        out, seen = [], set()
        subjects = {}
        for i in where.tolist():
            b = int(np.searchsorted(firsts, i, side="right") - 1)
            block, j = blocks[b], i - int(firsts[b])
            line = int(block.line[j])
            if (b, line) in seen:       # a role assertion is two tuples: one record per line
                continue
            seen.add((b, line))
            if b not in subjects:
                subjects[b] = block.subjects()
            t = int(block.time[j])
            subject = subjects[b][j].as_py()
            concept = block.names[int(block.code[j])]
            if t < int(floor[i]):
                why = floor_reason(t, int(floor[i]), "event time")
            else:
                why = late_reason(t, int(latest[i]), int(self.lateness), "event time")
            out.append(RejectedRecord(block.source, line, f"{t}\t{subject} {concept}", why))
        return out

    def _add(self, taken: list) -> None:
        """Add the batch's accepted tuples to the window as their cached stage rows."""
        if not taken:
            return
        views, buffers = _joined([(v, b) for v, b, _t, _a in taken])
        time = np.concatenate([t for _v, _b, t, _a in taken])
        aid = np.concatenate([a for _v, _b, _t, a in taken])
        index, stage, cid = self.vocabulary.expand(aid)
        if not len(index):
            return
        rows = index[np.concatenate([[True], index[1:] != index[:-1]])]      # ``expand`` lists tuples in order
        if len(rows) < len(aid):            # only tuples cached at some stage need a subject code
            views, time, aid = views[rows], time[rows], aid[rows]
            index = np.searchsorted(rows, index)
        encoded = pc.dictionary_encode(string_view_array(views, buffers))
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        batch_names = encoded.dictionary.cast(pa.large_string())
        state = self.state
        known = pc.index_in(batch_names, value_set=state.names)
        fresh = known.is_null().to_numpy(zero_copy_only=False)
        mapping = known.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        mapping[fresh] = len(state.names) + np.arange(int(np.count_nonzero(fresh)))
        if fresh.any():
            state.names = pa.concat_arrays([state.names, batch_names.filter(pa.array(fresh))])
        subject = mapping[codes][index]
        state.stage = np.concatenate([state.stage, stage])
        state.subject = np.concatenate([state.subject, subject])
        state.cid = np.concatenate([state.cid, cid])
        state.aid = np.concatenate([state.aid, aid[index]])
        state.time = np.concatenate([state.time, time[index]])
        for s, c in enumerate(self.counters.stages):
            c.window_rows = int(np.count_nonzero(state.stage == s))
            c.window_peak = max(c.window_peak or 0, c.window_rows)

    def _close(self, horizon: int | None, final: bool = False) -> ReportBatch | None:
        """The reports of the times below ``horizon`` (every one if ``final``) not closed yet, in (time, subject)
        order; the window keeps what a future tuple can reach."""
        hi = POS if final else horizon
        if hi is None or hi <= self.closed:
            return None
        lo, self.closed = self.closed, hi
        state, vocabulary = self.state, self.vocabulary
        if not len(state):
            return None
        closed = vocabulary.close(state.stage, state.subject, state.cid, state.aid, state.time, lo, hi, self.window)
        batch = ReportBatch(vocabulary, closed, state.names)
        for k, stage in enumerate(self.counters.stages):
            stage.outputs += int(np.count_nonzero(closed.stage == k))
        self.counters.outputs += len(batch)
        if not final:       # at the end of the input the window is left as it is (its rows are counted)
            self._prune(hi)
        return batch

    def _prune(self, hi: int) -> None:
        """Keep the rows a future tuple can reach (every row of an unbounded window)."""
        state = self.state
        if self.window is None:
            return
        keep = state.time >= max(NEG, hi - self.window) if hi < POS else np.zeros(len(state), dtype=bool)
        if keep.all():
            return
        for name in ("stage", "subject", "cid", "aid", "time"):
            setattr(state, name, getattr(state, name)[keep])
        used = np.zeros(len(state.names), dtype=bool)
        used[state.subject] = True
        state.subject = (np.cumsum(used) - 1)[state.subject]
        state.names = state.names.filter(pa.array(used))
        for s, c in enumerate(self.counters.stages):
            c.window_rows = int(np.count_nonzero(state.stage == s))


def _views(blocks: list) -> tuple[np.ndarray, list]:
    """The blocks' subject views as one matrix over the list of their buffers."""
    return _joined([(b.views, b.buffers) for b in blocks])


def _joined(parts: list) -> tuple[np.ndarray, list]:
    """String views of several arrays (views, buffers) as one: each long view's buffer number moved past the
    buffers before it."""
    buffers, out = [], []
    for views, part_buffers in parts:
        if buffers and len(views):
            views = views.copy()
            long = views[:, 0] > 12
            views[long, 2] += len(buffers)
        out.append(views)
        buffers += list(part_buffers)
    return (np.concatenate(out) if out else np.zeros((0, 4), "<u4")), buffers


def run(topology, sources, config, sink, progress) -> list[BatchMetrics]:
    """The local executor's loop for the columnar plan (``consistency.local.run`` dispatches here)."""
    checker = ColumnarChecker(topology, config.window, config.lateness, len(sources), progress)
    counters = progress
    parts = [source_parts(s, checker.lookup) for s in sources]
    ended: set[int] = set()
    batches: list[BatchMetrics] = []
    index = 0
    while True:
        started = _time.perf_counter()
        records_before, outputs_before = counters.records, counters.outputs
        taken = {}
        for k, it in enumerate(parts):
            if k in ended:
                continue
            interrupt.check()
            part = next(it, None)
            if part is None:
                ended.add(k)
                closed = checker.end(k)
                if closed:
                    emit_all(sink, closed)
            else:
                taken[k] = part
        if not taken:
            if batches:     # what the end of the input closed belongs to the last batch
                last = batches[-1]
                batches[-1] = BatchMetrics(last.batch, last.records, last.seconds,
                                           last.outputs + counters.outputs - outputs_before)
            break
        rejected, closed = checker.batch(taken)
        for record in rejected:
            sink.reject(record)
        if closed:
            emit_all(sink, closed)
        batches.append(BatchMetrics(index, counters.records - records_before, _time.perf_counter() - started,
                                    counters.outputs - outputs_before))
        index += 1
    counters.batches = len(batches)
    return batches
