"""The topology IR: plain frozen dataclasses, no engine imports.

A Topology is a source, a key and a chain of Stages. Runner contract for a stage, per key (subject):
  * input tuples are (subject, concept, time, asserted concept) whose concept the stage receives;
  * conjunction ops: a tuple whose concept is in some op is cached in the stage's window; a tuple
    (x, X, t) conflicts with a cached or same-batch tuple (x, Y, t') when {X, Y} is an op and
    |t - t'| <= window; the report is due at max(t, t') (the later tuple's time);
  * output to the next stage: for every inference op (X, S) the tuple is re-emitted as S, and if X is
    in ``forwards`` it is emitted unchanged; anything else stops here (already fully checked).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from srtopo.ontology.model import display

SUBJECT = "subject"


@dataclass(frozen=True, order=True)
class InferenceOp:
    """sub -> sup: re-emit a tuple of ``sub`` as a tuple of its superclass ``sup`` for later stages."""
    sub: str
    sup: str


@dataclass(frozen=True, order=True)
class ConjunctionOp:
    """left ∧ right -> inconsistent: ``ni`` is the TBox axiom (as stated) the pair violates."""
    left: str
    right: str
    ni: tuple[str, str] = field(default=("", ""), compare=True)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.left, self.right)


@dataclass(frozen=True)
class Stage:
    id: str
    inference_ops: tuple[InferenceOp, ...] = ()
    conjunction_ops: tuple[ConjunctionOp, ...] = ()
    forwards: tuple[str, ...] = ()
    parallelism: int = 1
    key: str = SUBJECT

    @property
    def cached_concepts(self) -> frozenset[str]:
        """Concepts whose tuples this stage keeps in its window."""
        return frozenset(c for op in self.conjunction_ops for c in op.pair)

    @property
    def emitted_concepts(self) -> frozenset[str]:
        return frozenset(self.forwards) | {op.sup for op in self.inference_ops}


@dataclass(frozen=True)
class Source:
    """Where tuples come from and how asserted concepts enter stage 1.

    ``concepts`` are the representatives stage 1 receives; ``aliases`` maps an asserted concept that
    was collapsed by an equivalence to its representative. Tuples of other concepts cannot take part
    in any conflict and are dropped at the source (counted as irrelevant).
    """
    concepts: tuple[str, ...]
    aliases: tuple[tuple[str, str], ...] = ()
    description: str = "stream of (subject, concept, time) tuples"


@dataclass(frozen=True)
class Topology:
    source: Source
    stages: tuple[Stage, ...]
    key: str = SUBJECT
    name: str = field(default="topology", compare=False)
    plan: str = field(default="", compare=False)
    ni_closure_size: int | None = field(default=None, compare=False)
    ni_roots: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    ni_groups: tuple[tuple[tuple[str, str], ...], ...] = field(default=(), compare=False)

    # --- derived views -------------------------------------------------------------------------
    def stage(self, stage_id: str) -> Stage:
        for stage in self.stages:
            if stage.id == stage_id:
                return stage
        raise KeyError(stage_id)

    def stage_inputs(self) -> list[frozenset[str]]:
        """The concepts each stage receives (stage 1 from the source, then what the previous emits)."""
        inputs = [frozenset(self.source.concepts)]
        for stage in self.stages[:-1]:
            inputs.append(stage.emitted_concepts)
        return inputs

    @property
    def conjunction_counts(self) -> list[int]:
        return [len(s.conjunction_ops) for s in self.stages]

    # --- printing ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "plan": self.plan,
            "key": self.key,
            "ni_closure_size": self.ni_closure_size,
            "ni_roots": [list(r) for r in self.ni_roots],
            "ni_groups": [[list(r) for r in g] for g in self.ni_groups],
            "source": {"concepts": list(self.source.concepts),
                       "aliases": [list(a) for a in self.source.aliases],
                       "description": self.source.description},
            "stages": [{
                "id": s.id,
                "key": s.key,
                "parallelism": s.parallelism,
                "conjunction_ops": [[op.left, op.right] for op in s.conjunction_ops],
                "conjunction_ni": [list(op.ni) for op in s.conjunction_ops],
                "inference_ops": [[op.sub, op.sup] for op in s.inference_ops],
                "forwards": list(s.forwards),
            } for s in self.stages],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @staticmethod
    def from_dict(data: dict) -> "Topology":
        src = data["source"]
        stages = []
        for s in data["stages"]:
            nis = s.get("conjunction_ni") or [["", ""]] * len(s["conjunction_ops"])
            stages.append(Stage(
                id=s["id"], key=s.get("key", SUBJECT), parallelism=int(s.get("parallelism", 1)),
                conjunction_ops=tuple(ConjunctionOp(a, b, tuple(n)) for (a, b), n in zip(s["conjunction_ops"], nis)),
                inference_ops=tuple(InferenceOp(a, b) for a, b in s["inference_ops"]),
                forwards=tuple(s.get("forwards", ())),
            ))
        return Topology(
            source=Source(tuple(src["concepts"]), tuple(tuple(a) for a in src.get("aliases", ())),
                          src.get("description", Source.description)),
            stages=tuple(stages), key=data.get("key", SUBJECT), name=data.get("name", "topology"),
            plan=data.get("plan", ""), ni_closure_size=data.get("ni_closure_size"),
            ni_roots=tuple(tuple(r) for r in data.get("ni_roots", ())),
            ni_groups=tuple(tuple(tuple(r) for r in g) for g in data.get("ni_groups", ())),
        )

    def to_text(self) -> str:
        lines = [f"topology {self.name}" + (f" ({self.plan})" if self.plan else "") + f", keyed by {self.key}"]
        if self.ni_closure_size is not None:
            lines.append(f"  NI closure: {self.ni_closure_size} pairs; NI roots: {len(self.ni_roots)}; "
                         f"NI groups: {len(self.ni_groups)}")
            for i, group in enumerate(self.ni_groups, 1):
                shown = ", ".join(f"{display(a)}/{display(b)}" for a, b in group[:12])
                more = f", ... ({len(group)} in all)" if len(group) > 12 else ""
                lines.append(f"    G{i}: {shown}{more}")
        lines.append(f"  source: {len(self.source.concepts)} concepts, {len(self.source.aliases)} aliases")
        for stage in self.stages:
            lines.append(f"  stage {stage.id}: parallelism {stage.parallelism}, "
                         f"{len(stage.conjunction_ops)} conjunction ops, {len(stage.inference_ops)} inference ops, "
                         f"{len(stage.forwards)} forwarded concepts")
            for op in stage.conjunction_ops[:20]:
                lines.append(f"    ∧ {display(op.left)} ∧ {display(op.right)}  (violates DJ({display(op.ni[0])}, {display(op.ni[1])}))")
            if len(stage.conjunction_ops) > 20:
                lines.append(f"    ... {len(stage.conjunction_ops) - 20} more conjunction ops")
            for op in stage.inference_ops[:20]:
                lines.append(f"    → {display(op.sub)} ⊑ {display(op.sup)}")
            if len(stage.inference_ops) > 20:
                lines.append(f"    ... {len(stage.inference_ops) - 20} more inference ops")
        return "\n".join(lines)

    def to_dot(self) -> str:
        def q(text: str) -> str:
            return '"' + text.replace('"', '\\"') + '"'
        lines = [f"digraph {q(self.name)} {{", "  rankdir=LR;", "  node [shape=box];",
                 f"  source [label={q('source: ' + str(len(self.source.concepts)) + ' concepts')}, shape=ellipse];"]
        previous = "source"
        for stage in self.stages:
            label = (f"{stage.id}\\nparallelism {stage.parallelism}\\n"
                     f"{len(stage.conjunction_ops)} conjunction ops\\n{len(stage.inference_ops)} inference ops")
            lines.append(f"  {q(stage.id)} [label={q(label)}];")
            lines.append(f"  {q(previous)} -> {q(stage.id)} [label={q('key: ' + stage.key)}];")
            previous = stage.id
        lines.append("  reports [shape=ellipse];")
        for stage in self.stages:
            if stage.conjunction_ops:
                lines.append(f"  {q(stage.id)} -> reports [style=dashed];")
        lines.append("}")
        return "\n".join(lines)
