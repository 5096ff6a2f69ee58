"""The JVM line parser (runners.spark.sources.parse_lines) against the Python reference parser
(io.tnt.parse_tnt_lines) on hand-picked edge cases plus 3,000 random lines built from valid and broken
pieces (fixed seed): same tuples, same rejected lines with the same reasons, punctuation recognised."""
import random
import re

from srtopo.concepts import RDF_TYPE
from srtopo.io.tnt import Punctuation, parse_tnt_lines, tnt_records
from srtopo.runners.spark.sources import PUNCT_PATTERN, parse_lines

FIXED = [
    "", "   ", "\t", "# a comment", "  #another", "# watermark 7", "  #\twatermark -2 \t", "# watermark x",
    "# watermark 99999999999999999999",
    "#watermark 3 4", "5 <http://e.org/a> <http://e.org/p> <http://e.org/b> .",
    "5 <http://e.org/a> <http://e.org/p> <http://e.org/b> .\r", "\t6\t<http://e.org/a>\t<" + RDF_TYPE + ">\t<http://e.org/C> .",
    '7 _:b1 <http://e.org/p> "a \\"quoted\\" literal"@en-GB .', '8 <http://e.org/a> <http://e.org/p> "5"^^<http://x.org/int> .',
    '9 <http://e.org/a> <' + RDF_TYPE + '> "lit" .', "10 <http://e.org/a> <http://e.org/p> <http://e.org/b>",
    "x7 <http://e.org/a> <http://e.org/p> <http://e.org/b> .", "11", "12 ", "13 <bad iri> <http://e.org/p> <http://e.org/b> .",
    "-4 _:x <http://e.org/p> _:y.", "99999999999999999999999 <http://e.org/a> <http://e.org/p> <http://e.org/b> .",
    "14 <http://e.org/a> <http://e.org/p> <http://e.org/b> . trailing",
    # where Python's and Java's regex dialects differ unless the pattern spells its classes out (tnt.WS)
    "15 <http://e.org/a\u00a0b> <http://e.org/p> <http://e.org/b> .",
    "16 <http://e.org/a> <http://e.org/p> <http://e.org/b> .\u2028", "# watermark 9\u2028",
    "\u00a017 <http://e.org/a> <http://e.org/p> <http://e.org/b> .", "18\u00a0<http://e.org/a> <http://e.org/p> <http://e.org/b> .",
    # N-Triples escapes: ECHAR and UCHAR in literals; anything else is an error, as are control characters in IRIs
    '19 <http://e.org/a> <http://e.org/p> "t\\t n\\n \\u00e9 \\U0001F600 \\\\" .', '20 <http://e.org/a> <http://e.org/p> "bad \\o" .',
    "21 <http://e.org/a\x01> <http://e.org/p> <http://e.org/b> .", "22 <http://e.org/a> <http://e.org/p> <> .",
    # U+FFFD (what undecodable bytes become) in an otherwise valid line: rejected as not UTF-8 wherever it is
    "23 <http://e.org/a\ufffd> <http://e.org/p> <http://e.org/b> .", '24 <http://e.org/a> <http://e.org/p> "x\ufffd" .',
    "25 <http://e.org/a> <http://e.org/p> <http://e.org/b> . \ufffd", "\ufffd",
    # a comment after the final dot is whitespace in N-Triples; before it, the statement has no dot
    "26 <http://e.org/a> <http://e.org/p> <http://e.org/b> . # seen at the gate", "27 _:a <http://e.org/p> _:b .#c",
    '28 <http://e.org/a> <http://e.org/p> "# not a comment" .', "29 <http://e.org/a> <http://e.org/p> <http://e.org/b> # .",
]
TIMES = ["5", "-3", "0", "x7", "", "12a", "42"]
SEPS = [" ", "\t", "  ", ""]
SUBJECTS = ["<http://e.org/a>", "_:b1", "<bad iri>", "http://e.org/a", "<>", "_:", "<http://e.org/é>", "<a\u00a0b>"]
PREDICATES = ["<http://e.org/p>", f"<{RDF_TYPE}>", "p", "<a b>", "_:p"]
OBJECTS = ["<http://e.org/C>", "_:x", '"lit"', '"a \\"q\\" b"@en', '"5"^^<http://x.org/int>', '"bad', '"x"@', "<http://e.org/D>",
           '"\\u00e9"', '"\\q"']
ENDINGS = [" .", ".", " . ", "", " . extra", " .\r", "\t.\t", " .", " . # note", " #."]
LEADING = ["", " ", "\t", "#", "# watermark "]


def random_lines(n: int, seed: int) -> list[str]:
    """Each piece is a valid one (the first of its list's valid prefix) 85% of the time, any piece otherwise."""
    rng = random.Random(seed)

    def pick(pieces, valid):
        return rng.choice(pieces[:valid]) if rng.random() < 0.85 else rng.choice(pieces)

    return [pick(LEADING, 3) + pick(TIMES, 3) + pick(SEPS, 3) + pick(SUBJECTS, 2) + pick(SEPS, 3)
            + pick(PREDICATES, 2) + pick(SEPS, 3) + pick(OBJECTS, 5) + pick(ENDINGS, 3) for _ in range(n)]


def python_side(lines):
    rejected = []
    tuples = sorted((t.time, t.subject, t.concept) for t in parse_tnt_lines(lines, "f", rejected))
    # parse_tnt_lines skips every '#' line; punctuation as the local runners read it (beyond 64 bits: ignored)
    punct = sorted(p.time for p in tnt_records(lines, "f", punctuation=True) if isinstance(p, Punctuation))
    assert punct == sorted(t for t in (int(m.group(1)) for m in (re.match(PUNCT_PATTERN, x.rstrip("\r"))
                                                                  for x in lines) if m) if abs(t) < 2 ** 63)
    return tuples, sorted((r.line, r.text, r.reason) for r in rejected), punct


def test_jvm_parser_equals_python_parser(spark):
    lines = FIXED + random_lines(3000, seed=11)
    lines = [x for x in lines if "99999999999999999999999" not in x]   # beyond BIGINT: see the next test
    lines.append("# watermark 99999999999999999999")       # a punctuation beyond BIGINT is ignored on both
    df = spark.createDataFrame([(0, "f", i + 1, x) for i, x in enumerate(lines)],
                               "src INT, file STRING, line BIGINT, raw STRING")
    rows = parse_lines(df).collect()
    tuples = sorted((r.time, r.subject, r.concept) for r in rows if r.ik == "t")
    rejected = sorted((r.line, r.raw, r.reason) for r in rows if r.ik == "x")
    punct = sorted(r.time for r in rows if r.ik == "p" and r.time is not None)
    want_tuples, want_rejected, want_punct = python_side(lines)
    assert len(want_tuples) > 300 and len(want_rejected) > 300 and want_punct   # the fuzz reaches every kind
    assert tuples == want_tuples
    assert rejected == want_rejected
    assert punct == want_punct


def test_event_time_beyond_bigint_is_rejected_with_its_line(spark):
    line = "99999999999999999999999 <http://e.org/a> <http://e.org/p> <http://e.org/b> ."
    df = spark.createDataFrame([(0, "f", 3, line)], "src INT, file STRING, line BIGINT, raw STRING")
    rows = parse_lines(df).collect()
    assert [(r.ik, r.line, r.raw, r.reason) for r in rows] == [("x", 3, line, "event time out of range")]


def test_dialect_and_escape_edge_cases_by_hand(spark):
    """Hand-checked: which of the dialect / escape lines of FIXED are statements (by event time)."""
    lines = [x for x in FIXED if x.lstrip("\u00a0")[:2] in {"15", "16", "17", "18", "19", "20", "21", "22"}]
    df = spark.createDataFrame([(0, "f", i + 1, x) for i, x in enumerate(lines)],
                               "src INT, file STRING, line BIGINT, raw STRING")
    rows = parse_lines(df).collect()
    assert sorted({r.time for r in rows if r.ik == "t"}) == [15, 19, 22]
    assert sorted(r.line for r in rows if r.ik == "x") == [i + 1 for i, x in enumerate(lines)
                                                          if not x.startswith(("15", "19", "22"))]
    assert {r.subject for r in rows if r.ik == "t" and r.time == 22} == {"http://e.org/a", ""}


def test_long_literals_parse_in_both_readers(spark):
    """Literals of a megabyte, plain and full of escapes: the JVM's regex once recursed per character and failed
    the task (StackOverflowError) beyond a few thousand."""
    lines = [f'{i} <http://e.org/a> <http://e.org/p> "{body}" .' for i, body in
             enumerate(["x" * 1_000_000, "\\n\\u00e9" * 100_000, "y" * 3000 + "\\" + "z" * 3000])]
    lines.append('3 <http://e.org/a> <http://e.org/p> "' + "a" * 100_000 + '\\q" .')   # a bad escape at the end
    df = spark.createDataFrame([(0, "f", i + 1, x) for i, x in enumerate(lines)],
                               "src INT, file STRING, line BIGINT, raw STRING")
    rows = parse_lines(df).collect()
    assert sorted(r.time for r in rows if r.ik == "t") == [0, 1]
    assert [r.line for r in rows if r.ik == "x"] == [3, 4]
    tuples, rejected, _ = python_side(lines)
    assert sorted(t for t, _, _ in tuples) == [0, 1] and [line for line, _, _ in rejected] == [3, 4]


def test_lines_end_at_newline_only_in_both_readers(spark, tmp_path):
    """A lone \\r is whitespace inside a line for the Spark source (split on \\n) and for read_tnt alike."""
    from srtopo.io.tnt import read_tnt
    text = ("5 <http://e.org/a> <http://e.org/p> <http://e.org/b> .\r\n"
            "6 <http://e.org/a>\r<http://e.org/p> <http://e.org/b> .\n"
            "7 <http://e.org/a> <http://e.org/p>\r\n")
    path = tmp_path / "s.tnt"
    path.write_bytes(text.encode())
    rejected = []
    local = sorted((t.time, t.subject, t.concept) for t in read_tnt(str(path), rejected))
    df = spark.createDataFrame([(0, "f", i + 1, x) for i, x in enumerate(text.split("\n"))],
                               "src INT, file STRING, line BIGINT, raw STRING")
    rows = parse_lines(df).collect()
    assert sorted((r.time, r.subject, r.concept) for r in rows if r.ik == "t") == local
    assert {t for t, _, _ in local} == {5, 6}
    assert [r.line for r in rejected] == [r.line for r in rows if r.ik == "x"] == [3]


def test_comments_after_the_dot_by_hand():
    """N-Triples treats a comment as whitespace: after the final dot it is allowed, before it the dot is missing,
    and a '#' inside a literal is text."""
    lines = [x for x in FIXED if x[:2] in {"26", "27", "28", "29"}]
    rejected = []
    tuples = parse_tnt_lines(lines, "f", rejected)
    assert sorted({t.time for t in tuples}) == [26, 27, 28]
    assert [r.line for r in rejected] == [4]
