"""srtopo: DL-Lite consistency topologies and I-DLV-sr programs as chains of stages, run on Spark or locally.

Subpackages, by what they are about: ``srtopo.ir`` (the topology IR, records, lateness), ``srtopo.io`` (sources,
sinks, stream formats), ``srtopo.consistency`` (DL-Lite TBoxes and consistency topologies), ``srtopo.rules``
(I-DLV-sr programs), ``srtopo.streamlog`` (Streamlog programs), ``srtopo.runners`` (the runner protocol, the
local runner and ``runners.spark``), ``srtopo.cli`` (the command line) and ``srtopo.testing`` (records in memory
for every runner). This module holds the error hierarchy (one root, ``SrtopoError``).
"""
from srtopo.errors import (  # noqa: F401
    EnvironmentProblem,
    OntologyError,
    ProgramError,
    SrtopoError,
    StreamInputError,
    TopologyError,
    UnsupportedByRunner,
    UsageError,
)

__version__ = "0.1.0"
