"""srtopo: DL-Lite consistency topologies and I-DLV-sr programs as chains of stages, run on Spark or locally.

Subpackages: ``srtopo.ontology`` (DL-Lite TBoxes), ``srtopo.rules`` (I-DLV-sr programs), ``srtopo.topology``
(the IR, compilers, balancers, sources, sinks and runners), ``srtopo.experiments`` (the papers' experiments),
``srtopo.cli`` (the command line) and ``srtopo.testing`` (records in memory for every runner). This module
holds the error hierarchy (one root, ``SrtopoError``).
"""
from srtopo.errors import (  # noqa: F401
    EnvironmentProblem,
    OntologyError,
    ProgramError,
    SrtopoError,
    StreamInputError,
    TopologyError,
    UnsupportedByRunner,
)

__version__ = "0.1.0"
