"""The columnar plan split by subject: what each task of Spark's executors' plan runs (and Spark's driver, for a
small micro-batch, in one process). Plain Python over Arrow and numpy: ``srtopo.runners.spark.consistency`` hands
these functions their Arrow batches (``mapInArrow``) and keeps the store's bookkeeping.

**Reading** (``read_files``, one task per group of files): each file is read with pyarrow (a local path, or
pyarrow's file systems for ``hdfs://`` and ``s3a://``) and parsed into columns (``io.tntarrow``; tuple and RDF
files by their line readers). A task hands on compact rows (``ROWS``): per tuple a 64-bit subject key, its concept
id, its time and its place (file, line, part); per distinct subject of a file one row with its IRI (the only place
an IRI travels: reports and late records name subjects); per file one summary row (its source, largest time and
punctuation), copied to every partition; per malformed line one row with its text and reason. A file's rows bound
for one partition travel as ONE value, an Arrow IPC stream (``packed``).

**Routing**: rows go to partition ``key mod n`` by one shuffle (``route``: a value Spark's hash partitioner sends
to that partition, found once per session). The subject key is a 64-bit hash of the IRI (``string_keys``, with a
seed). No report may be lost or merged by a collision: every partition checks that each key it holds names one
IRI (the batch's IRI rows and its window state's IRIs); a partition that finds two says so, and the batch runs
again with another seed (``Closing.collision``).

**Closing** (``close_partition``, one task per partition): the files' summaries give every source's clock before
each file; a tuple is late as the local runner judges it (its source's largest time and punctuation before it:
the clock before its file, and within the file the prefix maxima the reading task computed where a file goes back
in time, ``pre_t`` and ``pre_p``); accepted tuples become their stage rows (``consistency.columnar``), and the
partition's window (the state its task wrote in the previous store entry) and the batch's rows close with the
sweep (``consistency.sweep``). The task writes its part of the store entry itself, as the Spark write lays it out
(JSON lines of reports, rejected records and window state), and returns one row of counters.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from srtopo.consistency.columnar import STAGE_COUNTERS, Vocabulary
from srtopo.io import jsonlines
from srtopo.io.paths import local_of
from srtopo.io.tntarrow import Block, block_of, read_block, string_view_array
from srtopo.ir.lateness import NEG, SourceClock, bounds_for, floor_reason, late_reason
from srtopo.ir.records import RejectedRecord
from srtopo.ir.topology import Topology

#: row kinds
TUPLE, SUBJECT, FILE, MALFORMED = 0, 1, 2, 3
#: the rows a reading task hands on (packed per partition: ``PACKED``)
ROWS = pa.schema([("route", pa.int64()), ("kind", pa.int8()), ("key", pa.int64()), ("aid", pa.int32()),
                  ("time", pa.int64()), ("place", pa.int64()), ("pre_t", pa.int64()), ("pre_p", pa.int64()),
                  ("text", pa.string()), ("extra", pa.string())])
#: what a reading task hands to the shuffle: per file and partition ONE row (a few for a file of more than
#: ``PACK_ROWS`` rows), that partition's ``ROWS`` as an Arrow IPC stream (``packed``). Spark's shuffle then moves a
#: few large values instead of a row per tuple: each row through the JVM (Arrow to Spark's rows, the shuffle's write
#: and read, back to Arrow) held the plan to about 360k tuples/s on local[2] (experiments/README.md)
PACKED = pa.schema([("route", pa.int64()), ("rows", pa.binary())])
PACKED_SCHEMA = "route BIGINT, rows BINARY"
#: what a closing task returns (one row)
COUNTS = pa.schema([("partition", pa.int32()), ("counts", pa.string())])
COUNT_SCHEMA = "partition INT, counts STRING"
#: a row's place: file number * PLACE + line * 2 + part
PLACE = 1 << 33


# --- subject keys ------------------------------------------------------------------------------------------

_P1, _P2, _P3, _P4, _P5 = (np.uint64(x) for x in (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                                                  0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5))
#: strings longer than this are keyed one by one (blake2b); shorter ones by a vectorised xxhash-like mix
_LONG = 4096


def _rotl(x, r: int):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def string_keys(strings: pa.Array, seed: int = 0) -> np.ndarray:
    """A 64-bit key of each string (its UTF-8 bytes), the same in every process for the same seed."""
    strings = strings.cast(pa.large_string())
    n = len(strings)
    if not n:
        return np.zeros(0, dtype=np.int64)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64)[strings.offset:strings.offset + n + 1]
    data = strings.buffers()[2]
    base = int(offsets[0])
    raw = np.frombuffer(data, dtype=np.uint8)[base:int(offsets[-1])] if data is not None else np.zeros(0, np.uint8)
    padded = np.zeros(len(raw) + 8, dtype=np.uint8)
    padded[:len(raw)] = raw
    words = np.lib.stride_tricks.as_strided(padded, shape=(len(padded) - 7, 8), strides=(1, 1)).view("<u8")[:, 0]
    start = offsets[:-1] - base
    length = (offsets[1:] - offsets[:-1]).astype(np.int64)
    with np.errstate(over="ignore"):
        h = (np.uint64(seed & (2 ** 64 - 1)) + _P5) ^ (length.astype(np.uint64) * _P1)
        short = np.flatnonzero(length <= _LONG)
        active = short[length[short] > 0]
        k = 0
        while len(active):
            remaining = length[active] - 8 * k
            valid = np.minimum(remaining, 8).astype(np.uint64)
            mask = np.where(valid >= 8, np.uint64(2 ** 64 - 1), (np.uint64(1) << (valid * np.uint64(8))) - np.uint64(1))
            w = words[start[active] + 8 * k] & mask
            w = _rotl(w * _P2, 31) * _P1
            h[active] = _rotl(h[active] ^ w, 27) * _P1 + _P4
            k += 1
            active = active[remaining > 8]
        h ^= h >> np.uint64(33)
        h *= _P2
        h ^= h >> np.uint64(29)
        h *= _P3
        h ^= h >> np.uint64(32)
    out = h.view(np.int64)
    for i in np.flatnonzero(length > _LONG).tolist():
        text = bytes(raw[start[i]:start[i] + length[i]])
        digest = hashlib.blake2b(text, digest_size=8, key=seed.to_bytes(8, "little", signed=True)).digest()
        out[i] = int.from_bytes(digest, "little", signed=True)
    return out


# --- reading ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FileToRead:
    """A file of a micro-batch: its path (a URI or a local path), its source, its number in the batch (files are
    numbered in each source's order, sources one after the other) and its source's format."""
    path: str
    source: int
    number: int
    form: str = "tnt"
    rdf_format: str | None = None


def _read_bytes(path: str) -> bytes:
    """A file's bytes: a local path (or ``file:`` URI) with the os module, any other URI with pyarrow's file
    systems (``s3a://`` read as ``s3://``)."""
    local = _local(path)
    if local is not None:
        with open(local, "rb") as handle:
            return handle.read()
    from pyarrow import fs
    uri = "s3://" + path[len("s3a://"):] if path.startswith("s3a://") else path
    filesystem, inner = fs.FileSystem.from_uri(uri)
    with filesystem.open_input_stream(inner) as stream:
        return stream.read()


def _local(path: str) -> str | None:
    return local_of(path)


def _block(f: FileToRead, lookup) -> Block:
    """A file's records in columns (its name as the batch's rejected records name it: the path as listed)."""
    if f.form == "tnt":
        return read_block(_read_bytes(f.path), f.path, lookup)
    local = _local(f.path)
    if local is None:
        raise OSError(f"{f.path}: tuple and RDF files are read from a local path by the columnar plan")
    from srtopo.consistency.local_columnar import _records_block
    from srtopo.io.read import _located, _rdf_file
    from srtopo.io.tnt import file_lines
    from srtopo.io.tsv import tuple_records
    if f.form == "tsv":
        records = _located(tuple_records(file_lines(local), f.path), f.path)
    else:
        records = _rdf_file(local, f.rdf_format)
    return _records_block(f.path, records, lookup)


def _prefix(block: Block) -> tuple[np.ndarray, np.ndarray]:
    """Per tuple of a block, the largest time of the tuples before it and the largest punctuation before it (NEG:
    none), in the block's order."""
    n = len(block)
    order = np.argsort(np.concatenate([block.order, block.punct_order]), kind="stable")
    is_tuple = order < n
    times = np.concatenate([block.time, block.punct_time])[order]
    tuples = np.maximum.accumulate(np.concatenate([[NEG], np.where(is_tuple, times, NEG)]))[:-1]
    puncts = np.maximum.accumulate(np.concatenate([[NEG], np.where(is_tuple, NEG, times)]))[:-1]
    back = np.empty(len(order), dtype=np.int64)
    back[order] = np.arange(len(order))
    return tuples[back[:n]], puncts[back[:n]]


def read_files(files: list[FileToRead], vocabulary: Vocabulary, seed: int, routes: list[int]) -> pa.RecordBatch:
    """The rows of a group of files (``ROWS``); ``routes``: per partition, the value that routes a row there."""
    n_parts = len(routes)
    route_of = np.array(routes, dtype=np.int64)
    parts: list[pa.RecordBatch] = []
    for f in files:
        block = _block(f, vocabulary.lookup)
        n = len(block)
        place = f.number * PLACE + block.order          # line * 2 + part, as read (``Block.order``)
        encoded = pc.dictionary_encode(block.subjects())
        names = encoded.dictionary.cast(pa.large_string())
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        keys = string_keys(names, seed)
        key = keys[codes] if n else np.zeros(0, np.int64)
        relevant = block.aid >= 0
        pre_t, pre_p = _prefix(block) if n else (np.zeros(0, np.int64), np.zeros(0, np.int64))
        descent = (pre_t > block.time) | (pre_p > block.time)     # the file goes back in time here
        text = extra = None
        if not relevant.all():      # a tuple no stage reads carries its subject and concept (a late one's text)
            where = np.flatnonzero(~relevant)
            text = pa.array([None] * n, pa.string()) if n else None
            subjects = names.take(pa.array(codes[where])).to_pylist()
            concepts = [block.names[c] for c in block.code[where].tolist()]
            text_list, extra_list = [None] * n, [None] * n
            for i, s, c in zip(where.tolist(), subjects, concepts):
                text_list[i], extra_list[i] = s, c
            text, extra = pa.array(text_list, pa.string()), pa.array(extra_list, pa.string())
        parts.append(_rows(route_of[np.mod(key, n_parts)], TUPLE, key, block.aid, block.time, place,
                           np.where(descent, pre_t, NEG), np.where(descent, pre_p, NEG), descent, text, extra))
        used = np.zeros(len(names), dtype=bool)
        used[codes[relevant]] = True
        if used.any():              # one row per subject a stage reads: its IRI
            where = np.flatnonzero(used)
            parts.append(_rows(route_of[np.mod(keys[where], n_parts)], SUBJECT, keys[where], None, None, None, None,
                               None, None, names.take(pa.array(where)).cast(pa.string()), None))
        if block.rejected:
            lines = np.array([r.line for r in block.rejected], dtype=np.int64)
            parts.append(_rows(route_of[np.mod(lines, n_parts)], MALFORMED, lines, None, None,
                               f.number * PLACE + lines * 2, None, None, None,
                               pa.array([r.text for r in block.rejected], pa.string()),
                               pa.array([r.reason for r in block.rejected], pa.string())))
        summary = json.dumps({"file": f.number, "source": f.source, "name": f.path, "tuples": n,
                              "max_t": int(block.time.max()) if n else None,
                              "max_p": int(block.punct_time.max()) if len(block.punct_time) else None,
                              "punctuations": len(block.punct_time)})
        parts.append(_rows(route_of, FILE, np.zeros(n_parts, np.int64), None, None,
                           np.full(n_parts, f.number * PLACE, np.int64), None, None, None,
                           pa.array([summary] * n_parts, pa.string()), None))
    if not parts:
        return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in ROWS], schema=ROWS)
    return pa.concat_tables([pa.Table.from_batches([p]) for p in parts]).combine_chunks().to_batches()[0]


def _rows(route, kind, key, aid, time, place, pre_t, pre_p, given, text, extra) -> pa.RecordBatch:
    """Rows of one kind (None: a column of nulls; ``given``: where pre_t and pre_p are set)."""
    n = len(route)

    def ints(values, typ, valid=None):
        if values is None:
            return pa.nulls(n, typ)
        if valid is None:
            return pa.array(np.asarray(values), typ)
        return pa.array(np.asarray(values), typ, mask=~np.asarray(valid, dtype=bool))
    return pa.RecordBatch.from_arrays(
        [ints(route, pa.int64()), pa.array(np.full(n, kind, np.int8)), ints(key, pa.int64()),
         ints(aid, pa.int32()), ints(time, pa.int64()), ints(place, pa.int64()),
         ints(pre_t, pa.int64(), given) if given is not None else ints(pre_t, pa.int64()),
         ints(pre_p, pa.int64(), given) if given is not None else ints(pre_p, pa.int64()),
         text if text is not None else pa.nulls(n, pa.string()),
         extra if extra is not None else pa.nulls(n, pa.string())], schema=ROWS)


_IPC = pa.ipc.IpcWriteOptions(compression="lz4")
#: at most this many rows in one packed value (a value of ~16 MB: a large file's rows go as several)
PACK_ROWS = 1 << 18


def packed(rows: pa.RecordBatch, routes: list[int], most_bytes: int = 1 << 28):
    """``rows`` (``ROWS``) as ``PACKED`` batches: per partition that has any, its rows as Arrow IPC streams of at
    most ``PACK_ROWS`` rows, written one after the other into one buffer that becomes the binary column's data
    (a new batch past ``most_bytes``: its 32-bit offsets hold)."""
    route = rows.column("route").to_numpy(zero_copy_only=False)
    sink, values, offsets = pa.BufferOutputStream(), [], [0]
    for value in routes:
        mine = rows.filter(pa.array(route == value))
        for start in range(0, mine.num_rows, PACK_ROWS):
            with pa.ipc.new_stream(sink, ROWS, options=_IPC) as writer:
                writer.write_batch(mine.slice(start, PACK_ROWS))
            values.append(value)
            offsets.append(sink.tell())
            if offsets[-1] > most_bytes:
                yield _packed_batch(values, offsets, sink)
                sink, values, offsets = pa.BufferOutputStream(), [], [0]
    if values:
        yield _packed_batch(values, offsets, sink)


def _packed_batch(values: list[int], offsets: list[int], sink) -> pa.RecordBatch:
    blobs = pa.Array.from_buffers(pa.binary(), len(values),
                                  [None, pa.py_buffer(np.array(offsets, np.int32)), sink.getvalue()])
    return pa.RecordBatch.from_arrays([pa.array(values, pa.int64()), blobs], schema=PACKED)


def group_text(group: list[FileToRead]) -> str:
    """A reading task's group of files as the text of its one input row (``read_packed`` reads it back)."""
    return json.dumps([[f.path, f.source, f.number, f.form, f.rdf_format] for f in group])


def read_packed(batches, topology: Topology, seed: int, routes: list[int]):
    """What a reading task yields (``mapInArrow``): for the groups of files its input rows name (``group_text``),
    each file's rows packed per partition (``packed``)."""
    for batch in batches:
        for text in batch.column("files").to_pylist():
            for f in json.loads(text):
                yield from packed(read_files([FileToRead(*f)], vocabulary_of(topology), seed, routes), routes)


def unpacked(batches) -> pa.Table:
    """The ``ROWS`` of a partition from its ``PACKED`` batches."""
    tables = [pa.ipc.open_stream(blob.as_buffer()).read_all() for b in batches for blob in b.column("rows")]
    return pa.concat_tables(tables) if tables else ROWS.empty_table()


# --- closing ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Closing:
    """What every closing task of a micro-batch is given (the same for all; pickled into the task).

    clocks: each source's clock before the batch (source -> ``SourceClock.to_json``); closed: the bound closed
    before it; n_sources, lateness, window: the query's; target: the store entry to write; previous: the state
    files the previous entry left for each partition (None: every part file of it, filtered by key; an empty list:
    no state); seed, parts: the keys' seed and the number of partitions; topology: for the vocabulary."""
    topology: Topology
    window: int | None
    lateness: int | None
    n_sources: int
    clocks: dict
    closed: int
    target: str
    previous: list | None
    previous_dir: str | None
    seed: int
    parts: int


_VOCABULARIES: dict = {}


def vocabulary_of(topology: Topology) -> Vocabulary:
    """The topology's vocabulary, built once per process (a Python worker serves many tasks)."""
    key = topology.to_json(indent=None)
    found = _VOCABULARIES.get(key)
    if found is None:
        _VOCABULARIES.clear()
        found = _VOCABULARIES[key] = Vocabulary(topology)
    return found


def file_clocks(summaries: list[dict], clocks: dict) -> tuple[dict, dict]:
    """Each file's source clock before it (file number -> (largest time, floor), NEG for none), and the sources'
    clocks after the batch, walking each source's files in their order."""
    cur = {int(k): SourceClock.from_json(v) if not isinstance(v, SourceClock) else
           SourceClock(v.latest, v.whole, v.floor) for k, v in clocks.items()}
    before = {}
    for s in sorted(summaries, key=lambda x: x["file"]):
        clock = cur.setdefault(int(s["source"]), SourceClock())
        before[s["file"]] = (NEG if clock.latest is None else clock.latest, NEG if clock.floor is None else clock.floor)
        if s["max_t"] is not None:
            clock.accept(int(s["max_t"]))
        if s["max_p"] is not None:
            clock.punctuate(int(s["max_p"]))
    return before, cur


def close_partition(rows: pa.Table, partition: int, closing: Closing) -> dict:
    """Close one partition of a micro-batch: write its reports, rejected records and window state into the store
    entry; its counters (with ``collision`` when a key names two IRIs: nothing is written then)."""
    vocabulary = vocabulary_of(closing.topology)
    kind = rows.column("kind").to_numpy(zero_copy_only=False)
    summaries = [json.loads(t) for t in rows.filter(pa.array(kind == FILE)).column("text").to_pylist()]
    before, cur = file_clocks(summaries, closing.clocks)
    b = bounds_for({int(k): SourceClock.from_json(v) for k, v in closing.clocks.items()}, closing.closed,
                   closing.n_sources, closing.lateness, closing.window, cur_clocks=cur)
    names = {s["file"]: s["name"] for s in summaries}
    counts = {"tuples": 0, "late": 0, "irrelevant": 0, "malformed": 0, "punctuations": 0, "collision": False,
              "summaries": summaries if partition == 0 else None}
    stages = len(closing.topology.stages)
    for k in range(stages):
        for key in STAGE_COUNTERS:
            counts[f"{key}_{k}"] = 0
    if partition == 0:
        counts["punctuations"] = sum(s["punctuations"] for s in summaries)
    # subjects: the batch's IRI rows and the window's
    subjects = rows.filter(pa.array(kind == SUBJECT))
    state = _read_state(closing, partition, vocabulary)
    names_all = pa.concat_arrays([subjects.column("text").combine_chunks().cast(pa.large_string()),
                                  state["subject"]])
    keys_all = np.concatenate([subjects.column("key").to_numpy(zero_copy_only=False).astype(np.int64),
                               string_keys(state["subject"], closing.seed)])
    codes, iris, key_of = _dictionary(keys_all, names_all)
    if codes is None:
        counts["collision"] = True
        return counts
    # the batch's tuples: lateness, counters, stage rows
    tuples = rows.filter(pa.array(kind == TUPLE))
    t_time = _ints(tuples, "time")
    t_aid = _ints(tuples, "aid")
    place = _ints(tuples, "place")
    file_no = place // PLACE
    counts["tuples"] = len(t_time)
    rejected: list[RejectedRecord] = []
    late = np.zeros(len(t_time), dtype=bool)
    if closing.lateness is not None and len(t_time):
        by_file = np.full((max(before, default=-1) + 1, 2), NEG, dtype=np.int64)     # file number -> clock
        for f, clock in before.items():
            by_file[f] = clock
        base = by_file[file_no]
        pre_t = tuples.column("pre_t").fill_null(NEG).to_numpy(zero_copy_only=False).astype(np.int64)
        pre_p = tuples.column("pre_p").fill_null(NEG).to_numpy(zero_copy_only=False).astype(np.int64)
        latest = np.maximum(base[:, 0], pre_t)
        floor = np.maximum(base[:, 1], pre_p)
        lateness = np.uint64(int(closing.lateness))
        late = (t_time < floor) | ((latest > t_time) & (latest.view(np.uint64) - t_time.view(np.uint64) > lateness))
        if late.any():
            counts["late"] = int(np.count_nonzero(late))
            t_key = _ints(tuples, "key")
            texts = tuples.column("text").to_pylist()
            extras = tuples.column("extra").to_pylist()
            for i in np.flatnonzero(late & (place % 2 == 0)).tolist():     # one record per line: part 0's
                t = int(t_time[i])
                aid = int(t_aid[i])
                subject = texts[i] if aid < 0 else iris[int(_codes_of(t_key[i:i + 1], key_of)[0])].as_py()
                concept = extras[i] if aid < 0 else vocabulary.names[aid]
                why = floor_reason(t, int(floor[i]), "event time") if t < floor[i] else \
                    late_reason(t, int(latest[i]), int(closing.lateness), "event time")
                line = int(place[i] % PLACE) // 2
                rejected.append(RejectedRecord(names[int(file_no[i])], line, f"{t}\t{subject} {concept}", why))
    accepted = ~late
    counts["irrelevant"] = int(np.count_nonzero(accepted & (t_aid < 0)))
    relevant = accepted & (t_aid >= 0)
    stage_counts = vocabulary.stage_counts(t_aid[relevant])
    for k in range(stages):
        for j, key in enumerate(STAGE_COUNTERS):
            counts[f"{key}_{k}"] = int(stage_counts[k, j])
    index, stage, cid = vocabulary.expand(t_aid[relevant])
    t_codes = _codes_of(_ints(tuples, "key")[relevant], key_of)[index] if len(index) else np.zeros(0, np.int64)
    new_time = t_time[relevant][index]
    new_aid = t_aid[relevant][index]
    # the window: the state's rows, then the batch's
    n_subject_rows = len(subjects)
    s_codes = codes[n_subject_rows:][state["row"]] if len(state["row"]) else np.zeros(0, np.int64)
    all_stage = np.concatenate([state["sk"], stage])
    all_subject = np.concatenate([s_codes, t_codes])
    all_cid = np.concatenate([state["cid"], cid])
    all_aid = np.concatenate([state["aid"], new_aid])
    all_time = np.concatenate([state["time"], new_time])
    fresh = np.concatenate([np.zeros(len(state["time"]), bool), np.ones(len(new_time), bool)])
    closed = vocabulary.close(all_stage, all_subject, all_cid, all_aid, all_time, b.lo, b.hi, closing.window)
    kept = all_time >= b.keep
    for k in range(stages):
        counts[f"reports_{k}"] = int(np.count_nonzero(closed.stage == k))
        counts[f"kept_{k}"] = int(np.count_nonzero(kept & ~fresh & (all_stage == k)))
        counts[f"newkept_{k}"] = int(np.count_nonzero(kept & fresh & (all_stage == k)))
    # malformed lines routed here
    malformed = rows.filter(pa.array(kind == MALFORMED))
    if len(malformed):
        counts["malformed"] = len(malformed)
        m_place = _ints(malformed, "place")
        for p, text, reason in zip(m_place.tolist(), malformed.column("text").to_pylist(),
                                   malformed.column("extra").to_pylist()):
            rejected.append(RejectedRecord(names[p // PLACE], (p % PLACE) // 2, text, reason))
    _write_part(closing, partition, vocabulary, closed, iris, rejected, all_subject[kept], all_time[kept],
                all_stage[kept], all_cid[kept], all_aid[kept])
    return counts


def _ints(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy(zero_copy_only=False).astype(np.int64)


def _codes_of(keys: np.ndarray, key_of: tuple) -> np.ndarray:
    """The codes of keys (every one among the known: a tuple's subject has its IRI row in the same partition)."""
    known, code = key_of
    return code[np.searchsorted(known, keys)]


def _dictionary(keys: np.ndarray, names: pa.Array):
    """Codes of the (key, IRI) rows by key, the IRIs by code and the keys' codes (sorted keys, their codes); None
    when a key names two IRIs."""
    if not len(keys):
        return np.zeros(0, np.int64), pa.array([], pa.large_string()), (np.zeros(0, np.int64), np.zeros(0, np.int64))
    encoded = pc.dictionary_encode(pa.array(keys, pa.int64()))
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    distinct = encoded.dictionary.to_numpy(zero_copy_only=False)
    first = np.full(len(distinct), -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]          # each key's first row
    iris = names.take(pa.array(first))
    if not pc.all(pc.equal(names, iris.take(pa.array(codes)))).as_py():
        return None, None, None
    order = np.argsort(distinct, kind="stable")
    return codes, iris, (distinct[order], order.astype(np.int64))


def _read_state(closing: Closing, partition: int, vocabulary: Vocabulary) -> dict:
    """The partition's window from the previous store entry: its rows (subject IRI, time, stage, concept, asserted
    concept) and, per row, the index of its subject in ``subject``."""
    import pyarrow.json as pj
    empty = {"subject": pa.array([], pa.large_string()), "row": np.zeros(0, np.int64),
             **{k: np.zeros(0, np.int64) for k in ("time", "sk", "cid", "aid")}}
    if closing.previous_dir is None:
        return empty
    folder = _local(closing.previous_dir)
    if closing.previous is not None:
        files = [os.path.join(folder, name) for name in closing.previous[partition]] \
            if partition < len(closing.previous) else []
        filtered = False
    else:
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                       if not f.startswith(("_", "."))) if folder and os.path.isdir(folder) else []
        filtered = True
    schema = pa.schema([("subject", pa.large_string()), ("time", pa.int64()), ("sk", pa.int64()),
                        ("cid", pa.int64()), ("aid", pa.int64())])
    tables = [pj.read_json(f, parse_options=pj.ParseOptions(explicit_schema=schema,
                                                           unexpected_field_behavior="ignore"))
              for f in files if os.path.getsize(f)]
    if not tables:
        return empty
    table = pa.concat_tables(tables).combine_chunks()
    if filtered:
        keys = string_keys(table.column("subject").combine_chunks(), closing.seed)
        table = table.filter(pa.array(np.mod(keys, closing.parts) == partition))
    encoded = pc.dictionary_encode(table.column("subject").combine_chunks())
    return {"subject": encoded.dictionary.cast(pa.large_string()),
            "row": encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64),
            **{k: table.column(k).to_numpy(zero_copy_only=False).astype(np.int64) for k in ("time", "sk", "cid",
                                                                                              "aid")}}


#: the file each closing task writes into each kind of its store entry
def part_name(partition: int) -> str:
    return f"part-{partition:05d}-columnar.json"


def _write_part(closing: Closing, partition: int, vocabulary: Vocabulary, closed, iris: pa.Array, rejected: list,
                subject, time, stage, cid, aid) -> None:
    """The partition's reports, rejected records and window state, as JSON lines in the entry's kind folders
    (each written aside and renamed: a task run again writes the same file)."""
    quoted = jsonlines.quoted(iris)
    outputs = {"report": vocabulary.report_lines(closed, quoted),
               "state": jsonlines.state_lines(quoted, subject, time, stage, cid, aid)}
    if rejected:
        outputs["rejected"] = pa.array([r.to_json() + "\n" for r in rejected], jsonlines.TEXT)
    for kind, lines in outputs.items():
        if len(lines):
            _write(f"{closing.target}/kind={kind}/{part_name(partition)}", jsonlines.text(lines))


def _write(path: str, data) -> None:
    local = _local(path)
    if local is not None:
        os.makedirs(os.path.dirname(local), exist_ok=True)
        aside = f"{os.path.dirname(local)}/.{os.path.basename(local)}.{os.getpid()}.tmp"
        try:
            with open(aside, "wb") as handle:
                handle.write(data)
            os.replace(aside, local)
        except OSError as refused:      # a full disk, a quota: say which file, and leave no partial one
            if os.path.exists(aside):
                os.unlink(aside)
            raise OSError(refused.errno, refused.strerror, refused.filename or local) from refused
        return
    from pyarrow import fs
    uri = "s3://" + path[len("s3a://"):] if path.startswith("s3a://") else path
    filesystem, inner = fs.FileSystem.from_uri(uri)
    with filesystem.open_output_stream(inner) as stream:
        stream.write(data)
