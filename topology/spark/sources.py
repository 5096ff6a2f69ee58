"""Stream sources as streaming DataFrames of parsed records, all with one schema.

Columns: src (source index), file, line (1-based line in the file), part (0/1: a role assertion gives two
tuples), ik ('t' tuple, 'x' rejected, 'p' punctuation), time, subject, concept (as asserted), raw (the
line, for rejected records only), reason (why rejected).

Timestamped N-Triples are parsed inside the JVM: every file is read whole (``wholetext``), split into
lines with their positions (``posexplode``: the line number), and each line is matched ONCE against
``topology.tnt.LINE_PATTERN`` by ``regexp_replace`` that rewrites a matching line into its four groups
joined by U+001F (a non-matching line comes back unchanged: that is the malformed test). No Python runs
per row. A line ``# watermark T`` is a punctuation: the source promises no more tuples older than T.
"""
from __future__ import annotations

import os
import string

from srtopo.concepts import RDF_TYPE
from srtopo.topology.rdf import rdf_file_to_lines
from srtopo.topology.sources import AtomLog, Rate, RdfFiles, SocketLines, TntFiles, TupleFiles
from srtopo.topology.spark.sql import sql_string as _q
from srtopo.topology.tnt import (
    INVALID,
    LINE_PATTERN,
    LITERAL_TYPE,
    NO_DOT,
    NO_STATEMENT,
    NO_TIME,
    NOT_UTF8,
    OUT_OF_RANGE,
    REPLACEMENT,
    WS,
    WS_CHARS,
)
from srtopo.topology.tsv import REASON as TUPLE_REASON

SEP = "\u001f"
PUNCT_PATTERN = r"^[ \t]*#[ \t]*watermark[ \t]+(-?[0-9]+)[ \t\r]*(?![\s\S])"   # (?!...): end of input, see tnt.WS
NEWLINES = "\n"   # a single-character split takes Java's fast path; a trailing \r is trimmed per line


def _F():
    from pyspark.sql import functions as F
    return F


_WS = _q(WS_CHARS)
_TYPE = _q(RDF_TYPE)


def parse_lines(df, pre_reason: bool = False):
    r"""(src, file, line, raw[, pre_reason]) -> records (see module doc). Pure Spark SQL expressions.

    A matching line takes the fast path: one ``regexp_replace`` rewrites it into its five fields (time,
    subject, predicate, object IRI or blank node, literal: LINE_PATTERN's groups without the IRI brackets, so
    no substring work follows), one ``split``, and an ``explode`` of a small int array (0, or 0 and 1 for a
    role assertion). Everything about blank lines, comments, punctuation and reject reasons is evaluated only
    for the lines that do not match (CASE branches are lazy)."""
    pre = "pre_reason" if pre_reason else "CAST(NULL AS STRING) AS pre_reason"
    df = df.selectExpr("src", "file", "line", "raw", pre,
                       f"regexp_replace(raw, {_q(LINE_PATTERN)}, '$1{SEP}$2$3{SEP}$4{SEP}$5$6{SEP}$7') AS rep")
    # U+FFFD is what the text source decodes bytes that are not UTF-8 into: such a line is rejected, as the
    # local reader rejects it, never taken as data with altered characters. LINE_PATTERN never matches it, so
    # only the lines that did not match are searched for it (searching every line was ~4% of all task CPU)
    df = df.selectExpr("src", "file", "line", "raw",
                       f"CASE WHEN pre_reason IS NULL AND rep = raw AND contains(raw, {_q(REPLACEMENT)}) "
                       f"THEN {_q(NOT_UTF8)} ELSE pre_reason END AS pre_reason", "rep")
    df = df.selectExpr("src", "file", "line", "raw", "pre_reason", "rep <> raw AND pre_reason IS NULL AS ok",
                       f"CASE WHEN rep <> raw THEN split(rep, '{SEP}', 5) END AS f")
    # f: 0 time, 1 subject, 2 predicate, 3 object IRI / blank node ('' for a literal), 4 literal ('' or quoted)
    df = df.selectExpr("src", "file", "line", "raw", "pre_reason", "ok", "try_cast(f[0] AS BIGINT) AS t",
                       "f[1] AS s", "f[2] AS p", "f[3] AS o", f"f[2] = {_TYPE} AS tp", "f[4] <> '' AS lit")
    # a role assertion gives two tuples (part 0 and 1); blank lines and comments other than punctuation give
    # none. Skipping them here rather than with a filter matters: Spark pushes a filter below the projections
    # and inlines them into it, which ran the line pattern twice per line (parse 2.3 s -> 1.3 s per 1M lines)
    keep = (f"ok OR pre_reason IS NOT NULL OR NOT (trim(BOTH {_WS} FROM raw) = '' "
            f"OR (startswith(trim(LEADING {_WS} FROM raw), '#') AND NOT raw rlike {_q(PUNCT_PATTERN)}))")
    df = df.selectExpr("*", "ok AND t IS NOT NULL AND NOT (tp AND lit) AS good",
                       "explode(CASE WHEN ok AND t IS NOT NULL AND NOT tp AND NOT lit THEN array(0, 1) "
                       f"WHEN {keep} THEN array(0) ELSE array() END) AS part")
    punct = f"(NOT ok AND pre_reason IS NULL AND startswith(trim(LEADING {_WS} FROM raw), '#'))"
    stripped = f"trim(BOTH {_WS} FROM raw)"
    head = f"split({stripped}, {_q(WS + '+')}, 2)"
    reason = (f"CASE WHEN pre_reason IS NOT NULL THEN pre_reason "
              f"WHEN NOT (get({head}, 0) rlike '^-?[0-9]+$') THEN {_q(NO_TIME)} "
              f"WHEN size({head}) = 1 THEN {_q(NO_STATEMENT)} "
              f"WHEN NOT endswith({stripped}, '.') THEN {_q(NO_DOT)} "
              f"ELSE {_q(INVALID)} END")
    return df.selectExpr(
        "src", "file", "line", "part",
        f"CASE WHEN good THEN 't' WHEN {punct} THEN 'p' ELSE 'x' END AS ik",
        f"CASE WHEN good THEN t WHEN {punct} THEN CAST(regexp_extract(raw, {_q(PUNCT_PATTERN)}, 1) AS BIGINT) END AS time",
        "CASE WHEN NOT good THEN NULL WHEN part = 1 THEN o ELSE s END AS subject",
        "CASE WHEN NOT good THEN NULL WHEN tp THEN o WHEN part = 1 THEN concat('exists-:', p) "
        "ELSE concat('exists:', p) END AS concept",
        f"CASE WHEN good OR {punct} THEN NULL ELSE trim(TRAILING '\\r' FROM raw) END AS raw",
        f"CASE WHEN good OR {punct} THEN NULL WHEN ok AND t IS NULL THEN {_q(OUT_OF_RANGE)} "
        f"WHEN ok THEN {_q(LITERAL_TYPE)} ELSE {reason} END AS reason")


def _file_reader(spark, path: str, max_files: int | None, glob: str | None):
    reader = spark.readStream.format("text").option("wholetext", "true")
    if max_files:
        reader = reader.option("maxFilesPerTrigger", str(int(max_files)))
    if glob:
        reader = reader.option("pathGlobFilter", glob)
    if os.path.isfile(path):
        path = exact_file_glob(os.path.abspath(path))
    elif "://" not in path and not path.startswith("file:"):
        path = os.path.abspath(path)    # the JVM's working folder is where it started, not this process's now
    return reader.load(path)


_GLOB_CHARS = set("{}[]*?\\")


def exact_file_glob(path: str) -> str:
    """A glob that matches exactly one file, whatever lies beside it.

    Spark's file source reads a directory as a table: loading a file's folder with a name filter made it look
    at the folder's subdirectories too, and a run's own ``out/batch=N`` or checkpoint beside the input made
    partition discovery fail (``CONFLICTING_DIRECTORY_STRUCTURES``) on every run after the first. A plain file
    path is refused (its base path must be a directory); a glob is listed as the files it matches. Glob
    characters are escaped, and the last character is written as a glob (``\\.`` or ``[x]``: Hadoop turns
    globs into regular expressions, where an escaped letter is an error) so the path is always a glob."""
    escaped = "".join("\\" + c if c in _GLOB_CHARS else c for c in path[:-1])
    last = path[-1]
    return escaped + ("\\" + last if last in string.punctuation else f"[{last}]")


def _file_lines(spark, source, index: int):
    """(src, file, line, raw) of a file source: each file read once, whole, split into numbered lines."""
    F = _F()
    raw = _file_reader(spark, source.path, source.files_per_batch, source.glob)
    # a byte-order mark before a file's first line is not data (as decoded_lines drops it for the local runner)
    text = F.when(F.col("value").startswith("\ufeff"), F.expr("substring(value, 2)")).otherwise(F.col("value"))
    lines = raw.select(F.col("_metadata.file_path").alias("file"), F.posexplode(F.split(text, NEWLINES)).alias("pos", "raw"))
    return lines.select(F.lit(index).alias("src"), "file", (F.col("pos") + 1).cast("bigint").alias("line"), "raw")


def _tnt(spark, source: TntFiles, index: int):
    return parse_lines(_file_lines(spark, source, index))


def _socket(spark, source: SocketLines, index: int):
    F = _F()
    raw = spark.readStream.format("socket").option("host", source.host).option("port", str(source.port)).load()
    lines = raw.select(F.lit(index).alias("src"), F.lit(source.describe()).alias("file"),
                       F.lit(None).cast("bigint").alias("line"), F.col("value").alias("raw"))
    return parse_lines(lines)


def _rate(spark, source: Rate, index: int):
    F = _F()
    raw = spark.readStream.format("rate").option("rowsPerSecond", str(int(source.rows_per_second))).load()
    arr = F.array(*[F.lit(c) for c in source.concepts])
    v = F.col("value")
    return raw.select(
        F.lit(index).alias("src"), F.lit("rate").alias("file"), v.alias("line"), F.lit(0).alias("part"),
        F.lit("t").alias("ik"), (v / int(source.rows_per_time_unit)).cast("bigint").alias("time"),
        F.concat(F.lit("http://bench.example/s"), ((v * 7919) % int(source.n_subjects)).cast("string"))
        .alias("subject"),
        F.element_at(arr, (F.pmod(F.hash(v), F.lit(len(source.concepts))) + 1).cast("int")).alias("concept"),
        F.lit(None).cast("string").alias("raw"), F.lit(None).cast("string").alias("reason"))


def _rdf(spark, source: RdfFiles, index: int):
    """Files parsed by rdflib in executor Python workers, one call per file, into canonical lines that then
    take the same JVM path as ``.tnt``."""
    F = _F()
    raw = _file_reader(spark, source.path, source.files_per_batch, source.glob)
    files = raw.select(F.col("_metadata.file_path").alias("file"), F.col("value").alias("content"))
    fmt = source.rdf_format

    def convert(batches):
        import pandas as pd
        for pdf in batches:
            rows = []
            for file_name, content in zip(pdf["file"], pdf["content"]):
                for i, line, why in rdf_file_to_lines(file_name, content, fmt):
                    rows.append((index, file_name, i, line, why))
            yield pd.DataFrame(rows, columns=["src", "file", "line", "raw", "pre_reason"])

    lines = files.mapInPandas(convert, "src INT, file STRING, line BIGINT, raw STRING, pre_reason STRING")
    return parse_lines(lines, pre_reason=True)


def _tuples(spark, source: TupleFiles, index: int):
    F = _F()
    lines = _file_lines(spark, source, index)
    lines = lines.where((F.col("raw") != "") & ~F.col("raw").startswith("#"))
    cols = F.split("raw", "\t")
    t = F.get(cols, 0).try_cast("bigint")
    ok = (F.size(cols) == 3) & t.isNotNull()
    return lines.select(
        "src", "file", "line", F.lit(0).alias("part"), F.when(ok, "t").otherwise("x").alias("ik"),
        F.when(ok, t).alias("time"), F.when(ok, F.get(cols, 1)).alias("subject"),
        F.when(ok, F.get(cols, 2)).alias("concept"), F.when(~ok, F.col("raw")).alias("raw"),
        F.when(~ok, F.lit(TUPLE_REASON)).alias("reason"))


def atom_frame(spark, source: AtomLog, index: int):
    """The streaming DataFrame of an atom source's lines (``spark.rules.LINE_COLUMNS``: the batch parses and
    times them): a file or directory read whole per file (numbered lines), or ``tcp://HOST:PORT``."""
    F = _F()
    if source.spec.startswith("tcp://"):
        host, _, port = source.spec[len("tcp://"):].rpartition(":")
        raw = spark.readStream.format("socket").option("host", host or "127.0.0.1").option("port", port).load()
        lines = raw.select(F.lit(index).alias("src"), F.lit(source.spec).alias("file"),
                           F.lit(None).cast("bigint").alias("line"), F.col("value").alias("raw"))
    else:
        lines = _file_lines(spark, TntFiles(source.spec, source.files_per_batch), index)
    return lines.select("src", "file", "line", "raw", F.lit(source.stream_format).alias("fmt"),
                        F.lit(bool(source.duplicates)).alias("dup"))


READERS = {TntFiles: _tnt, TupleFiles: _tuples, RdfFiles: _rdf, SocketLines: _socket, Rate: _rate}


def frame(spark, source, index: int):
    """The streaming DataFrame of records (the columns of the module docstring) of one source description (``topology.sources``)."""
    return READERS[type(source)](spark, source, index)
