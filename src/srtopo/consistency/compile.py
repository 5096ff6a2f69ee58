"""Compilers from a DL-Lite TBox to topologies: NTM (Fig. 3a of
"Distributed Stream Consistency Checking") and LTM (its Algorithm 1).

Both are the same pure pass over the NI analysis: a *split* assigns consecutive NI groups to stages
(NTM is the single stage holding every group). For stage s with roots R_s and received concepts V_s:

  * conjunction ops = the closure of R_s restricted to V_s (classes handled earlier arrive as their
    superclasses, so the closure "excludes the classes processed in preceding bolts");
  * every received concept X leaves as the minimal elements of {Y : X ⊑* Y, Y a class of a later
    stage's roots}: X itself when a later root needs it (forwarded), its nearest needed
    superclasses otherwise (inference ops; this covers the paper's FemaleEmployee case and chains
    such as Faculty -> Employee -> Person inside one stage), nothing when no later root lies above.

Completeness: if (X, Y) conflict through a root (A, B) of stage k, the images of X and Y that reach
stage k are still below A and B, so stage k's closure contains them. Soundness: images are
superclasses of what was asserted.
"""
from __future__ import annotations

from collections.abc import Sequence

from srtopo.consistency.nis import NIAnalysis, Pair, analyse, closure_of, dominated
from srtopo.consistency.tbox import TBox
from srtopo.errors import TopologyError
from srtopo.ir.topology import ConceptSource, ConjunctionOp, ConsistencyNotes, ConsistencyStage, InferenceOp, Topology


def as_analysis(tbox_or_analysis: TBox | NIAnalysis) -> NIAnalysis:
    return tbox_or_analysis if isinstance(tbox_or_analysis, NIAnalysis) else analyse(tbox_or_analysis)


def violated_axiom(analysis: NIAnalysis, conj: Pair) -> tuple[str, str]:
    """The stated axiom a conjunction pair violates: of the roots above it, the one whose axiom comes first by (left
    IRI, right IRI). Its images at a later stage lie under fewer roots, never others, so the least NI over every
    stage where a pair of tuples meets is the one its concepts give in NTM, whatever the split."""
    for root in analysis.roots_by_axiom:
        if dominated(analysis.hierarchy, conj, root):
            axiom = analysis.axiom(root)
            return (axiom.left, axiom.right)
    raise TopologyError(f"conjunction {conj} violates no NI of the TBox",
                        hint="a conjunction op must pair subconcepts of a disjointness axiom")


def source_for(analysis: NIAnalysis) -> ConceptSource:
    h = analysis.hierarchy
    concepts = tuple(sorted(analysis.relevant_concepts()))
    relevant = set(concepts)
    aliases = tuple(sorted((m, rep) for rep, members in h.equivalences().items() if rep in relevant
                           for m in members if m != rep))
    return ConceptSource(concepts=concepts, aliases=aliases)


def normalise_split(split: Sequence[int], n_groups: int) -> tuple[int, ...]:
    split = tuple(int(x) for x in split)
    if not split or any(x < 0 for x in split) or sum(split) != n_groups:
        raise TopologyError(
            f"split {','.join(map(str, split)) or '(empty)'} does not cover the {n_groups} NI groups",
            hint=f"give non-negative counts of consecutive groups per stage summing to {n_groups}, "
                 f"e.g. --split 1,{max(n_groups - 1, 0)}")
    return split


def _parallelism(parallelism: int | Sequence[int], n_stages: int) -> tuple[int, ...]:
    values = (parallelism,) * n_stages if isinstance(parallelism, int) else tuple(parallelism)
    if len(values) != n_stages or any(int(p) < 1 for p in values):
        raise TopologyError(f"parallelism {values} does not give a positive task count for each of the "
                            f"{n_stages} stages")
    return tuple(int(p) for p in values)


def compile_split(tbox_or_analysis: TBox | NIAnalysis, split: Sequence[int],
                  parallelism: int | Sequence[int] = 1, label: str = "", name: str | None = None) -> Topology:
    analysis = as_analysis(tbox_or_analysis)
    h = analysis.hierarchy
    split = normalise_split(split, len(analysis.groups))
    tasks = _parallelism(parallelism, len(split))
    stage_roots: list[tuple[Pair, ...]] = []
    start = 0
    for count in split:
        stage_roots.append(tuple(r for g in analysis.groups[start:start + count] for r in g))
        start += count
    source = source_for(analysis)
    received = frozenset(source.concepts)
    stages: list[ConsistencyStage] = []
    for index, roots in enumerate(stage_roots):
        conj = sorted(closure_of(h, roots, visible=received))
        later = {c for rs in stage_roots[index + 1:] for r in rs for c in r}
        forwards: set[str] = set()
        inferences: set[InferenceOp] = set()
        emitted: set[str] = set()
        if later:
            for concept in received:
                targets = h.minimal(h.supers(concept) & later)
                emitted |= targets
                for target in targets:
                    if target == concept:
                        forwards.add(concept)
                    else:
                        inferences.add(InferenceOp(concept, target))
        stages.append(ConsistencyStage(
            id=f"B{index + 1}",
            inference_ops=tuple(sorted(inferences)),
            conjunction_ops=tuple(ConjunctionOp(a, b, violated_axiom(analysis, (a, b))) for a, b in conj),
            forwards=tuple(sorted(forwards)),
            parallelism=tasks[index],
        ))
        received = frozenset(emitted)
    return Topology(source=source, stages=tuple(stages), name=name or analysis.tbox.name, label=label,
                    notes=notes_for(analysis))


def notes_for(analysis: NIAnalysis) -> ConsistencyNotes:
    return ConsistencyNotes(len(analysis.closure), analysis.roots, analysis.groups)


def compile_ntm(tbox_or_analysis: TBox | NIAnalysis, parallelism: int = 1, name: str | None = None) -> Topology:
    """NTM: the whole NI closure as conjunction ops of one stage."""
    analysis = as_analysis(tbox_or_analysis)
    return compile_split(analysis, [len(analysis.groups)], parallelism, label="ntm", name=name)


def compile_ltm(tbox_or_analysis: TBox | NIAnalysis, split: Sequence[int],
                parallelism: int | Sequence[int] = 1, name: str | None = None) -> Topology:
    """LTM: ``split[i]`` consecutive NI groups form stage i (``[n, rest]`` is the paper's LTM-n)."""
    analysis = as_analysis(tbox_or_analysis)
    split = normalise_split(split, len(analysis.groups))
    return compile_split(analysis, split, parallelism, label=ltm_label(split), name=name)


def ltm_n(tbox_or_analysis: TBox | NIAnalysis, n: int, parallelism: int | Sequence[int] = 1) -> Topology:
    """The paper's two-stage LTM-n: the first n groups in B1, the rest in B2."""
    analysis = as_analysis(tbox_or_analysis)
    k = len(analysis.groups)
    if not 0 <= n <= k:
        raise TopologyError(f"LTM-{n} needs 0 <= n <= {k} (the number of NI groups)")
    return compile_split(analysis, [n, k - n], parallelism, label=f"ltm-{n}")


def ltm_label(split: Sequence[int]) -> str:
    return "ltm-" + ",".join(map(str, split))


def split_label(split: Sequence[int]) -> str:
    """The study's name of a split: ``ntm`` for one stage, the paper's ``ltm-n`` for two, else ``ltm_label``."""
    return "ntm" if len(split) == 1 else f"ltm-{split[0]}" if len(split) == 2 else ltm_label(split)
