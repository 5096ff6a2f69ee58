"""The baseline a user might otherwise pick: re-check every window with rdflib and SPARQL, with the report
semantics of docs/consistency.md; experiments/README.md, "Baseline: rdflib, SPARQL per window", says how."""
from __future__ import annotations

import time
from collections import Counter, defaultdict

from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from srtopo.consistency.owl import load_tbox

NOW = URIRef("urn:srtopo:now")

QUERY = """
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX owl: <http://www.w3.org/2002/07/owl#>
SELECT ?x WHERE {
  ?x <urn:srtopo:now> ?c1 .
  ?c1 rdfs:subClassOf* ?d1 .
  ?d1 owl:disjointWith ?d2 .
  ?x a ?c2 .
  ?c2 rdfs:subClassOf* ?d2 .
} LIMIT 1
"""


def concept_iri(concept: str) -> URIRef:
    if concept.startswith("exists-:"):
        return URIRef("urn:srtopo:exists-inverse:" + concept[len("exists-:"):])
    if concept.startswith("exists:"):
        return URIRef("urn:srtopo:exists:" + concept[len("exists:"):])
    return URIRef(concept)


def tbox_graph(tbox_path: str) -> Graph:
    tbox = load_tbox(tbox_path)
    g = Graph()
    for sub, sup in tbox.pis:
        g.add((concept_iri(sub), RDFS.subClassOf, concept_iri(sup)))
    for ni in tbox.nis:   # both directions: the query follows one
        g.add((concept_iri(ni.left), OWL.disjointWith, concept_iri(ni.right)))
        g.add((concept_iri(ni.right), OWL.disjointWith, concept_iri(ni.left)))
    return g


def run_rdflib(tbox_path: str, tuples, window: int, progress=None, budget_s: float | None = None) -> dict:
    """Check ``tuples`` (sorted by time) window by window; report keys, tuples/s, latency per time point.

    With ``budget_s`` the check stops at the first time-point boundary after that many seconds: the
    result covers the prefix ``time < time_points_done`` (``tuples`` counts only the processed ones)."""
    g = tbox_graph(tbox_path)
    by_time: dict[int, list] = defaultdict(list)
    for item in tuples:
        by_time[item.time].append(item)
    counts: Counter = Counter()
    keys: set[tuple[str, int]] = set()
    latencies = []
    peak = 0
    times = sorted(by_time)
    iterator = progress(times, desc="rdflib baseline") if progress else times
    started = time.perf_counter()
    processed = 0
    done_upto = times[0] if times else 0
    for t in iterator:
        if budget_s is not None and processed and time.perf_counter() - started > budget_s:
            break
        t0 = time.perf_counter()
        expired = by_time.get(t - window - 1, [])
        for item in expired:
            triple = (URIRef(item.subject), RDF.type, concept_iri(item.concept))
            counts[triple] -= 1
            if counts[triple] == 0:
                g.remove(triple)
                del counts[triple]
        now = []
        for item in by_time[t]:
            triple = (URIRef(item.subject), RDF.type, concept_iri(item.concept))
            counts[triple] += 1
            g.add(triple)
            marker = (URIRef(item.subject), NOW, concept_iri(item.concept))
            g.add(marker)
            now.append(marker)
        peak = max(peak, len(counts))
        for subject in sorted({m[0] for m in now}):   # one query per subject of the time point
            if any(True for _ in g.query(QUERY, initBindings={"x": subject})):
                keys.add((str(subject), t))
        for marker in now:
            g.remove(marker)
        latencies.append(time.perf_counter() - t0)
        processed += len(by_time[t])
        done_upto = t + 1
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {"throughput_tps": processed / elapsed if elapsed else 0.0, "tuples": processed, "time_points_done": done_upto,
            "elapsed_s": elapsed,
            "latency_p50_s": ordered[len(ordered) // 2] if ordered else 0.0,
            "latency_p95_s": ordered[int(0.95 * (len(ordered) - 1))] if ordered else 0.0,
            "cached_tuples": peak, "report_keys": keys}

