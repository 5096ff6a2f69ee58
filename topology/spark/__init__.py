"""Spark runtime for consistency topologies (all pyspark imports of the project live here and in
``topology/runners/spark*.py``). See docs/spark.md."""
from srtopo.topology.spark.runner import DEFAULT_PLAN, PLANS, SparkConsistencyRunner  # noqa: F401
from srtopo.topology.spark.sources import (RateSource, RdfSource, SocketSource, TntSource, TupleSource,  # noqa: F401
                                    source_from_spec, write_tuples)
from srtopo.topology.spark.session import get_session  # noqa: F401
