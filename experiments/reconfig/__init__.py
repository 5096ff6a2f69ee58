"""Reconfiguration streams of "Managing caching strategies for stream reasoning with reinforcement learning":
instance generators, the problems' encodings as I-DLV-sr programs, and independent checkers of an answer
(experiments/README.md, "The reconfiguration streams")."""
