"""Shared foundations of the srtopo framework: the error hierarchy and environment checks.

The framework itself lives in the top-level packages ``ontology`` (DL-Lite TBoxes),
``rules`` (I-DLV-sr programs) and ``topology`` (the IR, compilers, balancers and runners).
"""
from srtopo.errors import (  # noqa: F401
    SrtopoError,
    OntologyError,
    ProgramError,
    StreamInputError,
    TopologyError,
    UnsupportedByRunner,
    EnvironmentProblem,
)

__version__ = "0.1.0"
