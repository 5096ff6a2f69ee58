"""The registry of topology kinds: for each, where its compiler, its local executor and its Spark job live.

Runners read this table and never branch on a kind: the local runner calls the kind's local executor, the Spark
runner its Spark job (or declines the kind with ``UnsupportedByRunner`` when it has none). Entries name modules
by their dotted path, so that this table imports none of them: a kind's code is loaded when a topology of that
kind is compiled or run.

Adding a kind means a folder of its own (its IR types in ``srtopo.ir``, its compiler and local executor) and one
entry here; a Spark job, if it has one, goes under ``srtopo.runners.spark`` (the only place that imports pyspark).

A **local executor** is a module with ``SOURCES`` (the source types it reads, from ``srtopo.io.sources``),
``run(topology, sources, config, sink, counters) -> list[BatchMetrics]`` (it fills the ``RunCounters`` it is
given, so a stopped run can say how far it got) and ``stopped_note(counters) -> str``.
A **Spark job** is a module with ``JOB``, an object of the protocol ``srtopo.runners.spark.kind.SparkKind``.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from srtopo.errors import UnsupportedByRunner


@dataclass(frozen=True)
class Kind:
    name: str
    summary: str
    compiler: str                   # "module:function": the source file (TBox, program) and options -> Topology
    local: str                      # the local executor's module
    spark: str | None = None        # the Spark job's module (None: the Spark runner declines the kind)
    program_suffixes: tuple[str, ...] = ()   # ``srtopo compile --program`` files of this kind, by suffix

    def local_executor(self) -> ModuleType:
        return importlib.import_module(self.local)

    def spark_job(self):
        """The kind's Spark job (``SparkKind``), or ``UnsupportedByRunner`` if it has none."""
        if self.spark is None:
            raise UnsupportedByRunner(f"the spark runner does not run {self.name} topologies yet",
                                      hint="use --engine local")
        return importlib.import_module(self.spark).JOB

    def compile(self, path: str, **options):
        module, function = self.compiler.split(":")
        return getattr(importlib.import_module(module), function)(path, **options)


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("consistency", "DL-Lite consistency checking of concept and role assertions, keyed by subject",
         compiler="srtopo.consistency.choose:topology_from_tbox", local="srtopo.consistency.local",
         spark="srtopo.runners.spark.consistency"),
    Kind("rules", "an I-DLV-sr program evaluated one time point at a time, keyed by a program variable",
         compiler="srtopo.rules.compile:topology_from_file", local="srtopo.rules.local",
         spark="srtopo.runners.spark.rules", program_suffixes=(".idlvsr", ".dlv", ".lp", ".asp")),
    Kind("streamlog", "a Streamlog program (Datalog over explicitly timestamped streams), timestamp by timestamp",
         compiler="srtopo.streamlog.compile:topology_from_file", local="srtopo.streamlog.local",
         spark="srtopo.runners.spark.streamlog", program_suffixes=(".sl",)),
    Kind("chain", "a consistency check, then an I-DLV-sr program over the statements it keeps and what the TBox "
                  "entails from them", compiler="srtopo.chain.compile:topology_from_files",
         local="srtopo.chain.local", spark="srtopo.runners.spark.chain"),
)}


def kind_of(topology) -> Kind:
    """The registered kind of a topology (``Topology.kind``)."""
    try:
        return KINDS[topology.kind]
    except KeyError:
        raise UnsupportedByRunner(f"no topology kind {topology.kind!r} is registered",
                                  hint="register it in srtopo.kinds") from None


def program_kind(path: str) -> Kind:
    """The kind of a program file, by its suffix: Streamlog for ``.sl``, otherwise an I-DLV-sr program."""
    lowered = path.lower()
    for kind in KINDS.values():
        if kind.name != "rules" and any(lowered.endswith(s) for s in kind.program_suffixes):
            return kind
    return KINDS["rules"]
