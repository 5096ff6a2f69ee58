"""Random DL-Lite TBoxes and streams for differential tests (fixed seeds by the caller)."""
from __future__ import annotations

import random

from srtopo.ontology.model import TBox, exists, exists_inverse

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
