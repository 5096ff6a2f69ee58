"""Declare a topology by hand in a few readable lines, validated when built.

    topo = (TopologyBuilder(tbox=tex, name="fig3c")
            .stage("B1", conjunctions=[("Faculty", "Admin")],
                   infer=[("Faculty", "Employee"), ("Admin", "Employee")])
            .stage("B2", conjunctions=[("Student", "Employee"), ("Article", "Book")], infer=[...])
            .stage("B3", conjunctions=[...])
            .build())

With a TBox, concepts may be given by local name (``Person``) or IRI, each conjunction op is labelled
with the stated NI it violates, and stage 1 receives every concept that can take part in a conflict.
By default a stage forwards what it receives except the subclasses it infers from (the paper's
"forwards all other unused streams"); pass ``forward=[...]`` to say exactly what leaves a stage.

With a TBox, ``build`` also checks that the stages detect every pair of the NI closure (``consistency.coverage``):
a topology that misses some is refused, naming one, unless ``build(partial=True)``; then it records how many it
misses, and a run's summary says so.
"""
from __future__ import annotations

from dataclasses import dataclass

from srtopo.concepts import display, local_name
from srtopo.consistency.compile import notes_for, source_for, violated_axiom
from srtopo.consistency.coverage import check_coverage
from srtopo.consistency.nis import NIAnalysis, analyse, pair
from srtopo.consistency.tbox import TBox
from srtopo.errors import TopologyError
from srtopo.ir.topology import ConceptSource, ConjunctionOp, ConsistencyStage, InferenceOp, Topology


@dataclass
class _StageSpec:
    id: str
    conjunctions: list
    infer: list
    forward: list | None
    parallelism: int


class TopologyBuilder:
    def __init__(self, tbox: TBox | NIAnalysis | None = None, name: str = "topology", source_concepts=None):
        self.analysis = None if tbox is None else (tbox if isinstance(tbox, NIAnalysis) else analyse(tbox))
        self.name = name
        self._source_concepts = source_concepts
        self._stages: list[_StageSpec] = []

    def stage(self, stage_id: str, conjunctions=(), infer=(), forward=None, parallelism: int = 1) -> "TopologyBuilder":
        self._stages.append(_StageSpec(stage_id, list(conjunctions), list(infer),
                                       None if forward is None else list(forward), parallelism))
        return self

    # --- resolution --------------------------------------------------------------------------------
    def _resolve(self, name: str, where: str) -> str:
        if self.analysis is None:
            return name
        h = self.analysis.hierarchy
        concepts = self.analysis.tbox.concepts
        if name in concepts:
            return h.rep(name)
        matches = sorted(c for c in concepts if local_name(c) == name or display(c) == name)
        if len(matches) == 1:
            return h.rep(matches[0])
        if not matches:
            raise TopologyError(f"{where}: unknown concept '{name}'",
                                hint="use a class IRI or local name of the TBox, or 'exists p' / 'exists p^-'")
        raise TopologyError(f"{where}: '{name}' is ambiguous ({', '.join(matches)})", hint="use the full IRI")

    def build(self, partial: bool = False) -> Topology:
        """Resolve names, derive what the stages receive and forward, validate (``Topology.validate``) and, with a
        TBox, check that every pair of its NI closure is detected (``partial``: run it even if some are not)."""
        if not self._stages:
            raise TopologyError("a topology needs at least one stage", hint="call .stage(...) before .build()")
        resolved = []
        for spec in self._stages:
            conj = []
            for op in spec.conjunctions:
                a, b = (self._resolve(x, f"stage '{spec.id}' conjunction") for x in op[:2])
                a, b = pair(a, b)
                if len(op) > 2:
                    ni = tuple(op[2])
                elif self.analysis is not None:
                    ni = violated_axiom(self.analysis, (a, b))
                else:
                    ni = (a, b)
                conj.append(ConjunctionOp(a, b, ni))
            infer = [InferenceOp(*(self._resolve(x, f"stage '{spec.id}' inference") for x in op))
                     for op in spec.infer]
            if self.analysis is not None:
                for op in infer:
                    if not self.analysis.hierarchy.is_sub(op.sub, op.sup):
                        raise TopologyError(f"stage '{spec.id}': inference {display(op.sub)} -> {display(op.sup)} "
                                            "is not entailed by the TBox", hint="inference ops follow subclass axioms")
            forward = None if spec.forward is None else \
                [self._resolve(x, f"stage '{spec.id}' forward") for x in spec.forward]
            resolved.append((spec, sorted(set(conj)), sorted(set(infer)), forward))

        if self._source_concepts is not None:
            source = ConceptSource(tuple(sorted(self._resolve(c, "source") for c in self._source_concepts)))
        elif self.analysis is not None:
            source = source_for(self.analysis)
        else:
            first = resolved[0]
            source = ConceptSource(tuple(sorted({c for op in first[1] for c in op.pair} | {op.sub for op in first[2]}
                                                | set(first[3] or ()))))

        stages = []
        received = frozenset(source.concepts)
        for index, (spec, conj, infer, forward) in enumerate(resolved):
            last = index == len(resolved) - 1
            if forward is None:   # the paper's "forwards all other unused streams"
                forward = [] if last else sorted(received - {op.sub for op in infer})
            stage = ConsistencyStage(id=spec.id, inference_ops=tuple(infer), conjunction_ops=tuple(conj),
                                     forwards=tuple(sorted(set(forward))), parallelism=spec.parallelism)
            stages.append(stage)
            received = frozenset(forward) | {op.sup for op in infer}
        notes = None if self.analysis is None else notes_for(self.analysis)
        topology = Topology(source=source, stages=tuple(stages), name=self.name, label="hand", notes=notes).validate()
        return topology if self.analysis is None else check_coverage(topology, self.analysis, partial)
