"""DL-Lite TBoxes: the model, OWL loading, PI/NI closures, NI roots and NI groups. Pure Python, no Spark."""
if __name__ != "srtopo.ontology":   # setup.cfg maps this folder to srtopo.ontology (package_dir)
    raise ImportError(f"{__name__!r} is the folder of the package srtopo.ontology: import srtopo.ontology")
from srtopo.ontology.hierarchy import Hierarchy  # noqa: F401
from srtopo.ontology.model import (  # noqa: F401
    LoaderReport, NegativeInclusion, SkippedAxiom, TBox, TripleAccounting)
from srtopo.ontology.nis import NIAnalysis, analyse  # noqa: F401
