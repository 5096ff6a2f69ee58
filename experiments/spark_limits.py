"""What Spark and Arrow themselves do with a consistency stream on this machine: the limits a physical plan is
measured against. experiments/README.md, "What each benchmark measures"."""
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


def _arrow_read(files: list[str]) -> int:
    """The tuples of ``files`` read by the columnar reader in this process (concepts looked up in a table)."""
    import numpy as np

    from srtopo.io.tntarrow import read_block
    ids: dict = {}

    def lookup(names):
        return np.array([ids.setdefault(c, len(ids)) for c in names], dtype=np.int64)
    total = 0
    for f in files:
        with open(f, "rb") as handle:
            total += len(read_block(handle.read(), f, lookup))
    return total


_POOL = None


def _arrow_two(_spark, files: list[str], _window) -> int:
    """The same read shared by two worker processes (spawned once, then kept)."""
    global _POOL
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    if _POOL is None:
        _POOL = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    return sum(_POOL.map(_arrow_read, [files[0::2], files[1::2]]))


def _columnar_shuffle(spark, files: list[str], _window) -> int:
    """The columnar plan's read tasks and one shuffle of their rows by subject key; a count per partition."""
    import pandas as pd

    from srtopo.consistency.partitioned import COUNT_SCHEMA, PACKED_SCHEMA, FileToRead, group_text
    from srtopo.runners.spark.consistency import _groups
    parts = int(spark.conf.get("spark.sql.shuffle.partitions"))
    routes = [int(r["id"]) for r in spark.sql(f"SELECT min(id) AS id FROM (SELECT id, pmod(hash(id), {parts}) AS p "
                                              f"FROM range({64 * parts})) GROUP BY p ORDER BY p").collect()]
    group = _groups([FileToRead(f, 0, i) for i, f in enumerate(files)], spark.sparkContext.defaultParallelism)
    topology = _LIMIT_TOPOLOGY

    def read(batches):
        from srtopo.consistency.partitioned import read_packed
        yield from read_packed(batches, topology, 0, routes)

    def count(batches):
        import pyarrow as pa
        from pyspark import TaskContext
        from srtopo.consistency.partitioned import COUNTS, unpacked
        n = unpacked(batches).num_rows
        yield pa.RecordBatch.from_pydict({"partition": [TaskContext.get().partitionId()], "counts": [str(n)]},
                                         schema=COUNTS)
    listing = pd.DataFrame({"files": [group_text(g) for g in group]})
    frame = spark.createDataFrame(listing, "files STRING").mapInArrow(read, PACKED_SCHEMA).repartition(parts, "route")
    return sum(int(r["counts"]) for r in frame.mapInArrow(count, COUNT_SCHEMA).collect())


#: the topology whose concepts the columnar limit queries look up (set by ``measure_limits``)
_LIMIT_TOPOLOGY = None

#: the limit queries, in the order of the table: (name, query(spark, files, window) -> its count); the lines, the
#: tuples, the subjects, the pairs of a subject's tuples in one time bucket (each tuple paired with itself too)
LIMITS = [
    ("pyarrow, one process: read, validate (RE2), parse", lambda _spark, files, _w: _arrow_read(files)),
    ("pyarrow, two processes: the same", _arrow_two),
    ("Spark: the columnar plan's read + one shuffle of its columns", _columnar_shuffle),
    ("Spark: scan and count", lambda spark, files, _w: _lines(spark, files).where("raw <> ''")
        .selectExpr("count(*)", "sum(length(raw))").collect()[0][0]),
    ("Spark: parse (the fused plan's parser)", lambda spark, files, _w: _parsed(spark, files)
        .selectExpr("count_if(ik = 't')", "max(time)", "count(DISTINCT concept)").collect()[0][0]),
    ("Spark: parse and group by subject IRI (one shuffle)", lambda spark, files, _w: _parsed(spark, files).where("ik = 't'")
        .groupBy("subject").agg({"time": "max", "ik": "count"}).selectExpr("count(*)").collect()[0][0]),
    ("Spark: parse and self-join on (subject, time bucket)", _self_join),
]


def measure_limits(spark, files: list[str], lines: int, window: int, repeats: int = 3, topology=None) -> list[dict]:
    """Each limit query over ``files`` (``lines`` lines in all): best of ``repeats`` after one warm-up run;
    ``topology``: whose concepts the columnar queries look up."""
    global _LIMIT_TOPOLOGY
    _LIMIT_TOPOLOGY = topology
    rows = []
    for name, query in LIMITS:
        if topology is None and "columnar" in name:
            continue
        count = query(spark, files, window)
        best = min(timed(query, spark, files, window)[1] for _ in range(repeats))
        rows.append({"query": name, "lines": lines, "count": int(count), "best_s": round(best, 3),
                     "lines_per_s": round(lines / best)})
    return rows

