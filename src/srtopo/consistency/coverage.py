"""Whether a consistency topology detects every conflict its TBox makes: the check a topology built by hand (or
read from JSON) must pass before it runs.

A pair (X, Y) of the NI closure is *covered* when some stage k receives X as some X' and Y as some Y' (what the
inference ops and forwards of the stages before k make of them: ``Topology.route``) and has a conjunction op on
(X', Y'). Every topology the compilers make covers the whole closure; one declared by hand may leave pairs out,
and then runs only when the user says it is partial (``TopologyBuilder.build(partial=True)``, ``srtopo check
--topology T.json --partial``): its notes record how many pairs no stage checks, and a run's summary says so.
"""
from __future__ import annotations

from dataclasses import replace

from srtopo.concepts import display
from srtopo.consistency.compile import as_analysis, notes_for
from srtopo.consistency.nis import NIAnalysis, Pair, pair
from srtopo.consistency.tbox import TBox
from srtopo.errors import TopologyError
from srtopo.ir.topology import Topology


def unchecked_pairs(topology: Topology, analysis: NIAnalysis) -> list[Pair]:
    """The pairs of the NI closure no stage checks, the stated NIs (roots) first, then in sorted order."""
    ops = [{pair(op.left, op.right) for op in stage.conjunction_ops} for stage in topology.stages]
    routes: dict[str, tuple] = {}

    def route(concept: str) -> tuple:
        found = routes.get(concept)
        if found is None:
            found = routes[concept] = topology.route(concept)
        return found

    missing = []
    for x, y in analysis.closure:
        rx, ry = route(x), route(y)
        if not any(pair(a, b) in ops[k] for k in range(min(len(rx), len(ry))) for a in rx[k] for b in ry[k]):
            missing.append((x, y))
    roots = set(analysis.roots)
    return sorted(missing, key=lambda p: (p not in roots, p))


def _unsound(topology: Topology, analysis: NIAnalysis) -> str | None:
    """The first operation that is no consequence of the TBox, described, or None."""
    h = analysis.hierarchy
    closure = analysis.closure
    for stage in topology.stages:
        for op in stage.conjunction_ops:
            if pair(h.rep(op.left), h.rep(op.right)) not in closure:
                return (f"stage '{stage.id}': conjunction {display(op.left)} ∧ {display(op.right)} is no pair of the "
                        "TBox's NI closure (it would report consistent individuals)")
        for op in stage.inference_ops:
            if not h.is_sub(op.sub, op.sup):
                return f"stage '{stage.id}': inference {display(op.sub)} -> {display(op.sup)} is not entailed by the TBox"
    return None


def check_coverage(topology: Topology, tbox: TBox | NIAnalysis, partial: bool = False) -> Topology:
    """``topology`` with its notes saying how many pairs of the NI closure it leaves unchecked, once it is known to
    report only what ``tbox`` makes inconsistent and to detect every conflict of it; a topology that misses some is
    refused (naming one pair and how many) unless ``partial``."""
    analysis = as_analysis(tbox)
    unsound = _unsound(topology, analysis)
    if unsound:
        raise TopologyError(f"topology '{topology.name}': {unsound}",
                            hint="pair subconcepts of a disjointness axiom; infer along subclass axioms")
    missing = unchecked_pairs(topology, analysis)
    notes = topology.notes if topology.notes is not None else notes_for(analysis)
    if missing and not partial:
        x, y = missing[0]
        raise TopologyError(
            f"topology '{topology.name}' leaves {len(missing)} of the {len(analysis.closure)} pairs of the NI closure "
            f"unchecked, among them {display(x)} ∧ {display(y)}: no stage receives both with a conjunction op on them",
            hint="add a conjunction op for it, or the inference ops that bring both concepts to a stage that has one "
                 "(srtopo compile prints a complete plan); or accept a partial topology (build(partial=True), "
                 "srtopo check --partial)")
    return replace(topology, notes=replace(notes, ni_closure_size=len(analysis.closure), unchecked=len(missing)))
