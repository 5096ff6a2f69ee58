"""Streamlog: Datalog over explicitly timestamped streams (Zaniolo, "A Logic-Based Language for Data Streams").

``program`` parses and classifies a program (sequential, strictly sequential, time-warping, blocking, the bistate
version and the XY-stratification test); ``engine`` evaluates it timestamp by timestamp with clingo; ``streams``
reads fact lines and punctuation from one or more sources and merges them (synchronized union, sort-merge, plain
union).
"""
if __name__ != "srtopo.streamlog":   # setup.cfg maps this folder to srtopo.streamlog (package_dir)
    raise ImportError(f"{__name__!r} is the folder of the package srtopo.streamlog: import srtopo.streamlog")

from srtopo.streamlog.program import Program, explain, load_program, parse_program  # noqa: E402,F401
from srtopo.streamlog.streams import UNIONS, Streamlog, run_streams  # noqa: E402,F401
