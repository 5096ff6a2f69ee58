"""Runners execute a Topology: ``local`` (reference, single process, the test oracle) and ``spark``."""
