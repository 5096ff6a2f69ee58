"""Chains: a DL-Lite consistency check, then an I-DLV-sr program over what the TBox entails from the statements the
check did not reject, as one topology of the IR.

"Distributed Stream Consistency Checking" motivates the check with noise that makes a reasoner's results wrong;
a chain runs the reasoner on the consistent part of the stream only, saturated with the TBox:

    from srtopo.chain import chain
    from srtopo.consistency import topology_from_tbox
    from srtopo.rules.compile import topology_from_file
    topology = chain(topology_from_tbox("T.ttl"), topology_from_file("P.idlvsr"), "T.ttl", inconsistent="drop")
    get_runner("local").run(topology, [TntFiles("S.tnt")], RunConfig(window=10, lateness=0))

A chain is the consistency topology's stages, one saturation stage (``chain.entail``) and the rules topology's
stages; docs/reasoning.md ("Reasoning over what an ontology entails") states what the program sees.
"""
from __future__ import annotations

from srtopo.chain.entail import STAGE_ID, saturation_stage
from srtopo.errors import TopologyError
from srtopo.ir.topology import ChainNotes, ChainOutput, StatementSource, Topology

__all__ = ["chain", "saturation_stage", "program_reads_triples"]


def chain(consistency: Topology, rules: Topology, tbox, inconsistent: str = "drop",
          name: str | None = None) -> Topology:
    """The chain of a consistency topology and a rules topology over a TBox (a ``TBox`` or the path of an OWL
    file: the one the consistency topology was compiled from, whose entailments the saturation stage adds).
    ``inconsistent``: ``drop`` withholds the statements of individuals with a report at their time point,
    ``keep`` withholds nothing."""
    if consistency.kind != "consistency" or rules.kind != "rules":
        raise TopologyError(f"a chain is a consistency topology then a rules topology, not a {consistency.kind} "
                            f"then a {rules.kind} one", hint="chain(topology_from_tbox(T), topology_from_file(P), T)")
    if isinstance(tbox, str):
        from srtopo.consistency.owl import load_tbox
        tbox = load_tbox(tbox)
    taken = {s.id for s in consistency.stages} | {s.id for s in rules.stages}
    stage_id = STAGE_ID
    while stage_id in taken:
        stage_id += "'"
    saturation = saturation_stage(tbox, inconsistent, stage_id)
    return Topology(StatementSource(consistency.source, rules.source),
                    consistency.stages + (saturation,) + rules.stages,
                    ChainOutput(consistency.output, rules.output), name=name or rules.name,
                    label=f"{consistency.label}+{rules.label}",
                    notes=ChainNotes(tbox.name, consistency.notes, rules.notes)).validate()


def program_reads_triples(topology: Topology) -> bool:
    """Whether a chain's program (or a rules topology) reads ``triple/3``, the one predicate a chain feeds."""
    rules = topology.parts()[2] if topology.kind == "chain" else topology
    return any("triple/3" in set(s.inputs) | {w.observed for w in s.windows} for s in rules.stages)
