"""The DL-Lite TBox model over basic concepts (written as strings, see ``srtopo.concepts``)."""
from __future__ import annotations

from dataclasses import dataclass, field

from srtopo.concepts import EXISTS_INV, exists, role_of


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
    """An axiom, or the part of one, that DL-Lite cannot state: kept in the loader report, never silently dropped.

    ``part`` names the lost part when the rest of the axiom was used (empty: the whole axiom); ``triples`` are
    the RDF triples of the axiom, so a reasoner can be given what was skipped."""
    kind: str
    text: str
    reason: str
    part: str = ""
    triples: frozenset = field(default=frozenset(), compare=False, repr=False)

    def describe(self) -> str:
        """The axiom, and the part of it that was lost when that is not the whole right side."""
        return f"{self.text} (lost: {self.part})" if self.part and self.part != self.text else self.text


#: the categories every triple of an ontology file falls into (``TripleAccounting``)
TRIPLE_CATEGORIES = ("used", "skipped", "declarations", "annotations")


@dataclass(frozen=True)
class TripleAccounting:
    """Every triple of the file in exactly one category: used for a PI or NI (or an axiom DL-Lite states
    exactly, such as ``A ⊑ owl:Thing``), skipped (listed in the report with a reason), a declaration, or an
    annotation. Triples are kept as the parser gave them (rdflib terms)."""
    used: frozenset = frozenset()
    skipped: frozenset = frozenset()
    declarations: frozenset = frozenset()
    annotations: frozenset = frozenset()

    def counts(self) -> tuple[tuple[str, int], ...]:
        return tuple((name, len(getattr(self, name))) for name in TRIPLE_CATEGORIES)

    def all(self) -> frozenset:
        return self.used | self.skipped | self.declarations | self.annotations


@dataclass(frozen=True)
class LoaderReport:
    source: str
    classes: int = 0         # named classes the file declares or its axioms use
    properties: int = 0      # object and data properties, likewise
    pi_counts: tuple[tuple[str, int], ...] = ()   # (axiom kind, count), e.g. ("subClassOf", 332)
    ni_counts: tuple[tuple[str, int], ...] = ()
    skipped: tuple[SkippedAxiom, ...] = ()
    triples: tuple[tuple[str, int], ...] = ()     # (category, count): TripleAccounting.counts()
    accounting: TripleAccounting | None = field(default=None, compare=False, repr=False)

    def skipped_by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for axiom in self.skipped:
            counts[axiom.kind] = counts.get(axiom.kind, 0) + 1
        return dict(sorted(counts.items()))

    def skipped_groups(self) -> dict[tuple[str, str], list[SkippedAxiom]]:
        """(kind, reason) -> the skipped axioms, in the order the loader met them."""
        groups: dict[tuple[str, str], list[SkippedAxiom]] = {}
        for axiom in self.skipped:
            groups.setdefault((axiom.kind, axiom.reason), []).append(axiom)
        return dict(sorted(groups.items()))

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "classes": self.classes,
            "properties": self.properties,
            "pis": dict(self.pi_counts),
            "nis": dict(self.ni_counts),
            "triples": dict(self.triples),
            "skipped_by_kind": self.skipped_by_kind(),
            "skipped": [{"kind": s.kind, "axiom": s.text, "reason": s.reason, **({"lost": s.part} if s.part else {})}
                        for s in self.skipped],
        }

    def to_text(self, verbose: bool = False, examples: int = 3) -> str:
        """The summary ``compile`` prints: one line per (kind, reason) of skipped axioms with a count and at most
        ``examples`` of them (a real ontology skips hundreds alike); ``verbose`` lists every one."""
        lines = [f"loaded {self.source}: {self.classes} classes, {self.properties} properties"]
        pis = ", ".join(f"{k} {v}" for k, v in self.pi_counts) or "none"
        nis = ", ".join(f"{k} {v}" for k, v in self.ni_counts) or "none"
        lines.append(f"  PIs: {sum(v for _, v in self.pi_counts)} ({pis})")
        lines.append(f"  NIs: {sum(v for _, v in self.ni_counts)} ({nis})")
        if self.triples:
            lines.append(f"  triples: {sum(v for _, v in self.triples)} ("
                         + ", ".join(f"{k} {v}" for k, v in self.triples) + ")")
        skipped = self.skipped_by_kind()
        lines.append(f"  skipped (outside DL-Lite): {len(self.skipped)}"
                     + (" (" + ", ".join(f"{k} {v}" for k, v in skipped.items()) + ")" if skipped else ""))
        for (kind, reason), axioms in self.skipped_groups().items():
            if verbose:
                lines.extend(f"    - [{kind}] {axiom.describe()}: {reason}" for axiom in axioms)
                continue
            shown = " | ".join(axiom.describe() for axiom in axioms[:examples])
            more = f" | ... {len(axioms) - examples} more" if len(axioms) > examples else ""
            lines.append(f"    - [{kind}] {reason}: {len(axioms)}: {shown}{more}")
        return "\n".join(lines)


@dataclass(frozen=True)
class TBox:
    """A DL-Lite_R TBox over basic concepts.

    ``pis`` are concept inclusions (sub, super) between basic concepts; role inclusions are already
    expanded into the concept inclusions they entail (P ⊑ Q gives exists P ⊑ exists Q and
    exists P^- ⊑ exists Q^-), and ``role_inclusions`` keeps them for reference. ``roles`` are the inclusions
    R ⊑ S between object role expressions as stated (sub-properties, equivalent, inverse and symmetric
    properties), each role written as its ∃ concept (``exists:P`` for P, ``exists-:P`` for P⁻): the role
    hierarchy, which the concept inclusions alone do not give back (∃P ⊑ ∃Q may come from ∃P ⊑ A ⊑ ∃Q).
    ``object_properties`` are the properties that take individuals as objects.
    """
    concepts: frozenset[str]
    pis: tuple[tuple[str, str], ...]
    nis: tuple[NegativeInclusion, ...]
    role_inclusions: tuple[tuple[str, str], ...] = ()
    name: str = "tbox"
    report: LoaderReport | None = field(default=None, compare=False)
    roles: tuple[tuple[str, str], ...] = ()
    object_properties: frozenset[str] = frozenset()

    @staticmethod
    def build(pis=(), nis=(), concepts=(), role_inclusions=(), name: str = "tbox",
              report: LoaderReport | None = None, roles=None, object_properties=None) -> "TBox":
        """Normalise inputs: NIs may be pairs or NegativeInclusion; concepts are collected from axioms. Without
        ``roles``, the role hierarchy is ``role_inclusions`` (P ⊑ Q between named properties); without
        ``object_properties``, they are the properties of the role hierarchy and of the ∃P⁻ concepts."""
        ni_objs = tuple(n if isinstance(n, NegativeInclusion) else NegativeInclusion(n[0], n[1]) for n in nis)
        pi_list = tuple(dict.fromkeys((str(a), str(b)) for a, b in pis))
        all_concepts = set(concepts)
        for a, b in pi_list:
            all_concepts.update((a, b))
        for n in ni_objs:
            all_concepts.update((n.left, n.right))
        if roles is None:
            roles = [(exists(p), exists(q)) for p, q in role_inclusions]
        roles = tuple(dict.fromkeys((str(a), str(b)) for a, b in roles))
        if object_properties is None:
            object_properties = {role_of(r)[0] for pair in roles for r in pair}
            object_properties |= {role_of(c)[0] for c in all_concepts if c.startswith(EXISTS_INV)}
        return TBox(frozenset(all_concepts), pi_list, tuple(dict.fromkeys(ni_objs)),
                    tuple(role_inclusions), name, report, roles, frozenset(object_properties))
