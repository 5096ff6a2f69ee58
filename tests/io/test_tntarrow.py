"""The columnar reader of timestamped N-Triples (``io.tntarrow``) against the line-by-line reader
(``io.tnt.tnt_records``): RE2's pattern (``LINE_PATTERN_RE2``) accepts exactly the lines the Python pattern
accepts, with the same groups, and the canonical pattern accepts a part of them; a block of bytes gives the line
reader's tuples, punctuations and rejected records (line, text, reason), on random and hostile lines, with byte-order
marks, CRLF, lines that are not UTF-8 and a 50 MB line."""
from __future__ import annotations

import random
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from experiments.hostile import TNT, clean_tnt, hostile_lines, mixed
from srtopo.io.tnt import (
    CANONICAL_PATTERN_RE2,
    LINE_PATTERN,
    LINE_PATTERN_RE2,
    Punctuation,
    decoded_lines,
    format_tnt,
    tnt_records,
)
from srtopo.io.tntarrow import read_block
from srtopo.ir.records import RejectedRecord
from tests.randomgen import malformed_stream, random_tnt_line

PYTHON = re.compile(LINE_PATTERN)


def _python_groups(line: str):
    """The Python pattern's terms as written (time, subject, predicate, object IRI or blank node, literal), or None."""
    m = PYTHON.match(line)
    if m is None:
        return None
    t, s_iri, s_bnode, p, o_iri, o_bnode, literal = m.groups()
    return (t, f"<{s_iri}>" if s_iri is not None else s_bnode, f"<{p}>",
            f"<{o_iri}>" if o_iri is not None else (o_bnode or ""), literal or "")


def _lines(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = [random_tnt_line(rng) for _ in range(n)]
    out += [line.decode("utf-8", errors="replace") for _kind, line in hostile_lines(TNT, 2 * len(TNT), seed)]
    out += malformed_stream(random.Random(seed), 200, bad=0.3)
    return [line for line in out if "\n" not in line]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_re2_pattern_accepts_exactly_the_lines_of_the_python_pattern(seed):
    lines = _lines(3000, seed)
    array = pa.array(lines, pa.large_string())
    found = pc.extract_regex(array, LINE_PATTERN_RE2)
    matched = found.is_valid().to_pylist()
    with_newline = pc.match_substring_regex(pa.array([x + "\n" for x in lines]), LINE_PATTERN_RE2[:-2] + r"\n?\z")
    canonical = pc.match_substring_regex(array, CANONICAL_PATTERN_RE2).to_pylist()
    groups = list(zip(*(found.field(g).to_pylist() for g in ("t", "s", "p", "o", "l"))))
    accepted = 0
    for i, line in enumerate(lines):
        expected = _python_groups(line)
        assert matched[i] == (expected is not None), repr(line)
        assert with_newline[i].as_py() == matched[i], repr(line)
        if expected is not None:
            accepted += 1
            assert groups[i] == expected, repr(line)
        if canonical[i]:        # canonical lines are lines of the pattern, with an IRI object and a short time
            assert expected is not None and expected[3].startswith("<") and len(expected[0].lstrip("-")) <= 18
    assert 0.2 * len(lines) < accepted < 0.9 * len(lines)      # both outcomes are exercised
    assert sum(canonical) > 0.05 * len(lines)


def reference(data: bytes, source: str, first: int = 1) -> tuple:
    """The line reader's records of a block (as a file is read: lines split at \\n, decoded one by one)."""
    parts = data.split(b"\n")
    raw = [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    tuples, punctuations, rejected = [], [], []
    for r in tnt_records(decoded_lines(raw), source, True):
        if isinstance(r, RejectedRecord):
            rejected.append((r.source, r.line, r.text, r.reason))
        elif isinstance(r, Punctuation):
            punctuations.append((r.line, r.time))
        else:
            tuples.append((r[1], r[0].time, r[0].subject, r[0].concept))
    return tuples, punctuations, rejected


def columnar(data: bytes, source: str) -> tuple:
    ids: dict = {}

    def lookup(names):
        return np.array([ids.setdefault(c, len(ids)) for c in names], dtype=np.int64)
    block = read_block(data, source, lookup)
    names = {v: k for k, v in ids.items()}
    subjects = block.subjects().cast(pa.large_string()).to_pylist()
    tuples = [(line, t, s, names[a]) for line, t, s, a in
              zip(block.line.tolist(), block.time.tolist(), subjects, block.aid.tolist())]
    assert [block.names[c] for c in block.code.tolist()] == [t[3] for t in tuples]
    assert (np.diff(block.order) > 0).all() and ((block.order // 2) == block.line).all()
    return (tuples, list(zip((block.punct_order // 2).tolist(), block.punct_time.tolist())),
            [(r.source, r.line, r.text, r.reason) for r in block.rejected])


def _blocks():
    clean = clean_tnt(2000, 1)
    lines, _where = mixed(clean, hostile_lines(TNT, 200, 2), 3)
    rng = random.Random(4)
    randoms = [random_tnt_line(rng).encode("utf-8") for _ in range(3000)]
    roles = [format_tnt(t, f"http://e.org/s{t % 7}", "http://e.org/knows", f"http://e.org/s{t % 5}").encode()
             for t in range(300)]
    yield "hostile", b"\n".join(lines) + b"\n"
    yield "random", b"\n".join(randoms)
    yield "roles and classes", b"\n".join(roles + clean[:300]) + b"\n"
    yield "byte-order mark", b"\xef\xbb\xbf" + b"\n".join(clean[:50]) + b"\n"
    yield "byte-order mark on a bad first line", b"\xef\xbb\xbf\xff" + b"\n".join(clean[:5])
    yield "two byte-order marks", b"\xef\xbb\xbf\xef\xbb\xbf" + b"\n".join(clean[:5])
    yield "CRLF", b"\r\n".join(clean[:100] + roles[:50]) + b"\r\n"
    yield "lone CR inside lines", b"\n".join(x.replace(b"\t", b"\r\t", 1) for x in clean[:50])
    yield "blank lines and comments", b"\n\n# c\n" + b"\n\n".join(clean[:20]) + b"\n\n"
    yield "punctuation", b"\n".join(clean[:10] + [b"# watermark 4", b"  # watermark -2\r"] + clean[10:20])
    yield "not UTF-8 everywhere", b"\n".join(x[:20] + b"\xc3" + x[20:] if i % 3 == 0 else x
                                             for i, x in enumerate(clean[:60]))
    yield "empty", b""
    yield "one newline", b"\n"


@pytest.mark.parametrize("name,data", list(_blocks()), ids=[name for name, _ in _blocks()])
def test_a_block_gives_the_records_of_the_line_reader(name, data):
    assert columnar(data, "f.tnt") == reference(data, "f.tnt")


def test_lines_of_50_megabytes():
    """A 50 MB literal parses, a 50 MB broken line is one rejected record, and the lines around them are read."""
    big = b"x" * (50 << 20)
    lines = [b"1\t<http://e.org/a> <http://e.org/p> \"" + big + b"\" .", b"2\t<http://e.org/a> <http://e.org/p> <" + big,
             format_tnt(3, "http://e.org/a", "http://e.org/p", "http://e.org/b").encode()]
    data = b"\n".join(lines) + b"\n"
    got = columnar(data, "big.tnt")
    assert got == reference(data, "big.tnt")
    assert [t[0] for t in got[0]] == [1, 3, 3] and [r[1] for r in got[2]] == [2]
