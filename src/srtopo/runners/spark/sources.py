"""Stream sources as streaming DataFrames of parsed records, all with one schema.

Columns: src (source index), file, line (1-based line in the file), part (0/1: a role assertion gives two
tuples), ik ('t' tuple, 'x' rejected, 'p' punctuation; with a bounded lateness also 'c', a file's first line
that is blank or a comment, kept for the file's name), time, subject, concept (as asserted), raw (the line,
for rejected records only), reason (why rejected); with a bounded lateness also fo, fk, fst, dsc (what judging
lateness in each source's order needs: ``parse_lines``).

Timestamped N-Triples are parsed inside the JVM: every file is read whole (``wholetext``), split into
lines with their positions (``posexplode``: the line number), and each line is matched ONCE against
``io.tnt.LINE_PATTERN`` by ``regexp_replace`` that rewrites a matching line into its four groups
joined by U+001F (a non-matching line comes back unchanged: that is the malformed test). No Python runs
per row. A line ``# watermark T`` is a punctuation: the source promises no more tuples older than T.
"""
from __future__ import annotations

import os
import string

from srtopo.concepts import RDF_TYPE
from srtopo.errors import UnsupportedByRunner
from srtopo.io.rdf import rdf_file_to_lines
from srtopo.io.sources import AtomLog, Rate, RdfFiles, SocketLines, TntFiles, TupleFiles
from srtopo.io.tnt import (
    INVALID,
    IRI_ESCAPE,
    IRI_ESCAPE_PATTERN,
    LINE_PATTERN,
    LITERAL_TYPE,
    NEGATIVE_TIME,
    NO_DOT,
    NO_STATEMENT,
    NO_TIME,
    NOT_UTF8,
    OUT_OF_RANGE,
    PUNCT_PATTERN,
    REPLACEMENT,
    WS,
    WS_CHARS,
)
from srtopo.io.tsv import REASON as TUPLE_REASON
from srtopo.runners.spark.sql import sql_string as _q

SEP = "\u001f"
NEWLINES = "\n"   # a single-character split takes Java's fast path; a trailing \r is trimmed per line


def _F():
    from pyspark.sql import functions as F
    return F


_WS = _q(WS_CHARS)
_TYPE = _q(RDF_TYPE)


#: what a statement frame carries besides the records' columns (``parse_lines(statements=True)``): the
#: statement of a tuple's line, on its first tuple (part 0) only
STATEMENT_COLUMNS = ("predicate", "object", "literal")


def parse_lines(df, pre_reason: bool = False, ordered: bool = False, statements: bool = False):
    r"""(src, file, line, raw[, pre_reason]) -> records (see module doc). Pure Spark SQL expressions.

    A matching line takes the fast path: one ``regexp_replace`` rewrites it into its five fields (time,
    subject, predicate, object IRI or blank node, literal: LINE_PATTERN's groups without the IRI brackets, so
    no substring work follows), one ``split``, and an ``explode`` of a small int array (0, or 0 and 1 for a
    role assertion). Everything about blank lines, comments, punctuation and reject reasons is evaluated only
    for the lines that do not match (CASE branches are lazy).

    ``ordered`` (a bounded lateness: ``ORDER_COLUMNS`` in; fo, fk, fst and dsc out): the input also
    has each line's file order, file key, first-line flag and the time its previous line starts with; a
    file's first line is kept even when blank or a comment (as a record ``c`` that carries the file's name and
    order), and a line that is not a tuple at or after its previous line's time is marked as a possible
    descent (``dsc``): a file without one is in time order.

    ``statements`` (a chain): a line's first tuple also carries its statement (``STATEMENT_COLUMNS``: the
    predicate, the object IRI or blank node, the literal as written), and a line with an event time below 0 is
    rejected (``io.tnt.NEGATIVE_TIME``), as ``io.tnt.tnt_statements`` does."""
    pre = "pre_reason" if pre_reason else "CAST(NULL AS STRING) AS pre_reason"
    extra = list(ORDER_COLUMNS) if ordered else []
    df = df.selectExpr("src", "file", "line", "raw", pre, *extra,
                       f"regexp_replace(raw, {_q(LINE_PATTERN)}, '$1{SEP}$2$3{SEP}$4{SEP}$5$6{SEP}$7') AS rep")
    # U+FFFD is what the text source decodes bytes that are not UTF-8 into: such a line is rejected, as the
    # local reader rejects it, never taken as data with altered characters. LINE_PATTERN never matches it, so
    # only the lines that did not match are searched for it (searching every line was ~4% of all task CPU)
    df = df.selectExpr("src", "file", "line", "raw", *extra,
                       f"CASE WHEN pre_reason IS NULL AND rep = raw AND contains(raw, {_q(REPLACEMENT)}) "
                       f"THEN {_q(NOT_UTF8)} ELSE pre_reason END AS pre_reason", "rep")
    df = df.selectExpr("src", "file", "line", "raw", *extra, "pre_reason", "rep <> raw AND pre_reason IS NULL AS ok",
                       f"CASE WHEN rep <> raw THEN split(rep, '{SEP}', 5) END AS f")
    # f: 0 time, 1 subject, 2 predicate, 3 object IRI / blank node ('' for a literal), 4 literal ('' or quoted)
    df = df.selectExpr("src", "file", "line", "raw", *extra, "pre_reason", "ok", "try_cast(f[0] AS BIGINT) AS t",
                       "f[1] AS s", "f[2] AS p", "f[3] AS o", f"f[2] = {_TYPE} AS tp", "f[4] <> '' AS lit",
                       *(["f[4] AS l"] if statements else []))
    timed = "t IS NOT NULL AND t >= 0" if statements else "t IS NOT NULL"
    # a role assertion gives two tuples (part 0 and 1); blank lines and comments other than punctuation give
    # none. Skipping them here rather than with a filter matters: Spark pushes a filter below the projections
    # and inlines them into it, which ran the line pattern twice per line (parse 2.3 s -> 1.3 s per 1M lines)
    keep = (f"ok OR pre_reason IS NOT NULL OR NOT (trim(BOTH {_WS} FROM raw) = '' "
            f"OR (startswith(trim(LEADING {_WS} FROM raw), '#') AND NOT raw rlike {_q(PUNCT_PATTERN)}))")
    df = df.selectExpr("*", f"ok AND {timed} AND NOT (tp AND lit) AS good",
                       f"explode(CASE WHEN ok AND {timed} AND NOT tp AND NOT lit THEN array(0, 1) "
                       f"WHEN {keep}{' OR fst' if ordered else ''} THEN array(0) ELSE array() END) AS part")
    punct = f"(NOT ok AND pre_reason IS NULL AND startswith(trim(LEADING {_WS} FROM raw), '#'))"
    skipped = f"NOT ({keep})" if ordered else "false"      # a first line kept only for its file's name
    stripped = f"trim(BOTH {_WS} FROM raw)"
    head = f"split({stripped}, {_q(WS + '+')}, 2)"
    reason = (f"CASE WHEN pre_reason IS NOT NULL THEN pre_reason "
              f"WHEN NOT (get({head}, 0) rlike '^-?[0-9]+$') THEN {_q(NO_TIME)} "
              f"WHEN size({head}) = 1 THEN {_q(NO_STATEMENT)} "
              f"WHEN NOT endswith({stripped}, '.') THEN {_q(NO_DOT)} "
              f"WHEN {stripped} rlike {_q(IRI_ESCAPE_PATTERN)} THEN {_q(IRI_ESCAPE)} "
              f"ELSE {_q(INVALID)} END")
    out = ["src", "file", "line", "part",
           f"CASE WHEN good THEN 't' WHEN {skipped} THEN 'c' WHEN {punct} THEN 'p' ELSE 'x' END AS ik",
           f"CASE WHEN good THEN t WHEN {skipped} THEN NULL WHEN {punct} THEN "
           f"try_cast(regexp_extract(raw, {_q(PUNCT_PATTERN)}, 1) AS BIGINT) END AS time",
           "CASE WHEN NOT good THEN NULL WHEN part = 1 THEN o ELSE s END AS subject",
           "CASE WHEN NOT good THEN NULL WHEN tp THEN o WHEN part = 1 THEN concat('exists-:', p) "
           "ELSE concat('exists:', p) END AS concept",
           f"CASE WHEN good OR {skipped} OR {punct} THEN NULL ELSE trim(TRAILING '\\r' FROM raw) END AS raw",
           f"CASE WHEN good OR {skipped} OR {punct} THEN NULL WHEN ok AND t IS NULL THEN {_q(OUT_OF_RANGE)} "
           + (f"WHEN ok AND tp AND lit THEN {_q(LITERAL_TYPE)} WHEN ok THEN {_q(NEGATIVE_TIME)} " if statements else
              f"WHEN ok THEN {_q(LITERAL_TYPE)} ") + f"ELSE {reason} END AS reason"]
    if statements:
        out += ["CASE WHEN good AND part = 0 THEN p END AS predicate",
                "CASE WHEN good AND part = 0 AND o <> '' THEN o END AS object",
                "CASE WHEN good AND part = 0 AND lit THEN l END AS literal"]
    if ordered:
        # any line but a file's first that is not a tuple at or after its previous line's time: a possible
        # descent (a malformed line or punctuation too, conservatively: a file without one is in time order)
        out += ["fo", "fk", "fst", "(line IS NULL OR line > 1) AND (NOT good OR pt IS NULL OR t < pt) AS dsc"]
    return df.selectExpr(*out)


def _file_reader(spark, path: str, max_files: int | None, glob: str | None, form: str = "text"):
    reader = spark.readStream.format(form)
    if form == "text":
        reader = reader.option("wholetext", "true")
    else:           # a streaming source infers no schema
        reader = reader.schema("path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY")
    if max_files:
        reader = reader.option("maxFilesPerTrigger", str(int(max_files)))
    if glob:
        reader = reader.option("pathGlobFilter", glob)
    if os.path.isfile(path):
        path = exact_file_glob(os.path.abspath(path))
    elif "://" not in path and not path.startswith("file:"):
        path = os.path.abspath(path)    # the JVM's working folder is where it started, not this process's now
        if os.path.isdir(path):         # a folder named dir[1] is that folder, not a pattern matching dir1
            path = "".join("\\" + c if c in _GLOB_CHARS else c for c in path)
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


#: a file's place in its directory's order (``io.sources.file_order``): modification time in milliseconds
FILE_ORDER = "unix_millis(_metadata.file_modification_time)"
#: what a line carries besides (src, file, line, raw) when lateness is judged in each source's order:
#: its file's order and key (a hash of its path), whether it is its file's first line (which names the file
#: in the batch's cache), and the time its previous line starts with (NULL: none, or not a time)
ORDER_COLUMNS = ("fo", "fk", "fst", "pt")


def _file_lines(spark, source, index: int, order: bool = False, previous: bool = False):
    """(src, file, line, raw) of a file source: each file read once, whole, split into numbered lines; with
    ``order`` also fo, the file's modification time in milliseconds (what orders a directory's files); with
    ``previous`` all of ``ORDER_COLUMNS``, the previous line's time read off its text up to the first tab (a
    canonical line's time; anything else gives NULL, a possible descent)."""
    F = _F()
    raw = _file_reader(spark, source.path, source.files_per_batch, source.glob)
    # a byte-order mark before a file's first line is not data (as decoded_lines drops it for the local runner)
    text = F.when(F.col("value").startswith("\ufeff"), F.expr("substring(value, 2)")).otherwise(F.col("value"))
    if previous:
        files = raw.select(F.col("_metadata.file_path").alias("file"), F.expr(FILE_ORDER).alias("fo"),
                           F.expr("xxhash64(_metadata.file_path)").alias("fk"), F.split(text, NEWLINES).alias("arr"))
        lines = files.select("file", "fo", "fk", "arr", F.posexplode("arr").alias("pos", "raw"))
        return lines.selectExpr(f"{int(index)} AS src", "file", "CAST(pos + 1 AS BIGINT) AS line", "raw", "fo", "fk",
                                "pos = 0 AS fst", "try_cast(substring_index(get(arr, pos - 1), '\t', 1) AS BIGINT) AS pt")
    extra = [F.expr(FILE_ORDER).alias("fo")] if order else []
    lines = raw.select(F.col("_metadata.file_path").alias("file"), *extra,
                       F.posexplode(F.split(text, NEWLINES)).alias("pos", "raw"))
    return lines.select(F.lit(index).alias("src"), "file", (F.col("pos") + 1).cast("bigint").alias("line"), "raw",
                        *(["fo"] if order else []))


def _tnt(spark, source: TntFiles, index: int, ordered: bool = False, statements: bool = False):
    return parse_lines(_file_lines(spark, source, index, previous=ordered), ordered=ordered, statements=statements)


def _socket(spark, source: SocketLines, index: int, ordered: bool = False, statements: bool = False):
    F = _F()
    raw = _socket_reader(spark, source.host, str(source.port))
    lines = raw.select(F.lit(index).alias("src"), F.lit(source.describe()).alias("file"),
                       F.lit(None).cast("bigint").alias("line"), F.col("value").alias("raw"))
    if not ordered:
        return parse_lines(lines, statements=statements)
    # no line numbers: the batch numbers the rows of its one partition in arrival order (``SqlBuilder``); every
    # row names the socket and is a possible descent
    lines = lines.selectExpr("*", "CAST(0 AS BIGINT) AS fo", "CAST(0 AS BIGINT) AS fk", "true AS fst",
                             "CAST(NULL AS BIGINT) AS pt")
    return parse_lines(lines, ordered=True, statements=statements)


def _rate(spark, source: Rate, index: int, ordered: bool = False):
    F = _F()
    raw = spark.readStream.format("rate").option("rowsPerSecond", str(int(source.rows_per_second))).load()
    arr = F.array(*[F.lit(c) for c in source.concepts])
    v = F.col("value")
    per = int(source.rows_per_time_unit)
    out = raw.select(
        F.lit(index).alias("src"), F.lit("rate").alias("file"), v.alias("line"), F.lit(0).alias("part"),
        F.lit("t").alias("ik"), (v / per).cast("bigint").alias("time"),
        F.concat(F.lit("http://bench.example/s"), ((v * 7919) % int(source.n_subjects)).cast("string"))
        .alias("subject"),
        F.element_at(arr, (F.pmod(F.hash(v), F.lit(len(source.concepts))) + 1).cast("int")).alias("concept"),
        F.lit(None).cast("string").alias("raw"), F.lit(None).cast("string").alias("reason"))
    if ordered:     # generated in time order: never a descent
        out = out.selectExpr("*", "CAST(0 AS BIGINT) AS fo", "CAST(0 AS BIGINT) AS fk", "false AS fst", "false AS dsc")
    return out


def _rdf(spark, source: RdfFiles, index: int, ordered: bool = False):
    """Files parsed by rdflib in executor Python workers, one call per file, into canonical lines that then
    take the same JVM path as ``.tnt``."""
    F = _F()
    raw = _file_reader(spark, source.path, source.files_per_batch, source.glob)
    files = raw.select(F.col("_metadata.file_path").alias("file"), F.col("value").alias("content"),
                       F.expr(FILE_ORDER).alias("fo"), F.expr("xxhash64(_metadata.file_path)").alias("fk"))
    fmt = source.rdf_format

    def convert(batches):
        import pandas as pd
        for pdf in batches:
            rows = []
            for file_name, content, fo, fk in zip(pdf["file"], pdf["content"], pdf["fo"], pdf["fk"]):
                previous = None
                for n, (i, line, why) in enumerate(rdf_file_to_lines(file_name, content, fmt)):
                    # a graph's lines all have its one time: never a descent
                    rows.append((index, file_name, i, line, why, int(fo), int(fk), n == 0, previous))
                    head = line.split("\t", 1)[0]
                    previous = int(head) if why is None and head.lstrip("-").isdigit() else None
            yield pd.DataFrame(rows, columns=["src", "file", "line", "raw", "pre_reason", "fo", "fk", "fst", "pt"])

    lines = files.mapInPandas(convert, "src INT, file STRING, line BIGINT, raw STRING, pre_reason STRING, "
                                       "fo BIGINT, fk BIGINT, fst BOOLEAN, pt BIGINT")
    if not ordered:
        lines = lines.select("src", "file", "line", "raw", "pre_reason")
    return parse_lines(lines, pre_reason=True, ordered=ordered)


def _tuples(spark, source: TupleFiles, index: int, ordered: bool = False):
    F = _F()
    lines = _file_lines(spark, source, index, previous=ordered)
    skipped = (F.col("raw") == "") | F.col("raw").startswith("#")
    lines = lines.where(~skipped | F.col("fst")) if ordered else lines.where(~skipped)
    cols = F.split("raw", "\t")
    t = F.get(cols, 0).try_cast("bigint")
    ok = (F.size(cols) == 3) & t.isNotNull()
    if ordered:
        ik = F.when(ok, "t").when(skipped, "c").otherwise("x")
        bad = ~ok & ~skipped
    else:
        ik, bad = F.when(ok, "t").otherwise("x"), ~ok
    out = lines.select(
        "src", "file", "line", F.lit(0).alias("part"), ik.alias("ik"),
        F.when(ok, t).alias("time"), F.when(ok, F.get(cols, 1)).alias("subject"),
        F.when(ok, F.get(cols, 2)).alias("concept"), F.when(bad, F.col("raw")).alias("raw"),
        F.when(bad, F.lit(TUPLE_REASON)).alias("reason"),
        *(["fo", "fk", "fst", ((F.col("line") > 1) & (~ok | F.col("pt").isNull() | (t < F.col("pt")))).alias("dsc")]
          if ordered else []))
    return out


def _socket_reader(spark, host: str, port: str):
    """Spark's socket source in ONE partition: it deals a batch's lines round-robin over the default parallelism
    otherwise, and arrival order is the order lateness is decided in (``ir.lateness``)."""
    return spark.readStream.format("socket").option("host", host).option("port", port) \
        .option("numPartitions", "1").load()


def atom_frame(spark, source: AtomLog, index: int):
    """The streaming DataFrame of an atom source's lines (``spark.rules.LINE_COLUMNS``: the batch parses and
    times them): a file or directory read whole per file (numbered lines, with the file's order), or
    ``tcp://HOST:PORT`` (one partition, in arrival order, without line numbers)."""
    F = _F()
    if source.spec.startswith("tcp://"):
        host, _, port = source.spec[len("tcp://"):].rpartition(":")
        raw = _socket_reader(spark, host or "127.0.0.1", port)
        lines = raw.select(F.lit(index).alias("src"), F.lit(source.spec).alias("file"),
                           F.lit(None).cast("bigint").alias("line"), F.col("value").alias("raw"),
                           F.lit(None).cast("bigint").alias("fo"))
    else:
        lines = _file_lines(spark, TntFiles(source.spec, source.files_per_batch), index, order=True)
    return lines.select("src", "file", "line", "raw", F.lit(source.stream_format).alias("fmt"),
                        F.lit(bool(source.duplicates)).alias("dup"), "fo")


READERS = {TntFiles: _tnt, TupleFiles: _tuples, RdfFiles: _rdf, SocketLines: _socket, Rate: _rate}
#: the sources the columnar plan reads in its tasks, and each one's format there (``consistency.partitioned``)
FILE_FORMS = {TntFiles: "tnt", TupleFiles: "tsv", RdfFiles: "rdf"}
#: the columns of ``file_list``: what a micro-batch of the columnar plan is given
FILE_LIST_COLUMNS = ("src", "path", "fo", "length", "form", "rdf_format")


def file_list(spark, source, index: int):
    """The streaming DataFrame of a file source's new files, one row per file (``FILE_LIST_COLUMNS``): Spark's
    ``binaryFile`` source with only the files' metadata selected, so that the JVM lists the files and reads none
    of them (the columnar plan's tasks read them with pyarrow)."""
    F = _F()
    raw = _file_reader(spark, source.path, source.files_per_batch, source.glob, form="binaryFile")
    return raw.select(F.lit(index).alias("src"), F.col("path"),
                      F.expr("unix_millis(modificationTime)").alias("fo"), F.col("length"),
                      F.lit(FILE_FORMS[type(source)]).alias("form"),
                      F.lit(getattr(source, "rdf_format", None)).cast("string").alias("rdf_format"))


def frame(spark, source, index: int, ordered: bool = False):
    """The streaming DataFrame of records (the columns of the module docstring) of one source description
    (``io.sources``); ``ordered``: with what judging lateness in the source's order needs
    (``parse_lines``)."""
    return READERS[type(source)](spark, source, index, ordered)


def statement_frame(spark, source, index: int, ordered: bool = False):
    """The streaming DataFrame of a ``.tnt`` source's records with their statements (a chain's input:
    ``parse_lines(statements=True)``)."""
    readers = {TntFiles: _tnt, SocketLines: _socket}
    if type(source) not in readers:
        raise UnsupportedByRunner(f"{type(source).__name__} sources hold no RDF statements",
                                  hint="give timestamped N-Triples: a .tnt file or directory, or tcp://HOST:PORT")
    return readers[type(source)](spark, source, index, ordered, statements=True)


def refuse_pipe(path: str | None, socket: str) -> None:
    """Spark's file source lists and reads whole files: a named pipe (or any file that is not a regular one)
    would hang it or fail its task."""
    if path and path != "-" and "://" not in path and os.path.exists(path) and not (
            os.path.isfile(path) or os.path.isdir(path)):
        raise UnsupportedByRunner(f"{path} is not a regular file or a directory: the spark runner reads files",
                                  hint=f"read a named pipe with --engine local, or send the stream to {socket}")
