"""JSON lines built column by column with Arrow: reports and window state of the columnar plans (the local runner's
columnar plan, Spark's executors and driver).

A line per row printed by Python cost ~1.5 us (a 2M-tuple batch's ~300k reports and 62k state rows: ~0.6 s of
the driver's time); the same lines joined as Arrow columns, in C++, cost a tenth of that, and the file's bytes
are the joined column's data buffer, written without a Python string per line.
"""
from __future__ import annotations

from json.encoder import encode_basestring

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

TEXT = pa.large_string()
#: what a JSON string must escape (a quote, a backslash, a control character)
_ESCAPED = r'["\\\x00-\x1f]'


def quoted(strings) -> pa.Array:
    """Each string as a JSON string literal, as ``json.dumps(s, ensure_ascii=False)`` writes it."""
    strings = pa.array(strings, TEXT) if not isinstance(strings, pa.Array) else strings.cast(TEXT)
    if not len(strings):
        return strings
    plain = joined('"', strings, '"')
    odd = np.flatnonzero(pc.match_substring_regex(strings, _ESCAPED).to_numpy(zero_copy_only=False))
    if not len(odd):
        return plain
    texts = plain.to_pylist()
    for i, s in zip(odd.tolist(), strings.take(pa.array(odd)).to_pylist()):
        texts[i] = encode_basestring(s)
    return pa.array(texts, TEXT)


def numbers(values) -> pa.Array:
    return pc.cast(pa.array(np.asarray(values, dtype=np.int64)), TEXT)


def joined(*parts) -> pa.Array:
    """The parts (columns of one length, or strings repeated on every row) joined row by row."""
    return pc.binary_join_element_wise(*[pa.scalar(p, TEXT) if isinstance(p, str) else p for p in parts],
                                       pa.scalar("", TEXT))


def state_lines(names: pa.Array, subject, time, stage, cid, aid) -> pa.Array:
    """Window state rows as the Spark write stores them (``sql.STORED_STATE_COLUMNS``), one per line; ``names``:
    the subjects' JSON literals, ``subject``: each row's index into them."""
    return joined('{"subject":', names.take(pa.array(subject)), ',"time":', numbers(time), ',"sk":', numbers(stage),
                  ',"cid":', numbers(cid), ',"aid":', numbers(aid), "}\n")


def text(lines: pa.Array) -> memoryview:
    """The bytes of lines that end with a newline: the data buffer of the column, from its first offset to its
    last."""
    lines = lines.cast(TEXT)
    if not len(lines):
        return memoryview(b"")
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset:lines.offset + len(lines) + 1]
    return memoryview(lines.buffers()[2])[int(offsets[0]):int(offsets[-1])]
