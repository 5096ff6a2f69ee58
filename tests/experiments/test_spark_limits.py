"""Spark's limit queries (what bench_consistency measures a plan against) read and parse the stream as the plan
does: their counts are those of the stream, computed here by hand."""
from __future__ import annotations

import random

from experiments.spark_limits import measure_limits
from srtopo.concepts import RDF_TYPE
from srtopo.io.tnt import write_tnt


def test_the_limit_queries_count_the_stream(spark, tmp_path):
    rng = random.Random(4)
    tuples = [(t // 5, f"http://ex.org/s{rng.randrange(12)}", RDF_TYPE, f"http://ex.org/C{rng.randrange(3)}")
              for t in range(300)]
    files = [str(p) for p in write_tnt(str(tmp_path / "in"), tuples, per_file=100)]
    with open(files[1], "a", encoding="utf-8") as handle:
        handle.write("not a statement\n")          # a malformed line: read and parsed, not a tuple
    rows = {r["query"]: r for r in measure_limits(spark, files, 301, window=10, repeats=1)}
    assert rows["Spark: scan and count"]["count"] == 301
    assert rows["Spark: parse (the fused plan's parser)"]["count"] == 300
    assert rows["Spark: parse and group by subject IRI (one shuffle)"]["count"] == len({s for _, s, _, _ in tuples})
    buckets: dict = {}
    for t, s, _, _ in tuples:
        buckets[(s, t // 10)] = buckets.get((s, t // 10), 0) + 1
    assert rows["Spark: parse and self-join on (subject, time bucket)"]["count"] == sum(n * n for n in buckets.values())
    # the columnar reader in one process and in two reads the same tuples, the malformed line left out
    assert rows["pyarrow, one process: read, validate (RE2), parse"]["count"] == 300
    assert rows["pyarrow, two processes: the same"]["count"] == 300
    assert all(r["lines_per_s"] > 0 and r["lines"] == 301 for r in rows.values())
