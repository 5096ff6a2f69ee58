"""The DL-Lite TBox model over basic concepts (written as strings, see ``srtopo.concepts``)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class NegativeInclusion:
    """DJ(left, right) as stated in the TBox (left may equal right: an unsatisfiable concept)."""
    left: str
    right: str
    source: str = field(default="", compare=False)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.left, self.right)


@dataclass(frozen=True)
class SkippedAxiom:
    """An axiom outside DL-Lite: kept in the loader report, never silently dropped."""
    kind: str
    text: str
    reason: str


@dataclass(frozen=True)
class LoaderReport:
    source: str
    classes: int = 0
    properties: int = 0
    pi_counts: tuple[tuple[str, int], ...] = ()   # (axiom kind, count), e.g. ("subClassOf", 332)
    ni_counts: tuple[tuple[str, int], ...] = ()
    skipped: tuple[SkippedAxiom, ...] = ()

    def skipped_by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for axiom in self.skipped:
            counts[axiom.kind] = counts.get(axiom.kind, 0) + 1
        return dict(sorted(counts.items()))

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "classes": self.classes,
            "properties": self.properties,
            "pis": dict(self.pi_counts),
            "nis": dict(self.ni_counts),
            "skipped_by_kind": self.skipped_by_kind(),
            "skipped": [{"kind": s.kind, "axiom": s.text, "reason": s.reason} for s in self.skipped],
        }

    def to_text(self) -> str:
        lines = [f"loaded {self.source}: {self.classes} classes, {self.properties} properties"]
        pis = ", ".join(f"{k} {v}" for k, v in self.pi_counts) or "none"
        nis = ", ".join(f"{k} {v}" for k, v in self.ni_counts) or "none"
        lines.append(f"  PIs: {sum(v for _, v in self.pi_counts)} ({pis})")
        lines.append(f"  NIs: {sum(v for _, v in self.ni_counts)} ({nis})")
        skipped = self.skipped_by_kind()
        lines.append(f"  skipped (outside DL-Lite): {len(self.skipped)}"
                     + (" (" + ", ".join(f"{k} {v}" for k, v in skipped.items()) + ")" if skipped else ""))
        for axiom in self.skipped:
            lines.append(f"    - [{axiom.kind}] {axiom.text}: {axiom.reason}")
        return "\n".join(lines)


@dataclass(frozen=True)
class TBox:
    """A DL-Lite_R TBox over basic concepts.

    ``pis`` are concept inclusions (sub, super) between basic concepts; role inclusions are already
    expanded into the concept inclusions they entail (P ⊑ Q gives exists P ⊑ exists Q and
    exists P^- ⊑ exists Q^-), and ``role_inclusions`` keeps them for reference.
    """
    concepts: frozenset[str]
    pis: tuple[tuple[str, str], ...]
    nis: tuple[NegativeInclusion, ...]
    role_inclusions: tuple[tuple[str, str], ...] = ()
    name: str = "tbox"
    report: LoaderReport | None = field(default=None, compare=False)

    @staticmethod
    def build(pis=(), nis=(), concepts=(), role_inclusions=(), name: str = "tbox",
              report: LoaderReport | None = None) -> "TBox":
        """Normalise inputs: NIs may be pairs or NegativeInclusion; concepts are collected from axioms."""
        ni_objs = tuple(n if isinstance(n, NegativeInclusion) else NegativeInclusion(n[0], n[1]) for n in nis)
        pi_list = tuple(dict.fromkeys((str(a), str(b)) for a, b in pis))
        all_concepts = set(concepts)
        for a, b in pi_list:
            all_concepts.update((a, b))
        for n in ni_objs:
            all_concepts.update((n.left, n.right))
        return TBox(frozenset(all_concepts), pi_list, tuple(dict.fromkeys(ni_objs)),
                    tuple(role_inclusions), name, report)
