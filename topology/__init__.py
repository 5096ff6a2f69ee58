"""Topologies: the IR, compilers (NTM, LTM), the builder, balancers and runners (local, spark)."""
if __name__ != "srtopo.topology":   # setup.cfg maps this folder to srtopo.topology (package_dir)
    raise ImportError(f"{__name__!r} is the folder of the package srtopo.topology: import srtopo.topology")
from srtopo.topology.ir import ConjunctionOp, InferenceOp, Source, Stage, Topology  # noqa: F401
from srtopo.topology.compile import compile_ltm, compile_ntm, ltm_n  # noqa: F401
from srtopo.topology.builder import TopologyBuilder  # noqa: F401
from srtopo.topology.reports import Report  # noqa: F401
