"""Streamlog: Datalog over explicitly timestamped streams (Zaniolo, "A Logic-Based Language for Data Streams").

``program`` parses and classifies a program (sequential, strictly sequential, time-warping, blocking, the bistate
version and the XY-stratification test); ``evaluate`` evaluates it timestamp by timestamp with clingo; ``streams``
reads fact lines and punctuation from one or more sources and merges them (synchronized union, sort-merge, plain
union).
"""
from srtopo.streamlog.program import Program, explain, load_program, parse_program  # noqa: F401
from srtopo.streamlog.streams import UNIONS, Streamlog, run_streams  # noqa: F401
