"""Topologies: the IR, the consistency compilers (NTM, LTM), the builder, balancers, sources, sinks and runners.

    from srtopo.topology import choose_topology, get_runner, RunConfig, TntFiles
    from srtopo.ontology.owl import load_tbox
    topology = choose_topology(load_tbox("examples/tex.ttl"), method="ltm", split=[1, 2])
    result = get_runner("local").run(topology, [TntFiles("examples/tex-stream.tnt")], RunConfig(window=10))
"""
if __name__ != "srtopo.topology":   # setup.cfg maps this folder to srtopo.topology (package_dir)
    raise ImportError(f"{__name__!r} is the folder of the package srtopo.topology: import srtopo.topology")
from srtopo.topology.builder import TopologyBuilder  # noqa: F401,E402
from srtopo.topology.choose import choose_topology, topology_from_tbox  # noqa: F401,E402
from srtopo.topology.compile import compile_ltm, compile_ntm, ltm_n  # noqa: F401,E402
from srtopo.topology.ir import (  # noqa: F401,E402
    AtomSource,
    ConceptSource,
    ConjunctionOp,
    ConsistencyStage,
    InferenceOp,
    ModelOutput,
    PartitionKey,
    ReportOutput,
    RuleStage,
    Topology,
    WindowOp,
)
from srtopo.topology.records import Model, RejectedRecord, Report, StreamTuple  # noqa: F401,E402
from srtopo.topology.runners import RunConfig, get_runner  # noqa: F401,E402
from srtopo.topology.sources import AtomLog, Lines, RdfFiles, SocketLines, Timeline, TntFiles, TupleFiles, Tuples  # noqa: F401,E402


def load_topology(path: str) -> Topology:
    """A topology saved as JSON (``srtopo compile --format json`` or ``Topology.to_json()``)."""
    import json

    from srtopo.errors import TopologyError
    try:
        with open(path, encoding="utf-8") as handle:
            return Topology.from_dict(json.load(handle))
    except OSError as error:
        raise TopologyError(f"cannot read topology: {error.strerror}", file=path) from None
    except json.JSONDecodeError as error:
        raise TopologyError(f"not JSON: {error.msg}", file=path, line=error.lineno, col=error.colno) from None
