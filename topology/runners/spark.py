"""Python API of the Spark engine.

    from srtopo.topology.runners.spark import SparkRunner, TntSource, build_topology
    topo = build_topology("univ.owl", method="ltm", split=[1, 2])
    runner = SparkRunner(topo, window=30, lateness=5)            # SparkSession: given or local[*]
    query = runner.start([TntSource("stream/")], out="reports/", checkpoint="ckpt/")
    ...; runner.reports()  # DataFrame;  runner.iter_reports()  # dicts
"""
from __future__ import annotations

import json

from srtopo.topology.ir import Topology
from srtopo.topology.spark import (DEFAULT_PLAN, PLANS, RateSource, RdfSource, SocketSource, TntSource,  # noqa: F401
                            TupleSource, get_session, source_from_spec, write_tuples)
from srtopo.topology.spark.runner import SparkConsistencyRunner

SparkRunner = SparkConsistencyRunner


def build_topology(tbox_path: str, method: str = "ltm", split=None, parallelism=1) -> Topology:
    """Load an OWL TBox and compile NTM or LTM (``split``: NI groups per stage; default: the paper's LTM-1)."""
    from srtopo.ontology.nis import analyse
    from srtopo.ontology.owl import load_tbox
    from srtopo.topology.compile import compile_ltm, compile_ntm, ltm_n
    analysis = analyse(load_tbox(tbox_path))
    if method == "ntm" or not analysis.groups:
        return compile_ntm(analysis, parallelism=parallelism)
    if split:
        return compile_ltm(analysis, split, parallelism)
    return ltm_n(analysis, min(1, len(analysis.groups)), parallelism)


def load_topology(path: str) -> Topology:
    """A topology saved as JSON (``srtopo compile --format json`` or ``Topology.to_json()``)."""
    with open(path, encoding="utf-8") as handle:
        return Topology.from_dict(json.load(handle))
