"""A consistency topology in columns: what every columnar plan (the local runner's ``columnar`` plan, Spark's
executors and Spark's driver close) shares between reading tuples and writing reports.

* **Concepts are ids.** An asserted concept IRI becomes its id (``ir.lookup.asserted_names``; -1 for a concept no
  stage reads) by one dictionary lookup per distinct IRI of a batch, never per tuple.
* **Routing is an index take.** The IR's routing rule (``Topology.route``, generalisation to superclasses
  included) is precomputed per asserted concept id as the stage rows the tuple is cached as (stage, stage-level
  concept id): a batch's tuples become their stage rows by ``np.repeat`` and a take, and its per-stage counters
  by one ``bincount`` of the ids times the rule's counts (``Topology.route_counts``).
* **Reports come back from ids.** The sweep's reports (``consistency.sweep.Closed``) are turned into the sinks'
  records (``Report``) or, column by column, into their JSON lines (``io.jsonlines``), with each name and NI
  built once.
"""
from __future__ import annotations

import json

import numpy as np

from srtopo.consistency.sweep import Closed, PairTable, close
from srtopo.ir.lookup import asserted_names, build_tables, choice_bits, concept_names, id_tables, ni_pair_ids
from srtopo.ir.records import Report
from srtopo.ir.topology import Topology

#: the counters a tuple adds per stage (``Topology.route_counts``), in this order
STAGE_COUNTERS = ("records_in", "cached_in", "forwarded", "inferred", "ops_evaluated")


class Vocabulary:
    """The lookup tables of a topology as arrays (built once per topology)."""

    def __init__(self, topology: Topology):
        self.topology = topology
        self.tables = build_tables(topology)
        ids = id_tables(self.tables)
        #: asserted concept id -> name, and back
        self.names: list[str] = asserted_names(self.tables)
        self.ids: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.nis: list[tuple[str, str]] = ni_pair_ids(self.tables)
        self.stage_ids: tuple[str, ...] = self.tables.stage_ids
        self.pairs = PairTable(ids["pairs"][0], len(concept_names(self.tables)))
        n, stages = len(self.names), len(topology.stages)
        # the cached stage rows of each asserted concept id, as one array sorted by id (CSR: ``start``, ``count``)
        rows = sorted((aid, k, cid) for _a, k, cid, aid, cached in ids["cmap"][0] if cached)
        self.row_stage = np.array([k for _, k, _ in rows], dtype=np.int64)
        self.row_cid = np.array([c for _, _, c in rows], dtype=np.int64)
        self.row_count = np.bincount(np.array([a for a, _, _ in rows], dtype=np.int64), minlength=n) \
            if rows else np.zeros(n, dtype=np.int64)
        self.row_start = np.concatenate([[0], np.cumsum(self.row_count)[:-1]]).astype(np.int64) if n else \
            np.zeros(0, dtype=np.int64)
        #: what one accepted tuple of each id adds to each stage's counters: (ids, stages, STAGE_COUNTERS)
        self.counts = np.zeros((n, stages, len(STAGE_COUNTERS)), dtype=np.int64)
        for aid, name in enumerate(self.names):
            for k, values in enumerate(topology.route_counts(name)):
                self.counts[aid, k] = values
        self._reports_json: tuple | None = None

    def bits(self, window: int | None):
        """The packed choice key's widths for ``window`` (None: the sweep compares the fields in turn)."""
        return choice_bits(self.tables, window)

    def lookup(self, concepts: list[str]) -> np.ndarray:
        """The ids of concept names (-1: no stage reads it)."""
        get = self.ids.get
        return np.array([get(c, -1) for c in concepts], dtype=np.int64)

    def expand(self, aid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cached stage rows of tuples of ids ``aid`` (all >= 0): (the tuple's index, stage, concept id), one
        row per stage concept the tuple is cached as (the IR's route: generalisation included)."""
        counts = self.row_count[aid]
        index = np.repeat(np.arange(len(aid), dtype=np.int64), counts)
        if not len(index):
            return index, index, index
        first = np.cumsum(counts) - counts
        at = self.row_start[aid][index] + (np.arange(len(index), dtype=np.int64) - first[index])
        return index, self.row_stage[at], self.row_cid[at]

    def stage_counts(self, aid: np.ndarray) -> np.ndarray:
        """(stages, STAGE_COUNTERS) added by accepted tuples of ids ``aid`` (all >= 0)."""
        per_id = np.bincount(aid, minlength=len(self.names)) if len(aid) else np.zeros(len(self.names), np.int64)
        return np.einsum("a,aks->ks", per_id, self.counts)

    def close(self, stage, subject, cid, aid, time, lo: int, hi: int, window: int | None) -> Closed:
        """The reports closing in [lo, hi) among the stage rows (``consistency.sweep.close``)."""
        return close(stage, subject, cid, aid, time, lo, hi, window, self.pairs, self.bits(window))

    # --- reports --------------------------------------------------------------------------------------
    def reports(self, closed: Closed, subjects: list) -> list[Report]:
        """The reports as the sinks' records; ``subjects``: each report's subject."""
        names, nis, stages, label = self.names, self.nis, self.stage_ids, self.topology.label
        out = []
        for s, t, k, p, back, a1, a2, e in zip(subjects, closed.time.tolist(), closed.stage.tolist(),
                                               closed.pid.tolist(), closed.back.tolist(), closed.a1.tolist(),
                                               closed.a2.tolist(), closed.earlier.tolist()):
            evidence = ((names[a1], t),) if not back and a1 == a2 else ((names[a1], e), (names[a2], t))
            out.append(Report(s, t, nis[p], evidence, stages[k], label))
        return out

    def report_lines(self, closed: Closed, quoted):
        """The reports' JSON lines (an Arrow array), field for field as ``Report.to_json`` and the Spark write give
        them; ``quoted``: the subjects as JSON strings (``io.jsonlines.quoted``), indexed by subject code."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from srtopo.io.jsonlines import TEXT, joined, numbers
        if not len(closed):
            return pa.array([], TEXT)
        if self._reports_json is None:
            from srtopo.io.jsonlines import quoted as strings
            label = self.topology.label
            self._reports_json = (
                strings(self.names),
                pa.array([json.dumps(list(p), ensure_ascii=False, separators=(",", ":")) for p in self.nis], TEXT),
                strings(list(self.stage_ids)),
                f',"topology":{json.dumps(label, ensure_ascii=False)}}}\n' if label else "}\n")
        concepts, nis, stages, tail = self._reports_json
        a1, a2, t2, t1 = closed.a1, closed.a2, closed.time, closed.earlier
        first = joined('{"concept":', concepts.take(pa.array(a1)), ',"time":', numbers(t1), "}")
        both = joined(first, ',{"concept":', concepts.take(pa.array(a2)), ',"time":', numbers(t2), "}")
        evidence = pc.if_else(pa.array((a1 == a2) & (closed.back == 0)), first, both)
        return joined('{"subject":', quoted.take(pa.array(closed.subject)), ',"time":', numbers(closed.time),
                      ',"ni":', nis.take(pa.array(closed.pid)), ',"evidence":[', evidence, '],"stage":',
                      stages.take(pa.array(closed.stage)), tail)


class ReportBatch:
    """The reports a closing gives, in (time, subject) order, for the sinks (``io.sinks.emit_all``): as records
    (``Report``, built once when a sink asks) or as their JSON lines, built column by column."""

    def __init__(self, vocabulary: Vocabulary, closed: Closed, subjects):
        """``subjects``: the name of each subject code of ``closed`` (an Arrow string array)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        names = subjects.take(pa.array(closed.subject))
        rank = pc.rank(names, sort_keys="ascending", tiebreaker="first").to_numpy(zero_copy_only=False)
        order = np.lexsort((rank, closed.time))
        self.vocabulary = vocabulary
        self.names = names.take(pa.array(order))
        self.closed = closed.take(order)
        self.closed = Closed(np.arange(len(order), dtype=np.int64), *(getattr(self.closed, f) for f in
                                                                       ("time", "stage", "pid", "back", "a1", "a2")))
        self._records = None

    def __len__(self) -> int:
        return len(self.closed)

    @property
    def records(self) -> list[Report]:
        if self._records is None:
            self._records = self.vocabulary.reports(self.closed, self.names.to_pylist())
        return self._records

    def json_text(self) -> str:
        from srtopo.io.jsonlines import quoted, text
        return bytes(text(self.vocabulary.report_lines(self.closed, quoted(self.names)))).decode("utf-8")
