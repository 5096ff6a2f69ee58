"""DL-Lite TBoxes: the model, OWL loading, PI/NI closures, NI roots and NI groups. Pure Python, no Spark."""
from ontology.model import (  # noqa: F401
    TBox, NegativeInclusion, LoaderReport, SkippedAxiom,
    exists, exists_inverse, is_exists, role_of, display,
)
from ontology.hierarchy import Hierarchy  # noqa: F401
from ontology.nis import NIAnalysis, analyse  # noqa: F401
