"""Brute-force consistency oracle, written from the report semantics of
docs/consistency.md only (no project code).

A report (x, c) is due when a tuple (x, C, c) exists and some tuple (x, C', c') with c - w <= c' <= c
(the tuple itself included) conflicts with it: C and C' have superconcepts D, D' under the PI closure
with DJ(D, D') stated.
"""
from __future__ import annotations


def pi_closure(pis, concepts):
    """Reflexive-transitive superconcepts by naive fixpoint."""
    sup = {c: {c} for c in concepts}
    for a, b in pis:
        sup.setdefault(a, {a}).add(b)
        sup.setdefault(b, {b})
    changed = True
    while changed:
        changed = False
        for c in list(sup):
            extra = set()
            for d in sup[c]:
                extra |= sup.get(d, {d})
            if not extra <= sup[c]:
                sup[c] |= extra
                changed = True
    return sup


def oracle_reports(pis, nis, tuples, window):
    """pis: (sub, super) pairs; nis: (a, b) pairs; tuples: (subject, concept, time, ...)."""
    concepts = {c for p in pis for c in p} | {c for n in nis for c in n} | {t[1] for t in tuples}
    sup = pi_closure(pis, concepts)
    disjoint = set()
    for a, b in nis:
        disjoint.add((a, b))
        disjoint.add((b, a))

    def conflict(c1, c2):
        return any((d1, d2) in disjoint for d1 in sup[c1] for d2 in sup[c2])

    by_subject = {}
    for t in tuples:
        by_subject.setdefault(t[0], []).append((int(t[2]), t[1]))
    due = set()
    for subject, items in by_subject.items():
        for c, concept in items:
            for c2, concept2 in items:
                if (window is None or c - window <= c2) and c2 <= c and conflict(concept, concept2):
                    due.add((subject, c))
                    break
    return due
