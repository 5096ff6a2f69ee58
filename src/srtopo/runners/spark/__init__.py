"""Spark Structured Streaming: every pyspark import of the project lives in this package (see docs/spark.md).

``session`` builds the SparkSession, ``sources`` turns source descriptions into streaming DataFrames,
``streaming`` drives micro-batches over the exactly-once ``store`` and the ``sinks``; ``consistency`` and
``sql`` are what consistency topologies run per batch. The runner of ``srtopo.runners.spark.runner`` is the
way in."""
