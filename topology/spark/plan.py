"""Lookup tables derived from the IR and the per-micro-batch SQL (one statement per batch).

Event-time protocol (all numbers are derived from data a replay of the batch sees identically):

* ``maxtime[s]``: the largest event time seen from source s through batch b (cumulative, kept in the
  store), raised by punctuation lines ``# watermark T`` to T + lateness.
* watermark ``W_b = min_s maxtime[s] - lateness`` (NEG while some source has sent nothing, or when the
  lateness is unbounded): Streamlog's synchronized union - time t is final only once every source's
  watermark passed it.
* batch b accepts tuples with time >= W_{b-1}; older ones go to the rejected sink as late.
* batch b *closes* the report times [F_{b-1}, F_b) with F_b = W_{b-1}: every tuple with time < W_{b-1}
  that will ever be accepted is in the state written by batch b-1, so the closing join reads only
  that state. A report (x, t) is therefore computed exactly once, when t closes, from every tuple that
  can reach it (no "already emitted" memory, no duplicates across batches or stages).
* the state written by batch b keeps rows with time >= F_b - w (the next closing needs nothing older).
"""
from __future__ import annotations

from dataclasses import dataclass

from topology.ir import Topology

NEG = -(2 ** 62)
POS = 2 ** 62

STATE_COLUMNS = "stage INT, subject STRING, concept STRING, asserted STRING, time BIGINT"
STORE_SCHEMA = ("stage INT, subject STRING, concept STRING, asserted STRING, time BIGINT, "
                "ni ARRAY<STRING>, evidence ARRAY<STRUCT<concept: STRING, time: BIGINT>>, "
                "src INT, file STRING, line BIGINT, raw STRING, reason STRING, metric STRING, value BIGINT, "
                "kind STRING")


@dataclass(frozen=True)
class Tables:
    """Plain rows of the lookup tables (built on the driver once, tiny next to the stream)."""
    cmap: list          # (asserted, stage, concept, cached)  fused: every stage's input from the source
    srcmap: list        # (asserted, concept)                 staged: stage 1 input
    emit: list          # (stage, concept, next)              staged: stage k -> k+1
    cached: list        # (stage, concept)                    staged: concepts cached at stage k
    pairs: list         # (stage, c1, c2, ni_l, ni_r)         both orientations
    stage_ids: tuple


def outputs_of(stage, is_last: bool) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    if is_last:
        return out
    for c in stage.forwards:
        out.setdefault(c, set()).add(c)
    for op in stage.inference_ops:
        out.setdefault(op.sub, set()).add(op.sup)
    return out


def build_tables(topology: Topology) -> Tables:
    stages = topology.stages
    last = len(stages) - 1
    aliases = dict(topology.source.aliases)
    accepted = set(topology.source.concepts)
    outs = [outputs_of(s, i == last) for i, s in enumerate(stages)]
    cached_sets = [s.cached_concepts for s in stages]
    keys = sorted(accepted | set(aliases))
    cmap, srcmap = [], []
    for asserted in keys:
        rep = aliases.get(asserted, asserted)
        if rep not in accepted:
            continue
        srcmap.append((asserted, rep))
        frontier = {rep}
        for k in range(len(stages)):
            if not frontier:
                break
            for c in sorted(frontier):
                cmap.append((asserted, k, c, c in cached_sets[k]))
            frontier = set().union(*(outs[k].get(c, set()) for c in frontier)) if frontier else set()
    emit = sorted((k, c, n) for k, o in enumerate(outs) for c, ns in o.items() for n in ns)
    cached = sorted((k, c) for k, cs in enumerate(cached_sets) for c in cs)
    pairs = set()
    for k, s in enumerate(stages):
        for op in s.conjunction_ops:
            pairs.add((k, op.left, op.right, op.ni[0], op.ni[1]))
            pairs.add((k, op.right, op.left, op.ni[0], op.ni[1]))
    return Tables(cmap, srcmap, emit, cached, sorted(pairs), tuple(s.id for s in stages))


@dataclass(frozen=True)
class BatchBounds:
    accept: int        # tuples with time < accept are late (W_{b-1})
    lo: int            # close report times in [lo, hi)
    hi: int
    keep: int          # state rows with time >= keep survive
    maxtime: dict      # src -> cumulative max time through b-1 (None: nothing yet)


def watermark(maxtime: dict, n_sources: int, lateness: int | None) -> int:
    if lateness is None or len([v for v in maxtime.values() if v is not None]) < n_sources:
        return NEG
    return max(NEG, min(maxtime[s] for s in range(n_sources)) - lateness)


def bounds_for(prev_maxtime: dict, prev_closed: int, n_sources: int, lateness: int | None,
               window: int | None, final: bool = False) -> BatchBounds:
    w_prev = watermark(prev_maxtime, n_sources, lateness)
    hi = POS if final else w_prev
    keep = NEG if window is None else max(NEG, hi - window)
    return BatchBounds(accept=w_prev, lo=prev_closed, hi=hi, keep=keep, maxtime=dict(prev_maxtime))


def _i(value: int) -> str:
    return f"CAST({int(value)} AS BIGINT)"


class SqlBuilder:
    """Builds the one SQL statement of a micro-batch for the fused or the staged physical plan."""

    def __init__(self, names: dict, tables: Tables, topology: Topology, window: int | None,
                 lateness: int | None, n_sources: int, plan: str = "fused", metrics: bool = True,
                 partitions: int = 4):
        self.n = names
        self.tables = tables
        self.topology = topology
        self.window = window
        self.lateness = lateness
        self.n_sources = n_sources
        self.plan = plan
        self.metrics = metrics
        self.partitions = partitions

    # --- pieces -------------------------------------------------------------------------------
    def _closing(self, b: BatchBounds, stage: int | None) -> str:
        """Matches (subject, time, stage, ni, e1, e2) of the report times closing in this batch."""
        n, w = self.n, self.window
        where_stage = "" if stage is None else f" AND stage = {stage}"
        hint = "" if stage is None else f"/*+ REPARTITION({self.topology.stages[stage].parallelism}, subject) */ "
        pairs = n["pairs"] if stage is None else f"(SELECT * FROM {n['pairs']} WHERE stage = {stage})"
        if w is None:
            cl = (f"SELECT {hint}stage, subject, concept, asserted, time, 0 AS bucket FROM {n['prev']} "
                  f"WHERE time >= {_i(b.lo)} AND time < {_i(b.hi)}{where_stage}")
            pt = (f"SELECT {hint}stage, subject, concept, asserted, time, 0 AS bucket FROM {n['prev']} "
                  f"WHERE time < {_i(b.hi)}{where_stage}")
            tcond = "o.time <= c.time"
        else:
            width = max(2 * w, 1)
            cl = (f"SELECT {hint}stage, subject, concept, asserted, time, bk AS bucket FROM {n['prev']} "
                  f"LATERAL VIEW explode(array_distinct(array(floor((time - {w}) / {width}), "
                  f"floor(time / {width})))) bx AS bk "
                  f"WHERE time >= {_i(b.lo)} AND time < {_i(b.hi)}{where_stage}")
            pt = (f"SELECT {hint}stage, subject, concept, asserted, time, floor(time / {width}) AS bucket "
                  f"FROM {n['prev']} WHERE time >= {_i(b.lo)} - {w} AND time < {_i(b.hi)}{where_stage}")
            tcond = f"o.time <= c.time AND o.time >= c.time - {w}"
        return (f"SELECT /*+ BROADCAST(p) */ c.subject, c.time, c.stage, p.ni_l, p.ni_r, "
                f"least(named_struct('time', c.time, 'concept', c.asserted), "
                f"named_struct('time', o.time, 'concept', o.asserted)) AS e1, "
                f"greatest(named_struct('time', c.time, 'concept', c.asserted), "
                f"named_struct('time', o.time, 'concept', o.asserted)) AS e2 "
                f"FROM ({cl}) c JOIN {pairs} p ON p.stage = c.stage AND p.c1 = c.concept "
                f"JOIN ({pt}) o ON o.stage = c.stage AND o.subject = c.subject AND o.bucket = c.bucket "
                f"AND o.concept = p.c2 WHERE {tcond}")

    def _new_rows(self, b: BatchBounds) -> str:
        """Accepted new tuples as stage rows (stage, subject, concept, asserted, time, cached)."""
        n = self.n
        acc = (f"SELECT subject, concept AS asserted, time FROM {n['new']} "
               f"WHERE ik = 't' AND time >= {_i(b.accept)}")
        if self.plan == "fused":
            return (f"SELECT /*+ BROADCAST(m) */ m.stage, a.subject, m.concept, a.asserted, a.time, m.cached "
                    f"FROM ({acc}) a JOIN {n['cmap']} m ON m.asserted = a.asserted")
        # staged: stage k+1's input is computed from stage k's rows, one exchange by subject per stage
        parts, prev = [], None
        for k, stage in enumerate(self.topology.stages):
            p = stage.parallelism
            if k == 0:
                body = (f"SELECT /*+ REPARTITION({p}, subject), BROADCAST(s) */ a.subject, s.concept, a.asserted, "
                        f"a.time FROM ({acc}) a JOIN {n['srcmap']} s ON s.asserted = a.asserted")
            else:
                body = (f"SELECT /*+ REPARTITION({p}, subject), BROADCAST(e) */ i.subject, e.next AS concept, "
                        f"i.asserted, i.time FROM {prev} i JOIN {n['emit']} e ON e.stage = {k - 1} "
                        f"AND e.concept = i.concept")
            parts.append((f"in{k}", body))
            prev = f"in{k}"
        self._staged_ctes = parts
        union = " UNION ALL ".join(
            f"SELECT /*+ BROADCAST(c) */ {k} AS stage, i.subject, i.concept, i.asserted, i.time, "
            f"(c.concept IS NOT NULL) AS cached FROM in{k} i LEFT JOIN "
            f"(SELECT concept FROM {n['cached']} WHERE stage = {k}) c ON c.concept = i.concept"
            for k in range(len(self.topology.stages)))
        return union

    def batch_sql(self, b: BatchBounds, batch_id: int, final: bool = False) -> str:
        n, L = self.n, self.lateness
        self._staged_ctes = []
        newrows = None if final else self._new_rows(b)
        if self.plan == "staged" and len(self.topology.stages) > 0:
            matches = " UNION ALL ".join(self._closing(b, k) for k in range(len(self.topology.stages)))
        else:
            matches = self._closing(b, None)
        ctes = list(self._staged_ctes)
        ctes.append(("m", matches))
        ctes.append(("r", "SELECT subject, time, min(named_struct('stage', stage, 'ni_l', ni_l, 'ni_r', ni_r, "
                          "'e1', e1, 'e2', e2)) AS x FROM m GROUP BY subject, time"))
        blank = ("CAST(NULL AS ARRAY<STRING>) AS ni, "
                 "CAST(NULL AS ARRAY<STRUCT<concept: STRING, time: BIGINT>>) AS evidence, "
                 "CAST(NULL AS INT) AS src, CAST(NULL AS STRING) AS file, CAST(NULL AS BIGINT) AS line, "
                 "CAST(NULL AS STRING) AS raw, CAST(NULL AS STRING) AS reason, "
                 "CAST(NULL AS STRING) AS metric, CAST(NULL AS BIGINT) AS value")
        nostate = ("CAST(NULL AS INT) AS stage, CAST(NULL AS STRING) AS subject, CAST(NULL AS STRING) AS concept, "
                   "CAST(NULL AS STRING) AS asserted, CAST(NULL AS BIGINT) AS time")
        selects = [
            ("SELECT x.stage AS stage, subject, CAST(NULL AS STRING) AS concept, CAST(NULL AS STRING) AS asserted, "
             "time, array(x.ni_l, x.ni_r) AS ni, "
             "transform(array_distinct(array(x.e1, x.e2)), e -> named_struct('concept', e.concept, 'time', e.time)) "
             "AS evidence, CAST(NULL AS INT) AS src, CAST(NULL AS STRING) AS file, CAST(NULL AS BIGINT) AS line, "
             "CAST(NULL AS STRING) AS raw, CAST(NULL AS STRING) AS reason, CAST(NULL AS STRING) AS metric, "
             "CAST(NULL AS BIGINT) AS value, 'report' AS kind FROM r"),
        ]
        if not final:
            ctes.append(("nr", newrows))
            selects.append(f"SELECT stage, subject, concept, asserted, time, {blank}, 'state' AS kind "
                           f"FROM {n['prev']} WHERE time >= {_i(b.keep)}")
            selects.append(f"SELECT stage, subject, concept, asserted, time, {blank}, 'state' AS kind "
                           f"FROM nr WHERE cached AND time >= {_i(b.keep)}")
            rej = ("CAST(NULL AS ARRAY<STRING>) AS ni, "
                   "CAST(NULL AS ARRAY<STRUCT<concept: STRING, time: BIGINT>>) AS evidence, src, file, line")
            selects.append(f"SELECT {nostate}, {rej}, raw, reason, CAST(NULL AS STRING) AS metric, "
                           f"CAST(NULL AS BIGINT) AS value, 'rejected' AS kind FROM {n['new']} WHERE ik = 'x'")
            selects.append(
                f"SELECT {nostate}, {rej}, concat(CAST(time AS STRING), '\\t', subject, ' ', concept) AS raw, "
                f"concat('late: event time ', CAST(time AS STRING), ' is older than the watermark ', "
                f"CAST({_i(b.accept)} AS STRING)) AS reason, CAST(NULL AS STRING) AS metric, "
                f"CAST(NULL AS BIGINT) AS value, 'rejected' AS kind "
                f"FROM {n['new']} WHERE ik = 't' AND time < {_i(b.accept)} AND part = 0")
            # cumulative max event time per source (punctuation raises it to T + lateness)
            bump = "0" if L is None else str(int(L))
            prevvals = " UNION ALL ".join(f"SELECT {s} AS src, {_i(v)} AS v" for s, v in b.maxtime.items()
                                          if v is not None)
            mt = (f"SELECT src, CASE WHEN ik = 'p' THEN time + {bump} ELSE time END AS v FROM {n['new']} "
                  f"WHERE ik IN ('t', 'p') AND time IS NOT NULL")
            if prevvals:
                mt += " UNION ALL " + prevvals
            metric_tail = "CAST(NULL AS STRING) AS raw, CAST(NULL AS STRING) AS reason"
            selects.append(f"SELECT {nostate}, CAST(NULL AS ARRAY<STRING>) AS ni, "
                           f"CAST(NULL AS ARRAY<STRUCT<concept: STRING, time: BIGINT>>) AS evidence, src, "
                           f"CAST(NULL AS STRING) AS file, CAST(NULL AS BIGINT) AS line, {metric_tail}, "
                           f"'maxtime' AS metric, max(v) AS value, 'metric' AS kind FROM ({mt}) GROUP BY src")
            if self.metrics:
                selects.append(
                    f"SELECT {nostate}, CAST(NULL AS ARRAY<STRING>) AS ni, "
                    f"CAST(NULL AS ARRAY<STRUCT<concept: STRING, time: BIGINT>>) AS evidence, "
                    f"CAST(NULL AS INT) AS src, CAST(NULL AS STRING) AS file, CAST(NULL AS BIGINT) AS line, "
                    f"{metric_tail}, metric, value, 'metric' AS kind FROM (SELECT stack(4, "
                    f"'tuples', count_if(ik = 't'), 'malformed', count_if(ik = 'x'), "
                    f"'late', count_if(ik = 't' AND time < {_i(b.accept)}), "
                    f"'punctuations', count_if(ik = 'p')) AS (metric, value) FROM {n['new']})")
                selects.append(
                    f"SELECT stage, CAST(NULL AS STRING) AS subject, CAST(NULL AS STRING) AS concept, "
                    f"CAST(NULL AS STRING) AS asserted, CAST(NULL AS BIGINT) AS time, "
                    f"CAST(NULL AS ARRAY<STRING>) AS ni, "
                    f"CAST(NULL AS ARRAY<STRUCT<concept: STRING, time: BIGINT>>) AS evidence, "
                    f"CAST(NULL AS INT) AS src, CAST(NULL AS STRING) AS file, CAST(NULL AS BIGINT) AS line, "
                    f"{metric_tail}, metric, value, 'metric' AS kind FROM (SELECT stage, stack(2, "
                    f"'stage_in', count(*), 'cached_in', count_if(cached)) AS (metric, value) "
                    f"FROM nr GROUP BY stage)")
                selects.append(
                    f"SELECT stage, CAST(NULL AS STRING) AS subject, CAST(NULL AS STRING) AS concept, "
                    f"CAST(NULL AS STRING) AS asserted, CAST(NULL AS BIGINT) AS time, "
                    f"CAST(NULL AS ARRAY<STRING>) AS ni, "
                    f"CAST(NULL AS ARRAY<STRUCT<concept: STRING, time: BIGINT>>) AS evidence, "
                    f"CAST(NULL AS INT) AS src, CAST(NULL AS STRING) AS file, CAST(NULL AS BIGINT) AS line, "
                    f"{metric_tail}, 'state_rows' AS metric, count(*) AS value, 'metric' AS kind FROM ("
                    f"SELECT stage FROM {n['prev']} WHERE time >= {_i(b.keep)} UNION ALL "
                    f"SELECT stage FROM nr WHERE cached AND time >= {_i(b.keep)}) GROUP BY stage")
        sql = "WITH " + ", ".join(f"{name} AS ({body})" for name, body in ctes) + " " + \
              " UNION ALL ".join(selects)
        return sql
