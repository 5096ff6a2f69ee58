"""Timestamped N-Triples read into columns: a file's (or a run of lines') tuples as arrays, for the columnar plans
(the local runner's ``columnar`` plan and Spark's executors), with exactly the records of the line-by-line reader
(``io.tnt.tnt_records``): the same tuples, rejected records (line and reason) and punctuation.

A block of bytes is cut into lines at ``\\n`` (numpy), decoded as UTF-8 in one call, and every line is matched in
C++ by RE2 (``pyarrow.compute``):

* a line in the canonical form (``io.tnt.CANONICAL_PATTERN_RE2``: ``T<TAB><s> <p> <o> .``, what ``format_tnt``
  writes) has its terms between its one tab and its first three spaces: numpy finds them, and the terms become
  string views into the block's bytes (Arrow ``string_view``: no copy);
* any other line is matched against ``io.tnt.LINE_PATTERN_RE2`` (the line pattern's language in RE2's dialect);
  a match gives its terms as RE2's groups;
* a line neither matches, and a line that is not UTF-8 or holds U+FFFD, takes the line-by-line reader, which says
  why it is rejected (or reads its punctuation ``# watermark T``, or skips a blank line or a comment).

A tuple's concept is an id (``lookup``: names -> ids, -1 for a concept no stage reads), looked up once per
distinct predicate and object of the block. Subjects stay text (string views) until the batch's dictionary gives
them integer codes (``consistency.columnar``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from srtopo.concepts import RDF_TYPE, exists, exists_inverse
from srtopo.io.tnt import (
    CANONICAL_PATTERN_RE2,
    LINE_PATTERN_RE2,
    LITERAL_TYPE,
    OUT_OF_RANGE,
    REPLACEMENT,
    TIME_MAX,
    TIME_MIN,
    NotUtf8,
    Punctuation,
    _tuples,
    tnt_records,
)
from srtopo.ir.records import RejectedRecord

BOM = b"\xef\xbb\xbf"
#: the patterns as applied to a line as read, with its newline (at most one, at its end)
_CANONICAL = CANONICAL_PATTERN_RE2[:-2] + r"\n?\z"
_LINE = LINE_PATTERN_RE2[:-2] + r"\n?\z"
#: a string view's bytes: its length, then its bytes (12 at most) or its first 4, its buffer and its offset
_INLINE = 12
#: a string view's offset is 32 bits: a block must be smaller (a larger file is read line by line)
LARGEST_BLOCK = 2 ** 31 - 1

Lookup = Callable[[list], np.ndarray]


@dataclass
class Block:
    """The records of a block of lines, in columns. Tuples in the order of the lines (a role assertion's two tuples
    at one line: the subject's, then the object's): line, order (a key of the records' order in the block: line *
    2 + part for a block read here), time, subject (string views into ``buffers``), concept (``code``: an index into
    ``names``) and its id (``aid``: -1 for a concept no stage reads). Punctuations as (order, time); rejected
    records in line order."""
    source: str
    buffers: list
    line: np.ndarray
    order: np.ndarray
    time: np.ndarray
    views: np.ndarray
    code: np.ndarray
    names: list
    aid: np.ndarray
    punct_order: np.ndarray
    punct_time: np.ndarray
    rejected: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.time)

    def subjects(self) -> pa.Array:
        return string_view_array(self.views, self.buffers)


def block_of(source: str, tuples: list, punctuations: list, rejected: list, lookup: Lookup) -> Block:
    """A block of records read one by one: ``tuples`` as (order, line, time, subject, concept), ``punctuations``
    as (order, time)."""
    names: dict[str, int] = {}
    code = np.array([names.setdefault(c, len(names)) for *_, c in tuples], dtype=np.int64)
    encoded = [s.encode("utf-8", "surrogatepass") for _o, _l, _t, s, _c in tuples]
    blob = b"".join(encoded) + bytes(16)      # padded: ``views_of`` reads words past a term's end
    sizes = np.array([len(s) for s in encoded], dtype=np.int64)
    views = views_of(np.frombuffer(blob, dtype=np.uint8), np.cumsum(sizes) - sizes, sizes, 0)
    listed = list(names)
    return Block(source, [pa.py_buffer(blob)], np.array([t[1] for t in tuples], dtype=np.int64),
                 np.array([t[0] for t in tuples], dtype=np.int64), np.array([t[2] for t in tuples], dtype=np.int64),
                 views, code, listed, lookup(listed)[code] if len(code) else np.zeros(0, np.int64),
                 np.array([p[0] for p in punctuations], dtype=np.int64),
                 np.array([p[1] for p in punctuations], dtype=np.int64), rejected)


def views_of(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, buffer: int) -> np.ndarray:
    """The Arrow string views (an (n, 4) matrix of little-endian 32-bit words) of the byte ranges [start, start +
    length) of ``data``, which is buffer number ``buffer`` of the array the views will be in: a view holds the
    length, then the bytes themselves (12 at most) or the first 4, the buffer's number and the offset. Every range
    must be followed by 3 bytes of ``data`` (a canonical line's terms are: ``> .`` at least), or ``data`` padded."""
    n = len(starts)
    out = np.zeros((n, 4), dtype="<u4")
    if not n:
        return out
    # every 4 bytes from each offset, as one little-endian word (overlapping: a view of the bytes, no copy)
    words = np.lib.stride_tricks.as_strided(data, shape=(len(data) - 3, 4), strides=(1, 1)).view("<u4")[:, 0]
    out[:, 0] = lengths
    out[:, 1] = words[starts]
    out[:, 2] = buffer
    out[:, 3] = starts
    short = np.flatnonzero(lengths <= _INLINE)
    if len(short):                      # inline: the bytes themselves, those past the end zero
        at, size = starts[short].astype(np.int64), lengths[short].astype(np.int64)
        for k in range(3):
            valid = np.clip(size - 4 * k, 0, 4).astype(np.uint64)
            mask = ((np.uint64(1) << (valid * np.uint64(8))) - np.uint64(1)).astype("<u4")
            out[short, 1 + k] = words[np.minimum(at + 4 * k, len(words) - 1)] & mask
    return out


def string_view_array(views: np.ndarray, buffers: list) -> pa.Array:
    """A ``string_view`` array of views (``views_of``) into ``buffers``."""
    return pa.Array.from_buffers(pa.string_view(), len(views), [None, pa.py_buffer(np.ascontiguousarray(views, "<u4"))]
                                 + list(buffers))


def _times(data: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The integers written in data[start:end] (an optional minus, at most 18 digits)."""
    negative = data[start] == 45
    first = start + negative
    digits = end - first
    value = np.zeros(len(start), dtype=np.int64)
    for k in range(int(digits.max()) if len(digits) else 0):
        has = k < digits
        value = np.where(has, value * 10 + (data[np.where(has, first + k, 0)].astype(np.int64) - 48), value)
    return np.where(negative, -value, value)


def _bare(term: str) -> str:
    return term[1:-1] if term.startswith("<") else term


def read_block(data: bytes, source: str, lookup: Lookup, first_line: int = 1, file_start: bool = True) -> Block:
    """The records of ``data`` (smaller than ``LARGEST_BLOCK``), lines of a ``.tnt`` stream numbered from
    ``first_line`` (``file_start``: they begin a file, whose byte-order mark is not data)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    skip = 3 if file_start and data[:3] == BOM else 0
    breaks = np.flatnonzero(raw == 10)
    starts = np.concatenate([[skip], breaks + 1]).astype(np.int64)
    if starts[-1] >= len(data):          # a final newline ends the last line
        starts = starts[:-1]
    n = len(starts)
    ends = np.concatenate([starts[1:], [len(data)]]).astype(np.int64)     # each line with its newline
    bad = _not_utf8(data, raw, starts, ends, skip)
    text = data
    if len(bad):                         # blanked for the patterns; the line-by-line reader rejects them
        blanked = bytearray(data)
        for i in bad.tolist():
            blanked[starts[i]:ends[i]] = b" " * int(ends[i] - starts[i])
        text = bytes(blanked)
        raw = np.frombuffer(text, dtype=np.uint8)
    buffer = pa.py_buffer(text)
    lines = pa.LargeStringArray.from_buffers(n, pa.py_buffer(np.concatenate([starts, [len(data)]])
                                                            if n else np.zeros(1, np.int64)), buffer)
    canonical = pc.match_substring_regex(lines, _CANONICAL).to_numpy(zero_copy_only=False) if n else \
        np.zeros(0, dtype=bool)
    if len(bad):
        canonical[bad] = False
    tabs = starts + (pc.find_substring(lines, "\t").to_numpy(zero_copy_only=False) if n else 0)
    line, part, time, views, code, names = _canonical(raw, starts[canonical], tabs[canonical],
                                                      first_line + np.flatnonzero(canonical))
    others = np.flatnonzero(~canonical)
    extra = _others(lines, others, set(bad.tolist()), data, starts, ends, source, first_line)
    buffers = [buffer]
    if extra["line"]:                    # the other lines' tuples: subjects in a buffer of their own
        more = block_of(source, [(0, 0, 0, s, c) for s, c in zip(extra["subject"], extra["concept"])], [], [],
                        lambda c: np.zeros(len(c), np.int64))
        buffers.append(more.buffers[0])
        views = np.concatenate([views, more.views])
        views[len(views) - len(more.views):, 2] = np.where(more.views[:, 0] > _INLINE, 1, more.views[:, 2])
        code = np.concatenate([code, len(names) + more.code])
        names = names + more.names
        line = np.concatenate([line, np.array(extra["line"], dtype=np.int64)])
        part = np.concatenate([part, np.array(extra["part"], dtype=np.int64)])
        time = np.concatenate([time, np.array(extra["time"], dtype=np.int64)])
        order = np.lexsort((part, line))
        line, part, time, views, code = line[order], part[order], time[order], views[order], code[order]
    aid = lookup(names)[code] if len(code) else np.zeros(0, np.int64)
    return Block(source, buffers, line, line * 2 + part, time, views, code, names, aid,
                 np.array(extra["punct_line"], dtype=np.int64) * 2, np.array(extra["punct_time"], dtype=np.int64),
                 extra["rejected"])


def _not_utf8(data: bytes, raw: np.ndarray, starts, ends, skip: int) -> np.ndarray:
    """The indices of the lines that are not UTF-8 (decoded one by one only when the block as a whole is not)."""
    try:
        data[skip:].decode("utf-8")
        return np.zeros(0, dtype=np.int64)
    except UnicodeDecodeError:
        pass
    high = np.flatnonzero(np.add.reduceat((raw >= 0x80).astype(np.int64), starts) > 0) if len(starts) else []
    out = []
    for i in high.tolist() if len(high) else []:
        begin = skip if i == 0 else int(starts[i])
        try:
            data[begin:int(ends[i])].decode("utf-8")
        except UnicodeDecodeError:
            out.append(i)
    return np.array(out, dtype=np.int64)


def _canonical(raw: np.ndarray, starts: np.ndarray, tab: np.ndarray, numbers: np.ndarray) -> tuple:
    """The tuples of canonical lines (starting at ``starts`` in ``raw``, their tab at ``tab``), in line order: line,
    part, time, subject views, concept code and the concepts' names."""
    n = len(starts)
    if not n:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, np.zeros((0, 4), "<u4"), z, []
    spaces = np.flatnonzero(raw == 32)
    first = np.searchsorted(spaces, tab)
    s1, s2, s3 = spaces[first], spaces[first + 1], spaces[first + 2]
    time = _times(raw, starts, tab)
    subject = views_of(raw, tab + 2, s1 - tab - 3, 0)
    obj = views_of(raw, s2 + 2, s3 - s2 - 3, 0)
    p_codes, p_names = _encoded(string_view_array(views_of(raw, s1 + 2, s2 - s1 - 3, 0), [pa.py_buffer(raw)]))
    typed = np.array([p == RDF_TYPE for p in p_names], dtype=bool)[p_codes]
    code = np.zeros(n, dtype=np.int64)
    names: list = []
    if typed.any():
        o_codes, names = _encoded(string_view_array(obj[typed], [pa.py_buffer(raw)]))
        code[typed] = o_codes
    role = ~typed
    count = 1 + role.astype(np.int64)
    at = np.repeat(np.arange(n, dtype=np.int64), count)
    part = np.arange(len(at), dtype=np.int64) - (np.cumsum(count) - count)[at]
    views = np.where((part == 1)[:, None], obj[at], subject[at]) if role.any() else subject
    code = code[at]
    if role.any():
        # a role assertion P(a, b): (a, exists P) and (b, exists P^-), named after the block's predicates
        direct = len(names) + p_codes[at]
        names = names + [exists(p) for p in p_names] + [exists_inverse(p) for p in p_names]
        code = np.where(role[at], np.where(part == 1, direct + len(p_names), direct), code)
    return numbers[at], part, time[at], views, code, names


def _encoded(array: pa.Array) -> tuple[np.ndarray, list]:
    """Dictionary codes (numpy) and the distinct strings (Python) of an array."""
    encoded = pc.dictionary_encode(array)
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), \
        encoded.dictionary.cast(pa.large_string()).to_pylist()


def _others(lines, others: np.ndarray, bad: set, data: bytes, starts, ends, source: str, first_line: int) -> dict:
    """The records of the lines that are not canonical: RE2's groups where the line pattern matches (and the line
    holds no U+FFFD), the line-by-line reader for the rest."""
    out = {"line": [], "part": [], "time": [], "subject": [], "concept": [], "punct_line": [], "punct_time": [],
           "rejected": []}
    if not len(others):
        return out
    subset = lines.take(pa.array(others))
    found = pc.extract_regex(subset, _LINE)
    matched = found.is_valid().to_numpy(zero_copy_only=False) & \
        ~pc.match_substring(subset, REPLACEMENT).to_numpy(zero_copy_only=False)
    fields = {name: found.field(name).to_pylist() for name in ("t", "s", "p", "o", "l")} if matched.any() else {}
    texts = subset.to_pylist()
    for j, i in enumerate(others.tolist()):
        number = first_line + i
        if matched[j] and i not in bad:
            t = int(fields["t"][j])
            if not TIME_MIN <= t <= TIME_MAX:
                out["rejected"].append(RejectedRecord(source, number, texts[j].rstrip("\r\n"), OUT_OF_RANGE))
                continue
            o = fields["o"][j]
            mapped = _tuples(t, _bare(fields["s"][j]), _bare(fields["p"][j]), _bare(o) if o else None)
            if mapped is None:
                out["rejected"].append(RejectedRecord(source, number, texts[j].rstrip("\r\n"), LITERAL_TYPE))
                continue
            records = ((item, 1) for item in mapped)
        else:
            if i in bad:
                begin = 0 if i == 0 else int(starts[i])
                text = NotUtf8(data[begin:int(ends[i])].decode("utf-8", errors="replace"))
            else:
                text = texts[j]
            records = tnt_records([text], source, punctuation=True)
        part = 0
        for record in records:
            if record.__class__ is RejectedRecord:
                out["rejected"].append(RejectedRecord(record.source, number, record.text, record.reason))
            elif record.__class__ is Punctuation:
                out["punct_line"].append(number)
                out["punct_time"].append(record.time)
            else:
                item = record[0]
                out["line"].append(number)
                out["part"].append(part)
                out["time"].append(item.time)
                out["subject"].append(item.subject)
                out["concept"].append(item.concept)
                part += 1
    return out
