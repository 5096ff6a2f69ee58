"""What Spark itself does with a consistency stream on this machine: the limits a physical plan is measured against.

Batch queries over the same files as the plan, read and parsed as the plan reads them (``wholetext``, split into
numbered lines, ``runners.spark.sources.parse_lines``), in the plan's session with a warm JVM, best of
``repeats``:

* **scan and count**: the files read and split into lines;
* **parse**: every line parsed, the tuples counted and their largest time taken (what the plan's counters need);
* **parse and group by subject**: one shuffle, a count and the largest time per subject;
* **parse and self-join**: each tuple joined with the subject's tuples in its time bucket of ``window`` units,
  the shape of the problem as a self-join states it.

Each row gives the lines and seconds of the query and its lines per second.
"""
from __future__ import annotations

from experiments.common import timed


def _lines(spark, files: list[str]):
    from pyspark.sql import functions as F

    from srtopo.runners.spark.sources import NEWLINES
    raw = spark.read.format("text").option("wholetext", "true").load(files)
    lines = raw.select(F.col("_metadata.file_path").alias("file"),
                       F.posexplode(F.split("value", NEWLINES)).alias("pos", "raw"))
    return lines.selectExpr("0 AS src", "file", "CAST(pos + 1 AS BIGINT) AS line", "raw")


def _parsed(spark, files: list[str]):
    """The files' tuples, parsed as the plan parses them."""
    from srtopo.runners.spark.sources import parse_lines
    # the tuples' columns are consumed by an aggregate, so the parse runs once per line (a filter on the kind
    # would be pushed below the parse and run its pattern twice)
    return parse_lines(_lines(spark, files))


def _self_join(spark, files: list[str], window: int) -> int:
    t = _parsed(spark, files).selectExpr("subject", "concept", "time",
                                         f"CAST(floor(time / {int(window)}) AS BIGINT) AS b", "ik").where("ik = 't'")
    return t.alias("a").join(t.alias("o"), ["subject", "b"]).selectExpr("count(*)").collect()[0][0]


#: the limit queries, in the order of the table: (name, query(spark, files, window) -> its count); the lines, the
#: tuples, the subjects, the pairs of a subject's tuples in one time bucket (each tuple paired with itself too)
LIMITS = [
    ("scan and count", lambda spark, files, _w: _lines(spark, files).where("raw <> ''")
        .selectExpr("count(*)", "sum(length(raw))").collect()[0][0]),
    ("parse", lambda spark, files, _w: _parsed(spark, files)
        .selectExpr("count_if(ik = 't')", "max(time)", "count(DISTINCT concept)").collect()[0][0]),
    ("parse and group by subject (one shuffle)", lambda spark, files, _w: _parsed(spark, files).where("ik = 't'")
        .groupBy("subject").agg({"time": "max", "ik": "count"}).selectExpr("count(*)").collect()[0][0]),
    ("parse and self-join on (subject, time bucket)", _self_join),
]


def measure_limits(spark, files: list[str], lines: int, window: int, repeats: int = 3) -> list[dict]:
    """Each limit query over ``files`` (``lines`` lines in all): best of ``repeats`` after one warm-up run."""
    rows = []
    for name, query in LIMITS:
        count = query(spark, files, window)
        best = min(timed(query, spark, files, window)[1] for _ in range(repeats))
        rows.append({"query": name, "lines": lines, "count": int(count), "best_s": round(best, 3),
                     "lines_per_s": round(lines / best)})
    return rows

