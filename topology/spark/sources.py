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
import re
from dataclasses import dataclass, field

from srtopo.topology.spark.plan import sql_string as _q
from srtopo.topology.tnt import LINE_PATTERN, RDF_TYPE, WS, WS_CHARS

SEP = "\u001f"
PUNCT_PATTERN = r"^[ \t]*#[ \t]*watermark[ \t]+(-?[0-9]+)[ \t\r]*(?![\s\S])"   # (?!...): end of input, see tnt.WS
NEWLINES = "\n"   # a single-character split takes Java's fast path; a trailing \r is trimmed per line
RECORD_COLUMNS = ["src", "file", "line", "part", "ik", "time", "subject", "concept", "raw", "reason"]


def _F():
    from pyspark.sql import functions as F
    return F


_WS = _q(WS_CHARS)
_TYPE = _q(RDF_TYPE)
_NO_DOT = "N-Triples statement does not end with ' .'"
_INVALID = ("not a valid N-Triples statement (subject: IRI or blank node; predicate: IRI; "
            "object: IRI, blank node or literal)")


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
    df = df.selectExpr("src", "file", "line", "raw", "pre_reason", "rep <> raw AND pre_reason IS NULL AS ok",
                       f"CASE WHEN rep <> raw THEN split(rep, '{SEP}', 5) END AS f")
    # blank lines and comments other than punctuation are skipped (evaluated only off the fast path)
    df = df.where(f"ok OR pre_reason IS NOT NULL OR NOT (trim(BOTH {_WS} FROM raw) = '' "
                  f"OR (startswith(trim(LEADING {_WS} FROM raw), '#') AND NOT raw rlike {_q(PUNCT_PATTERN)}))")
    # f: 0 time, 1 subject, 2 predicate, 3 object IRI / blank node ('' for a literal), 4 literal ('' or quoted)
    df = df.selectExpr("src", "file", "line", "raw", "pre_reason", "ok", "try_cast(f[0] AS BIGINT) AS t",
                       "f[1] AS s", "f[2] AS p", "f[3] AS o", f"f[2] = {_TYPE} AS tp", "f[4] <> '' AS lit")
    df = df.selectExpr("*", "ok AND t IS NOT NULL AND NOT (tp AND lit) AS good",
                       "explode(CASE WHEN ok AND t IS NOT NULL AND NOT tp AND NOT lit THEN array(0, 1) "
                       "ELSE array(0) END) AS part")
    punct = f"(NOT ok AND pre_reason IS NULL AND startswith(trim(LEADING {_WS} FROM raw), '#'))"
    stripped = f"trim(BOTH {_WS} FROM raw)"
    head = f"split({stripped}, {_q(WS + '+')}, 2)"
    reason = (f"CASE WHEN pre_reason IS NOT NULL THEN pre_reason "
              f"WHEN NOT (get({head}, 0) rlike '^-?[0-9]+$') THEN 'does not start with an integer event time' "
              f"WHEN size({head}) = 1 THEN 'no N-Triples statement after the event time' "
              f"WHEN NOT endswith({stripped}, '.') THEN {_q(_NO_DOT)} "
              f"ELSE {_q(_INVALID)} END")
    return df.selectExpr(
        "src", "file", "line", "part",
        f"CASE WHEN good THEN 't' WHEN {punct} THEN 'p' ELSE 'x' END AS ik",
        f"CASE WHEN good THEN t WHEN {punct} THEN CAST(regexp_extract(raw, {_q(PUNCT_PATTERN)}, 1) AS BIGINT) END AS time",
        "CASE WHEN NOT good THEN NULL WHEN part = 1 THEN o ELSE s END AS subject",
        "CASE WHEN NOT good THEN NULL WHEN tp THEN o WHEN part = 1 THEN concat('exists-:', p) "
        "ELSE concat('exists:', p) END AS concept",
        f"CASE WHEN good OR {punct} THEN NULL ELSE trim(TRAILING '\\r' FROM raw) END AS raw",
        f"CASE WHEN good OR {punct} THEN NULL WHEN ok AND t IS NULL THEN 'event time out of range' "
        f"WHEN ok THEN 'rdf:type with a literal object' ELSE {reason} END AS reason")


def _load_path(path: str) -> str:
    return path


def _file_reader(spark, path: str, max_files: int | None, glob: str | None):
    reader = spark.readStream.format("text").option("wholetext", "true")
    if max_files:
        reader = reader.option("maxFilesPerTrigger", str(int(max_files)))
    if glob:
        reader = reader.option("pathGlobFilter", glob)
    if os.path.isfile(path):
        reader = reader.option("pathGlobFilter", os.path.basename(path))
        path = os.path.dirname(os.path.abspath(path)) or "."
    return reader.load(path)


@dataclass
class TntSource:
    """A directory watched for new ``.tnt`` files (or one file); each file is read once, whole."""
    path: str
    max_files_per_trigger: int | None = None
    glob: str | None = None
    name: str = ""

    def frame(self, spark, index: int):
        F = _F()
        raw = _file_reader(spark, self.path, self.max_files_per_trigger, self.glob)
        lines = raw.select(F.col("_metadata.file_path").alias("file"),
                           F.posexplode(F.split("value", NEWLINES)).alias("pos", "raw"))
        lines = lines.select(F.lit(index).alias("src"), "file", (F.col("pos") + 1).cast("bigint").alias("line"),
                             "raw")
        return parse_lines(lines)

    def describe(self) -> str:
        return f"tnt:{self.path}"


@dataclass
class SocketSource:
    """Lines of timestamped N-Triples from a TCP socket (not replayable: no exactly-once, no line numbers)."""
    host: str
    port: int
    name: str = ""

    def frame(self, spark, index: int):
        F = _F()
        raw = spark.readStream.format("socket").option("host", self.host).option("port", str(self.port)).load()
        lines = raw.select(F.lit(index).alias("src"), F.lit(f"socket:{self.host}:{self.port}").alias("file"),
                           F.lit(None).cast("bigint").alias("line"), F.col("value").alias("raw"))
        return parse_lines(lines)

    def describe(self) -> str:
        return f"socket:{self.host}:{self.port}"


@dataclass
class RateSource:
    """Spark's rate source turned into synthetic tuples (benchmarks): row v -> subject v*7919 mod n_subjects,
    concept ``concepts[hash(v) mod len]``, time v div rows_per_time_unit."""
    rows_per_second: int
    concepts: list
    n_subjects: int = 10000
    rows_per_time_unit: int = 1000
    name: str = ""

    def frame(self, spark, index: int):
        F = _F()
        raw = spark.readStream.format("rate").option("rowsPerSecond", str(int(self.rows_per_second))).load()
        arr = F.array(*[F.lit(c) for c in self.concepts])
        v = F.col("value")
        return raw.select(
            F.lit(index).alias("src"), F.lit("rate").alias("file"), v.alias("line"), F.lit(0).alias("part"),
            F.lit("t").alias("ik"), (v / int(self.rows_per_time_unit)).cast("bigint").alias("time"),
            F.concat(F.lit("http://bench.example/s"), ((v * 7919) % int(self.n_subjects)).cast("string"))
            .alias("subject"),
            F.element_at(arr, (F.pmod(F.hash(v), F.lit(len(self.concepts))) + 1).cast("int")).alias("concept"),
            F.lit(None).cast("string").alias("raw"), F.lit(None).cast("string").alias("reason"))

    def describe(self) -> str:
        return f"rate:{self.rows_per_second}/s"


# --- RDF files in any format rdflib reads: one timestamped graph per file ---------------------------------

PROV_GENERATED = "http://www.w3.org/ns/prov#generatedAtTime"
TIME_IN_NAME = re.compile(r"(\d+)(?!.*\d)")


def graph_time(graph, file_name: str) -> int | None:
    """The graph's event time: an integer ``prov:generatedAtTime`` literal (an xsd:dateTime counts in
    epoch seconds), else the last integer in the file name (``obs-0042.ttl`` -> 42)."""
    from rdflib import URIRef
    import datetime
    for value in graph.objects(None, URIRef(PROV_GENERATED)):
        py = value.toPython() if hasattr(value, "toPython") else value
        if isinstance(py, bool):
            continue
        if isinstance(py, int):
            return int(py)
        if isinstance(py, datetime.datetime):
            if py.tzinfo is None:
                py = py.replace(tzinfo=datetime.timezone.utc)
            return int(py.timestamp())
        try:
            return int(str(py))
        except ValueError:
            continue
    match = TIME_IN_NAME.search(os.path.splitext(os.path.basename(file_name))[0])
    return int(match.group(1)) if match else None


def rdf_file_to_lines(file_name: str, content: str, rdf_format: str | None = None) -> list[tuple[int, str, str]]:
    """(index, tnt line, reason) for one RDF file; reason set (and line empty) when the file is unusable."""
    from rdflib import BNode, Graph, Literal, URIRef
    from rdflib.util import guess_format
    from srtopo.topology.tnt import format_tnt
    fmt = rdf_format or guess_format(file_name) or "turtle"
    graph = Graph()
    try:
        graph.parse(data=content, format=fmt)
    except Exception as error:  # noqa: BLE001 - reported as a rejected record, never fatal
        return [(1, content[:200], f"not parseable as {fmt}: {str(error).splitlines()[0][:300]}")]
    time = graph_time(graph, file_name)
    if time is None:
        return [(1, content[:200], "no event time: add prov:generatedAtTime or an integer to the file name")]
    out = []
    for i, (s, p, o) in enumerate(sorted(graph, key=lambda t: tuple(str(x) for x in t)), 1):
        if str(p) == PROV_GENERATED:
            continue
        def term(x):
            if isinstance(x, BNode):
                return f"_:{x}"
            if isinstance(x, Literal):
                return x.n3()
            return str(x)
        out.append((i, format_tnt(time, term(s), str(p), term(o)), None))
    return out


@dataclass
class RdfSource:
    """A directory of RDF files (Turtle, RDF/XML, N-Triples, JSON-LD, ... whatever rdflib reads), one
    timestamped graph per file. Files are parsed by rdflib in executor Python workers, one call per
    file, into canonical lines that then take the same JVM path as ``.tnt``."""
    path: str
    rdf_format: str | None = None
    max_files_per_trigger: int | None = None
    glob: str | None = None
    name: str = ""

    def frame(self, spark, index: int):
        F = _F()
        raw = _file_reader(spark, self.path, self.max_files_per_trigger, self.glob)
        files = raw.select(F.col("_metadata.file_path").alias("file"), F.col("value").alias("content"))
        fmt = self.rdf_format

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

    def describe(self) -> str:
        return f"rdf:{self.path}"


def source_from_spec(spec: str, max_files_per_trigger: int | None = None):
    """``DIR|FILE`` (tnt), ``tnt:PATH``, ``tsv:PATH`` (tuples), ``rdf:PATH`` or ``rdf[FORMAT]:PATH``, ``socket:HOST:PORT``."""
    if spec.startswith("socket:"):
        _, host, port = spec.split(":", 2)
        return SocketSource(host, int(port))
    if spec.startswith("rdf"):
        head, path = spec.split(":", 1)
        fmt = head[4:-1] if head.startswith("rdf[") else None
        return RdfSource(path, rdf_format=fmt, max_files_per_trigger=max_files_per_trigger)
    if spec.startswith("tsv:"):
        return TupleSource(spec[4:], max_files_per_trigger=max_files_per_trigger)
    if spec.startswith("tnt:"):
        spec = spec[4:]
    return TntSource(spec, max_files_per_trigger=max_files_per_trigger)


@dataclass
class TupleSource:
    """Tab-separated tuples ``time<TAB>subject<TAB>concept`` (a directory or one file): the IR's input
    without RDF, for tests and benchmarks (any concept string, e.g. ``exists-:P``)."""
    path: str
    max_files_per_trigger: int | None = None
    glob: str | None = None
    name: str = ""

    def frame(self, spark, index: int):
        F = _F()
        raw = _file_reader(spark, self.path, self.max_files_per_trigger, self.glob)
        lines = raw.select(F.col("_metadata.file_path").alias("file"),
                           F.posexplode(F.split("value", NEWLINES)).alias("pos", "raw"))
        lines = lines.where((F.col("raw") != "") & ~F.col("raw").startswith("#"))
        cols = F.split("raw", "\t")
        t = F.get(cols, 0).try_cast("bigint")
        ok = (F.size(cols) == 3) & t.isNotNull()
        return lines.select(
            F.lit(index).alias("src"), "file", (F.col("pos") + 1).cast("bigint").alias("line"),
            F.lit(0).alias("part"), F.when(ok, "t").otherwise("x").alias("ik"), F.when(ok, t).alias("time"),
            F.when(ok, F.get(cols, 1)).alias("subject"), F.when(ok, F.get(cols, 2)).alias("concept"),
            F.when(~ok, F.col("raw")).alias("raw"),
            F.when(~ok, F.lit("expected: integer time, subject, concept separated by tabs")).alias("reason"))

    def describe(self) -> str:
        return f"tsv:{self.path}"


def write_tuples(path: str, tuples, mtime: float | None = None) -> None:
    """Write (subject, concept, time) tuples in TupleSource's format (helper for tests and benchmarks)."""
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")   # hidden: not picked up
    with open(tmp, "w", encoding="utf-8") as handle:
        for t in tuples:
            handle.write(f"{int(t[2])}\t{t[0]}\t{t[1]}\n")
    os.replace(tmp, path)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
