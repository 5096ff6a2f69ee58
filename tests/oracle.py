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


def oracle_choices(pis, nis, tuples, window):
    """(subject, time) -> (ni, evidence) of every due report, as docs/consistency.md ("Which NI and evidence a
    report names") defines the choice, by brute force over every pair of tuples.

    A stated NI is eligible when no other stated NI lies above it (componentwise, either orientation) without lying
    below it too. A pair of tuples at c' <= c violates the eligible NIs above its two concepts; the pair's NI is the
    least of them by (left IRI, right IRI). Of every violating pair in the report's window the report names the
    one with the least (NI, c - c', earlier concept, later concept), the evidence ordered by (time, concept) and
    listed once when both tuples are the same."""
    concepts = {c for p in pis for c in p} | {c for n in nis for c in n} | {t[1] for t in tuples}
    sup = pi_closure(pis, concepts)

    def below(inner, outer):
        (x, y), (a, b) = inner, outer
        return (a in sup[x] and b in sup[y]) or (b in sup[x] and a in sup[y])
    stated = sorted(set(map(tuple, nis)))
    eligible = [n for n in stated if not any(below(n, m) and not below(m, n) for m in stated)]
    by_subject = {}
    for t in tuples:
        by_subject.setdefault(t[0], set()).add((int(t[2]), t[1]))
    best = {}
    for subject, items in by_subject.items():
        for c, concept in items:
            for c2, concept2 in items:
                if c2 > c or (window is not None and c2 < c - window):
                    continue
                violated = [n for n in eligible if below((concept, concept2), n)]
                if not violated:
                    continue
                (t1, a1), (t2, a2) = sorted([(c2, concept2), (c, concept)])
                key = (min(violated), c - t1, a1, a2)
                if (subject, c) not in best or key < best[(subject, c)]:
                    best[(subject, c)] = key
    return {k: (ni, tuple(sorted({(a1, t - back), (a2, t)}, key=lambda e: (e[1], e[0]))))
            for k, (ni, back, a1, a2) in best.items() for t in [k[1]]}


# --- lateness, record by record (docs/architecture.md, "Lateness"), written from the definition alone ----------

def late_or_ahead(records, lateness, max_gap=None):
    """One source's records in its input order, each (key, time, whole) for a record or (key, time, "floor") for
    punctuation; the rejected keys -> "late" or "ahead".

    A record is late when the allowed lateness is bounded and its time is below the source's floor (the largest
    punctuation before it) or below its progress less the lateness: the progress is the largest time of the
    source's earlier accepted records, plus one when the lateness is 0 and such a record was its time point
    whole. A record more than ``max_gap`` after the largest time of the earlier accepted records is ahead (the
    first one never is)."""
    rejected = {}
    latest = floor = None
    progress = None
    for key, time, whole in records:
        if whole == "floor":
            floor = time if floor is None else max(floor, time)
            continue
        if lateness is not None and ((floor is not None and time < floor)
                                     or (progress is not None and time < progress - lateness)):
            rejected[key] = "late"
            continue
        if max_gap is not None and latest is not None and time > latest + max_gap:
            rejected[key] = "ahead"
            continue
        latest = time if latest is None else max(latest, time)
        mark = time + 1 if whole and lateness == 0 else time
        progress = mark if progress is None else max(progress, mark)
    return rejected
