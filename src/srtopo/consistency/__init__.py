"""Consistency checking of DL-Lite streams: the TBox model and its OWL 2 QL loader (``tbox``, ``owl*``), the
PI/NI closures, NI roots and groups (``hierarchy``, ``nis``), the compilers of consistency topologies (``compile``:
NTM and LTM; ``builder``: by hand), the balancers and their cost model (``balance``, ``cost``; ``srtopo.calibration`` measures it),
the one place options become a topology (``choose``) and the class streams with planted violations that
calibration measures on (``generate``). Pure Python, no Spark.

    from srtopo.consistency import choose_topology, load_tbox
    from srtopo.io.sources import TntFiles
    from srtopo.runners import RunConfig, get_runner
    topology = choose_topology(load_tbox("examples/tex.ttl"), method="ltm", split=[1, 2])
    result = get_runner("local").run(topology, [TntFiles("examples/tex-stream.tnt")], RunConfig(window=10))
"""
from srtopo.consistency.builder import TopologyBuilder  # noqa: F401
from srtopo.consistency.choose import choose_topology, topology_from_tbox  # noqa: F401
from srtopo.consistency.compile import compile_ltm, compile_ntm, ltm_n  # noqa: F401
from srtopo.consistency.coverage import check_coverage  # noqa: F401
from srtopo.consistency.hierarchy import Hierarchy  # noqa: F401
from srtopo.consistency.nis import NIAnalysis, analyse  # noqa: F401
from srtopo.consistency.owl import load_tbox  # noqa: F401
from srtopo.consistency.tbox import (  # noqa: F401
    LoaderReport, NegativeInclusion, SkippedAxiom, TBox, TripleAccounting)
