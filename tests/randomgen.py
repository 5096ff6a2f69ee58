"""Random DL-Lite TBoxes and streams for differential tests (fixed seeds by the caller), and several random
cases merged into ONE topology (one Spark query checks them all)."""
from __future__ import annotations

import random

from srtopo.concepts import RDF_TYPE, exists, exists_inverse
from srtopo.consistency.tbox import TBox
from srtopo.ir.topology import ConceptSource, ConjunctionOp, ConsistencyStage, InferenceOp, Topology

EX = "http://ex.org/t#"


def random_tbox(rng: random.Random, n_classes: int | None = None, n_roles: int | None = None) -> TBox:
    """Multiple inheritance, equivalence cycles, NIs at every level, unsatisfiable concepts,
    concepts in no NI, exists P / exists P^- concepts, role inclusions."""
    n_classes = n_classes or rng.randint(3, 18)
    n_roles = n_roles if n_roles is not None else rng.randint(0, 3)
    classes = [f"{EX}C{i}" for i in range(n_classes)]
    roles = [f"{EX}p{i}" for i in range(n_roles)]
    concepts = classes + [exists(r) for r in roles] + [exists_inverse(r) for r in roles]
    pis = set()
    # a layered DAG with multiple inheritance: edges from later to earlier classes
    for i in range(1, n_classes):
        for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3])):
            pis.add((classes[i], classes[rng.randrange(i)]))
    for r in roles:   # domains and ranges
        if rng.random() < 0.6:
            pis.add((exists(r), rng.choice(classes)))
        if rng.random() < 0.6:
            pis.add((exists_inverse(r), rng.choice(classes)))
        if rng.random() < 0.3:
            pis.add((rng.choice(classes), exists(r)))   # A ⊑ exists R
    role_inclusions = []
    if len(roles) >= 2 and rng.random() < 0.5:
        p, q = rng.sample(roles, 2)
        role_inclusions.append((p, q))
        pis.add((exists(p), exists(q)))
        pis.add((exists_inverse(p), exists_inverse(q)))
    if rng.random() < 0.3 and n_classes >= 3:   # an equivalence cycle
        a, b = rng.sample(classes, 2)
        pis.add((a, b))
        pis.add((b, a))
    nis = set()
    for _ in range(rng.randint(1, max(2, n_classes))):
        a, b = rng.choice(concepts), rng.choice(concepts)
        if rng.random() < 0.08:
            b = a   # DJ(A, A): A unsatisfiable
        nis.add((a, b))
    return TBox.build(sorted(pis), sorted(nis), concepts=concepts, role_inclusions=role_inclusions,
                      name="random")


def random_stream(rng: random.Random, tbox: TBox, n: int = 60, n_subjects: int = 5, horizon: int = 30,
                  disorder: float = 0.0, extra_concepts: int = 1):
    """(subject, concept, time) tuples in time order, then a fraction swapped out of order."""
    concepts = sorted(tbox.concepts) + [f"{EX}Unrelated{i}" for i in range(extra_concepts)]
    subjects = [f"{EX}s{i}" for i in range(n_subjects)]
    times = sorted(rng.randrange(horizon) for _ in range(n))
    tuples = [(rng.choice(subjects), rng.choice(concepts), t) for t in times]
    for _ in range(int(disorder * n)):
        i, j = rng.randrange(n), rng.randrange(n)
        tuples[i], tuples[j] = tuples[j], tuples[i]
    return tuples


def compositions(n: int, allow_zero: bool = False):
    """Every split of n consecutive groups into stages (as lists of counts)."""
    if n == 0:
        yield [0]
        return
    for mask in range(1 << (n - 1)):
        parts, size = [], 1
        for bit in range(n - 1):
            if mask >> bit & 1:
                parts.append(size)
                size = 1
            else:
                size += 1
        parts.append(size)
        yield parts
    if allow_zero:
        yield [0, n]
        yield [n, 0]


def prefixed(topology: Topology, p: str) -> Topology:
    def c(x):
        return p + x
    stages = tuple(ConsistencyStage(id=s.id, inference_ops=tuple(InferenceOp(c(o.sub), c(o.sup)) for o in s.inference_ops),
                         conjunction_ops=tuple(ConjunctionOp(c(o.left), c(o.right), (c(o.ni[0]), c(o.ni[1])))
                                               for o in s.conjunction_ops),
                         forwards=tuple(c(f) for f in s.forwards), parallelism=s.parallelism)
                   for s in topology.stages)
    return Topology(ConceptSource(tuple(c(x) for x in topology.source.concepts),
                                  tuple((c(a), c(b)) for a, b in topology.source.aliases)), stages,
                    label=topology.label)


def merge(topologies: list[Topology], label: str = "merged") -> Topology:
    """Disjoint union of topologies whose concepts are already prefixed apart: stage k = every stage k."""
    depth = max(len(t.stages) for t in topologies)
    stages = []
    for k in range(depth):
        parts = [t.stages[k] for t in topologies if len(t.stages) > k]
        stages.append(ConsistencyStage(id=f"B{k + 1}", inference_ops=tuple(o for s in parts for o in s.inference_ops),
                            conjunction_ops=tuple(o for s in parts for o in s.conjunction_ops),
                            forwards=tuple(f for s in parts for f in s.forwards),
                            parallelism=max(s.parallelism for s in parts)))
    return Topology(ConceptSource(tuple(x for t in topologies for x in t.source.concepts),
                                  tuple(a for t in topologies for a in t.source.aliases)), tuple(stages), label=label)


def bounded_disorder(tuples, lateness: int, rng: random.Random):
    """Sort by time, then shuffle inside time blocks of width `lateness`: no tuple is behind
    (max time so far - lateness), so nothing is late for a runner with that allowed lateness."""
    ordered = sorted(tuples, key=lambda t: t[2])
    if lateness <= 0:
        return ordered
    blocks: dict[int, list] = {}
    for t in ordered:
        blocks.setdefault(t[2] // lateness, []).append(t)
    out = []
    for k in sorted(blocks):
        block = blocks[k]
        rng.shuffle(block)
        out.extend(block)
    return out


# --- a stream with malformed lines --------------------------------------------------------------------------

MX = "http://ex.org/m#"
MALFORMED = ["not a line at all", "12\t<http://ex.org/a> <http://ex.org/p>",
             "x7\t<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .",
             "5\t<http://ex.org/a> <http://ex.org/p> <http://ex.org/b>", f'9\t<http://ex.org/a> <{RDF_TYPE}> "lit" .',
             "3\t<bad iri> <http://ex.org/p> <http://ex.org/b> .",
             "99999999999999999999999 <http://ex.org/a> <http://ex.org/p> <http://ex.org/b> ."]
MALFORMED_CLASSES = [f"{MX}C{i}" for i in range(6)]
MALFORMED_TBOX = TBox.build([(MALFORMED_CLASSES[1], MALFORMED_CLASSES[0]), (MALFORMED_CLASSES[2], MALFORMED_CLASSES[0]),
                             (exists(MX + "knows"), MALFORMED_CLASSES[3])],
                            [(MALFORMED_CLASSES[0], MALFORMED_CLASSES[4]), (MALFORMED_CLASSES[1], MALFORMED_CLASSES[2]),
                             (MALFORMED_CLASSES[3], MALFORMED_CLASSES[5])])


def malformed_stream(rng: random.Random, n: int, bad: float, first_time: int = 0, subjects: int = 30) -> list[str]:
    """.tnt lines over MALFORMED_TBOX's classes and role ``knows``, a fraction ``bad`` of MALFORMED lines."""
    from srtopo.io.tnt import format_tnt
    lines = ["# a comment", ""]
    for i in range(n):
        t = first_time + i // 15
        if rng.random() < bad:
            lines.append(rng.choice(MALFORMED))
        elif rng.random() < 0.2:
            lines.append(format_tnt(t, f"{MX}s{rng.randrange(subjects)}", f"{MX}knows", f"{MX}s{rng.randrange(subjects)}"))
        else:
            lines.append(format_tnt(t, f"{MX}s{rng.randrange(subjects)}", RDF_TYPE, rng.choice(MALFORMED_CLASSES)))
    return lines



# --- random .tnt lines (the columnar reader's differential tests) ---------------------------------------------

#: pieces of timestamped N-Triples lines, valid and broken (experiments/fuzz.py has more of the same kind)
LINE_TIMES = ["5", "0", "-3", "007", "-0", "x7", "1e3", "", "123456789012345678", "1234567890123456789",
              "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
              "99999999999999999999999", "2026-01-01T00:00:00"]
LINE_TERMS = ["<http://e.org/a>", "<http://e.org/b>", "<http://e.org/é>", "<http://e.org/\U0001F600>", "<>", "<a>",
              "_:b1", "_:b.", "_:b..c", "<http://e.org/\x7f>", "<http://e.org/a\u00a0b>", f"<{RDF_TYPE}>"]
BROKEN_TERMS = ["_:", "_:-x", "<bad iri>", "<http://e.org/\\u00e9>", "<http://e.org/\x00>", "<http://e.org/\ufffd>",
                "http://e.org/a", "<http://e.org/{x}>", "<http://e.org/a|b>", "<http://e.org/`>", "<http://e.org/^>"]
LINE_LITERALS = ['"lit"', '""', '"a \\"q\\" b"@en', '"x"@en-US', '"x"@en-', '"x"@', '"5"^^<http://x.org/int>',
                 '"5"^^<bad iri>', '"bad', '"\\q"', '"\\u00e9"', '"\\U0001F600"', '"\\u00e"', '"é\t\x0b"',
                 '"a\rb"', '"\ufffd"', '"\\\\"', '"\\"', '"a"b"']
LINE_SEPS = [" ", "\t", "  ", " \t ", "", "\x0b", "\x0c", "\r", "\u00a0", "\u2003"]
LINE_ENDINGS = [" .", ".", " . ", " .\r", " .\r\r", " . # comment", " .# c", " . #", " ..", " . x", "", " .\x00",
                " . # \ufffd", "\t.\t"]


def random_tnt_line(rng: random.Random) -> str:
    """A line of a ``.tnt`` stream built from valid and broken pieces (most of them valid), or one of the other
    kinds of line a stream holds: blank, a comment, punctuation, text."""
    kind = rng.random()
    if kind < 0.04:
        return rng.choice(["", " ", "\t", "\r", "# a comment", "  # c", "#", "# watermark 7", "# watermark -3 \r",
                           "# watermark 99999999999999999999", "# watermark x", "#watermark\t12"])
    if kind < 0.07:
        return "".join(rng.choice("ab <>\"\\\t ._:#-019\x00\ufffd\u00e9") for _ in range(rng.randint(0, 30)))
    def sep():
        return rng.choice(LINE_SEPS) if rng.random() < 0.1 else " "

    def term():
        return rng.choice(BROKEN_TERMS) if rng.random() < 0.05 else rng.choice(LINE_TERMS)
    obj = rng.choice(LINE_LITERALS) if rng.random() < 0.3 else term()
    lead = rng.choice(["", " ", "\t", "\x0c"]) if rng.random() < 0.1 else ""
    return (lead + (rng.choice(LINE_TIMES) if rng.random() < 0.15 else str(rng.randint(-5, 99)))
            + (rng.choice(LINE_SEPS) if rng.random() < 0.1 else "\t") + term() + sep()
            + (term() if rng.random() < 0.5 else f"<{RDF_TYPE}>") + sep() + obj
            + (rng.choice(LINE_ENDINGS) if rng.random() < 0.2 else " ."))


# --- random OWL TBoxes with roles, and RDF statement streams over them (chains) ------------------------------

RX = "http://ex.org/r#"
OWL_PREFIXES = ("@prefix : <http://ex.org/r#> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n")


def random_owl_tbox(rng: random.Random) -> tuple[str, dict]:
    """A random OWL 2 QL ontology in Turtle and its axioms as data: subclasses (a layered DAG, sometimes an
    equivalence), disjoint classes, C ⊑ ∃p, object properties with sub-properties, inverses, symmetric ones,
    domains and ranges, and a data property with a domain. Axioms: {"classes", "properties", "data",
    "sub": [(C, D)], "disjoint": [(C, D)], "some": [(C, p)], "subprop": [(p, q)], "inverse": [(p, q)],
    "symmetric": [p], "domain": [(p, C)], "range": [(p, C)]} (local names)."""
    classes = [f"C{i}" for i in range(rng.randint(3, 8))]
    props = [f"p{i}" for i in range(rng.randint(1, 4))]
    ax = {"classes": classes, "properties": props, "data": ["u0"], "sub": [], "disjoint": [], "some": [],
          "subprop": [], "inverse": [], "symmetric": [], "domain": [], "range": []}
    for i in range(1, len(classes)):
        for j in rng.sample(range(i), min(i, rng.choice([0, 1, 1, 2]))):
            ax["sub"].append((classes[i], classes[j]))
    if rng.random() < 0.3:
        a, b = rng.sample(classes, 2)
        ax["sub"] += [(a, b), (b, a)]
    for _ in range(rng.randint(1, 3)):
        a, b = rng.sample(classes, 2)
        ax["disjoint"].append((a, b))
    if rng.random() < 0.4:
        ax["some"].append((rng.choice(classes), rng.choice(props)))
    for p in props:
        if rng.random() < 0.6:
            ax["domain"].append((p, rng.choice(classes)))
        if rng.random() < 0.6:
            ax["range"].append((p, rng.choice(classes)))
    if len(props) >= 2:
        for _ in range(rng.randint(0, 2)):
            p, q = rng.sample(props, 2)
            ax["subprop"].append((p, q))
        if rng.random() < 0.5:
            p, q = rng.sample(props, 2)
            ax["inverse"].append((p, q))
    if rng.random() < 0.2:
        ax["symmetric"].append(rng.choice(props))
    lines = [OWL_PREFIXES, "<http://ex.org/r> a owl:Ontology ."]
    lines += [f":{c} a owl:Class ." for c in classes] + [f":{p} a owl:ObjectProperty ." for p in props]
    lines += [":u0 a owl:DatatypeProperty ; rdfs:domain :C0 ."]
    lines += [f":{a} rdfs:subClassOf :{b} ." for a, b in ax["sub"]]
    lines += [f":{a} owl:disjointWith :{b} ." for a, b in ax["disjoint"]]
    lines += [f":{a} rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :{p} ; owl:someValuesFrom owl:Thing ] ."
              for a, p in ax["some"]]
    lines += [f":{p} rdfs:subPropertyOf :{q} ." for p, q in ax["subprop"]]
    lines += [f":{p} owl:inverseOf :{q} ." for p, q in ax["inverse"]]
    lines += [f":{p} a owl:SymmetricProperty ." for p in ax["symmetric"]]
    lines += [f":{p} rdfs:domain :{c} ." for p, c in ax["domain"]]
    lines += [f":{p} rdfs:range :{c} ." for p, c in ax["range"]]
    return "\n".join(lines) + "\n", ax


def random_statements(rng: random.Random, ax: dict, n: int = 40, individuals: int = 5, horizon: int = 12,
                      lateness: int = 0) -> list[str]:
    """.tnt lines over the axioms' classes and properties (and a class, a property the TBox does not know, a data
    property with literals, blank nodes), in time order shuffled within ``lateness``."""
    from srtopo.io.tnt import format_tnt
    people = [f"{RX}i{k}" for k in range(individuals)] + ["_:b0"]
    classes = ax["classes"] + ["Unknown"]
    props = ax["properties"] + ["unknown"]
    items = []
    for _ in range(n):
        t = rng.randrange(horizon)
        kind = rng.random()
        if kind < 0.5:
            items.append((t, format_tnt(t, rng.choice(people), RDF_TYPE, RX + rng.choice(classes))))
        elif kind < 0.9:
            items.append((t, format_tnt(t, rng.choice(people), RX + rng.choice(props), rng.choice(people))))
        else:
            items.append((t, format_tnt(t, rng.choice(people), RX + "u0", f'"v{rng.randrange(3)}"')))
    ordered = [text for _t, text in sorted(items, key=lambda x: x[0])]
    if lateness > 0:       # swap neighbours no more than the lateness apart: nothing is late
        for i in range(len(ordered) - 1):
            a, b = int(ordered[i].split("\t")[0]), int(ordered[i + 1].split("\t")[0])
            if b - a <= lateness and rng.random() < 0.3:
                ordered[i], ordered[i + 1] = ordered[i + 1], ordered[i]
    return ordered
