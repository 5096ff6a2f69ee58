"""Topologies: the IR, compilers (NTM, LTM), the builder, balancers and runners (local, spark)."""
from topology.ir import ConjunctionOp, InferenceOp, Source, Stage, Topology  # noqa: F401
from topology.compile import compile_ltm, compile_ntm, ltm_n  # noqa: F401
from topology.builder import TopologyBuilder  # noqa: F401
from topology.reports import Report  # noqa: F401
