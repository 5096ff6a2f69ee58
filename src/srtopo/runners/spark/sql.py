"""The SQL of consistency topologies on Spark: lookup tables derived from the IR and the statements of a
micro-batch (fused and staged physical plans).

Event-time protocol (all numbers are derived from data a replay of the batch sees identically):

* each source s has a clock (``ir.lateness.SourceClock``, kept in the store): the largest event time
  ``M_s`` of its tuples and its floor ``F_s`` (the largest punctuation ``# watermark T``) through batch b.
* a tuple is **late** when it is below its source's floor, or more than the lateness L behind the largest
  time of the tuples of its source before it, in the source's input order (a directory's files by
  modification time then name, a file's lines in order, a socket's lines in arrival order): whatever the
  other sources sent and however the input is cut into batches (``spark.sources.parse_lines``,
  ``file_entries``, ``SqlBuilder.late_sql``).
* watermark ``W_b = min_s max(M_s - L, F_s)`` (NEG while some source has sent nothing, or when the lateness
  is unbounded): Streamlog's synchronized union - time t is final only once every source's watermark passed
  it. No tuple a source may still send is accepted below it.
* batch b *closes* the report times [F_{b-1}, F_b) with F_b = W_b (its own watermark, from a tiny max(time)
  aggregate over the batch's input): every tuple with time < W_b that will ever be accepted is in the state
  written by batch b-1 or accepted by batch b, so the closing join reads that state UNION the batch's
  accepted rows. A report (x, t) is therefore computed exactly once, when t closes, from every tuple that
  can reach it (no "already emitted" memory, no duplicates across batches or stages).
* the state written by batch b keeps rows with time >= F_b - w (the next closing needs nothing older).

Event times take the whole 64-bit range (``io.tnt.TIME_MIN`` .. ``TIME_MAX``, Spark's BIGINT), and no statement
computes a time that may leave it (Spark's ANSI mode raises on overflow, and without it a wrapped value silently
drops reports): the bounds are computed on the driver with Python's integers and handed to the SQL clamped, as an
inclusive last closing time and the window's reach (``bounds_sql``); the window frame orders by a time raised to
at least ``TIME_MIN + w`` (``SqlBuilder._closing_windowed``); the lateness test subtracts with ``try_subtract``;
the packed key holds the earlier evidence's time as its distance back from the report's time, ``t - e``.
"""
from __future__ import annotations

from srtopo.io.tnt import TIME_MAX, TIME_MIN
# the bounds of a batch live with the lateness rules (the columnar plans compute them in executor tasks)
from srtopo.ir.lateness import NEG, POS, BatchBounds, SourceClock, bounds_for, watermark
from srtopo.ir.lookup import (  # their home is ir.lookup; the Spark job imports them from here too
    Packing,
    Tables,
    asserted_names,
    build_tables,
    choice_bits,
    concept_names,
    id_tables,
    ni_pair_ids,
)
from srtopo.ir.topology import Topology


# the window cache: concepts as ids (index in concept_names / asserted_names): a fraction of the bytes of the
# IRIs to write, read, shuffle and copy into window frames; names come back only in the (few) reports
STATE_COLUMNS = "stage INT, subject STRING, cid INT, aid INT, time BIGINT"
#: the columns of a store entry's JSON lines (``write_sql``), in the order their fields are written
STORED_FIELDS = ("subject", "time", "ni", "evidence", "stage", "topology", "source", "line", "text", "reason",
                 "sk", "cid", "aid")
#: the window state as stored (``sk``: the stage index; ``stage`` is a report's stage id)
STORED_STATE_COLUMNS = "subject STRING, time BIGINT, sk INT, cid INT, aid INT"


def sql_string(text) -> str:
    """A Spark SQL string literal."""
    return "'" + str(text).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _strs(names) -> str:
    return ", ".join(sql_string(x) for x in names)


def file_entries(clocks: dict, files: dict, lateness: int, names=None) -> tuple[dict, list]:
    """Judge a batch's files in each source's order (modification time, then name: ``io.sources.file_order``)
    from the sources' clocks before the batch (src -> SourceClock, updated in place to the clocks after it).

    ``files``: (src, file key) -> {"fo", "min_t", "max_t", "max_p", "dsc"} from the batch's counters aggregate;
    ``names()``: (src, file key) -> name, called only when files of a source share a modification time or
    some file may hold late tuples (their rejected records name it). Returns the clocks and the entries of the
    files that may hold late tuples, (src, file key, largest time of the source before the file, floor before
    it, whether the file has a possible descent, name): a file in time order whose smallest time is not below
    its source's bound when it starts has none (the common case, which then costs nothing more); one with a
    possible descent gets the exact prefix maximum inside the file (``late_sql``)."""
    from urllib.parse import unquote
    orders = [(src, f["fo"] or 0) for (src, _fk), f in files.items()]
    known = names() if names is not None and len(set(orders)) < len(orders) else None

    def name(key):
        return unquote(((known or {}).get(key) or "").rsplit("/", 1)[-1])
    entries = []
    for (src, fk), f in sorted(files.items(), key=lambda kv: (kv[0][0], kv[1]["fo"] or 0, name(kv[0]), kv[0][1])):
        clock = clocks.setdefault(src, SourceClock())
        bound = clock.horizon(lateness)
        if f["dsc"] or (f["min_t"] is not None and bound is not None and f["min_t"] < bound):
            entries.append((src, fk, NEG if clock.latest is None else clock.latest,
                            NEG if clock.floor is None else clock.floor, bool(f["dsc"])))
        if f["max_t"] is not None:
            clock.accept(f["max_t"])
        if f["max_p"] is not None:
            clock.punctuate(f["max_p"])
    if entries and names is not None:
        known = known if known is not None else names()
        entries = [e + ((known or {}).get((e[0], e[1])),) for e in entries]
    else:
        entries = [e + (None,) for e in entries]
    return clocks, entries


def _i(value: int) -> str:
    return f"CAST({int(value)} AS BIGINT)"


def _time(value: int) -> int:
    """``value`` clamped into the 64-bit range of event times."""
    return min(max(int(value), TIME_MIN), TIME_MAX)


def bounds_sql(b: BatchBounds) -> str:
    """The batch's bounds as a one-row relation (b_lo, b_last, b_reach, b_keep), every value an event time: report
    times in [b_lo, b_last] close (inclusive, so that closing 2^63 - 1 needs no 2^63; a batch that closes nothing
    gets b_lo > b_last), the closing reads rows from b_reach on (``lo - w``, or the least time where that is less)
    and the state keeps rows from b_keep on (the end of input's close, which writes no state, may clamp it).

    The batch SQL reads the bounds from this relation (cross-joined onto the batch and the state) instead
    of inlining them as literals: Spark's code generator inlines BIGINT literals into the generated Java,
    so per-batch literals made every batch compile new classes (~9 Janino compiles) that the JVM then had
    to JIT-compile again - measured at ~7 s of compiler CPU per 500k-tuple batch on 2 cores, about 40% of
    the machine. An inline table is a LocalRelation whose values are data, never folded into the code."""
    lo, last = (b.lo, b.hi - 1) if b.lo < b.hi else (TIME_MAX, TIME_MIN)
    return (f"SELECT * FROM VALUES ({_i(lo)}, {_i(last)}, {_i(_time(b.reach))}, {_i(_time(b.keep))}) "
            f"AS t(b_lo, b_last, b_reach, b_keep)")


def with_bounds_sql(relation: str, bounds_view: str) -> str:
    """``relation`` with the bound columns of the one-row ``bounds_view`` appended (a broadcast cross join)."""
    return f"SELECT /*+ BROADCAST(bnd) */ r.*, bnd.* FROM {relation} r CROSS JOIN {bounds_view} bnd"


class SqlBuilder:
    """Builds the one SQL statement of a micro-batch for the fused or the staged physical plan."""

    def __init__(self, names: dict, tables: Tables, topology: Topology, window: int | None,
                 physical_plan: str = "fused", partitions: int = 4, lateness: int | None = None,
                 carry: tuple[str, ...] = ()):
        self.n = names
        #: columns of the parsed batch the cache and the batch's view keep besides their own (a chain's
        #: statements: ``spark.sources.STATEMENT_COLUMNS``)
        self.carry = tuple(carry)
        self.tables = tables
        self.topology = topology
        self.window = window
        self.physical_plan = physical_plan
        self.partitions = partitions
        #: a bounded lateness: the batch carries what judging it in each source's order needs
        self.lateness = lateness

    # --- pieces -------------------------------------------------------------------------------
    def _closing(self, b: BatchBounds, stage: int | None) -> str:
        """Matches (subject, time, stage, ni, e1, e2) of the report times closing in this batch."""
        n = self.n
        where_stage = "" if stage is None else f" AND stage = {stage}"
        pairs = n["pairs"] if stage is None else f"(SELECT * FROM {n['pairs']} WHERE stage = {stage})"
        if self.window is not None:
            return self._closing_windowed(b, stage, where_stage, pairs)
        # unbounded window: every earlier row of the subject; same-subject rows first, then the concept pair
        # is looked up in the broadcast conjunction table (pairs-first multiplies rows by partner counts)
        hint = "" if stage is None else f"/*+ REPARTITION({self.topology.stages[stage].parallelism}, subject) */ "
        cl = (f"SELECT {hint}stage, subject, cid, aid, time FROM {n['win']} "
              f"WHERE time >= b_lo AND time <= b_last{where_stage}")
        pt = f"SELECT {hint}stage, subject, cid, aid, time FROM {n['win']} WHERE time <= b_last{where_stage}"
        return (f"SELECT /*+ BROADCAST(p) */ c.subject, c.time, c.stage, p.pid, "
                f"least(named_struct('time', c.time, 'aid', c.aid), named_struct('time', o.time, 'aid', o.aid)) AS e1, "
                f"greatest(named_struct('time', c.time, 'aid', c.aid), named_struct('time', o.time, 'aid', o.aid)) AS e2 "
                f"FROM ({cl}) c JOIN ({pt}) o ON o.stage = c.stage AND o.subject = c.subject AND o.time <= c.time "
                f"JOIN {pairs} p ON p.stage = c.stage AND p.c1 = c.cid AND p.c2 = o.cid")

    def _closing_windowed(self, b: BatchBounds, stage: int | None, where_stage: str, pairs: str) -> str:
        """Bounded window: ONE exchange by subject, then each closing row collects the rows of its window
        with a RANGE frame (``t - w <= t' <= t``) and the concept pairs are looked up in the broadcast table.
        The aggregation by (subject, time) that follows needs no further exchange (its keys include the
        subject). Measured against the former bucketed self-join (two exchanges, each closing row exploded
        into the <= 2 time buckets its window touches): half the rows shuffled, one stage fewer.

        The frame is ordered by the time raised to at least ``TIME_MIN + w``: Spark computes a RANGE frame's
        start as the order value less w, which has no 64-bit value below ``TIME_MIN + w`` (an overflow error in
        ANSI mode, a wrapped frame without it). Rows below that share one order value, so the frame of a closing
        row at most ``TIME_MIN + 2w`` may hold rows outside its window: those are filtered out of its frame."""
        n, w = self.n, int(self.window)
        parts = self.partitions if stage is None else self.topology.stages[stage].parallelism
        floor = _i(TIME_MIN + w)       # a BIGINT (the literal -2^63 alone would be a DECIMAL)
        rows = (f"SELECT /*+ REPARTITION({parts}, subject) */ stage, subject, cid, aid, time, "
                f"time >= b_lo AS closing, xxhash64(subject) AS h FROM {n['win']} "
                f"WHERE time >= b_reach AND time <= b_last{where_stage}")
        framed = (f"SELECT stage, subject, cid, aid, time, closing, collect_list(named_struct('cid', cid, "
                  f"'aid', aid, 'time', time)) OVER (PARTITION BY h, stage, subject ORDER BY greatest(time, {floor}) "
                  f"RANGE BETWEEN {w} PRECEDING AND CURRENT ROW) AS framed FROM ({rows})")
        exact = (f"CASE WHEN time > {_i(TIME_MIN + 2 * w)} THEN framed "
                 f"ELSE filter(framed, e -> e.time <= time AND time - e.time <= {w}) END")
        closing = (f"SELECT stage, subject, cid, aid, time, o FROM ({framed}) "
                   f"LATERAL VIEW explode({exact}) x AS o WHERE closing")
        return (f"SELECT /*+ BROADCAST(p) */ c.subject, c.time, c.stage, p.pid, "
                f"least(named_struct('time', c.time, 'aid', c.aid), "
                f"named_struct('time', c.o.time, 'aid', c.o.aid)) AS e1, "
                f"greatest(named_struct('time', c.time, 'aid', c.aid), "
                f"named_struct('time', c.o.time, 'aid', c.o.aid)) AS e2 "
                f"FROM ({closing}) c JOIN {pairs} p ON p.stage = c.stage AND p.c1 = c.cid AND p.c2 = c.o.cid")

    # --- the relations of a batch (each read once by the final write; metrics via observe) ----------
    def _packing(self):
        """Bit layout of the packed choice key (``ir.lookup.choice_bits``: NI pair, distance back, earlier concept,
        later concept, stage), or None if it does not fit in 62 bits (unbounded window, huge TBox): min() over one
        BIGINT is a hash aggregation (min of a struct is a sort aggregation). tests/spark/test_sql.py checks that
        both choose the same reports."""
        return choice_bits(self.tables, self.window)

    def reports_sql(self, b: BatchBounds) -> str:
        """Reports closing in [lo, hi): one per (subject, time), naming its least violation by (NI, distance back
        of the earlier evidence, earlier concept, later concept, stage): the order of docs/consistency.md, "Which NI
        and evidence a report names", which the local runner keeps too. The later evidence's time is the report's
        (``e2`` is the closing row's), so only the earlier one's is kept."""
        if self.physical_plan == "staged":
            matches = " UNION ALL ".join(self._closing(b, k) for k in range(len(self.topology.stages)))
        else:
            matches = self._closing(b, None)
        # ids -> names: aid order is name order and pid order is (ni_l, ni_r) order, so both paths below choose
        # as a min over names would; the earlier evidence's time descending (the latest first): its distance back
        # from the report's time in the packed key, its bitwise complement in the struct (no overflow either way)
        arr = f"array({_strs(asserted_names(self.tables))})"
        nis = f"array({', '.join(f'array({_strs(p)})' for p in ni_pair_ids(self.tables))})"
        pk = self._packing()
        if pk is not None:
            sb, pb, db, ab = pk
            at = Packing.of(pk)
            key = (f"shiftleft(CAST(pid AS BIGINT), {at.pid}) + shiftleft(time - e1.time, {at.back}) + "
                   f"shiftleft(CAST(e1.aid AS BIGINT), {at.a1}) + shiftleft(CAST(e2.aid AS BIGINT), {at.a2}) + "
                   f"shiftleft(CAST(stage AS BIGINT), {at.stage})")

            def field(shift, bits):
                return f"(shiftright(k, {shift}) & {(1 << bits) - 1})"

            def concept(shift):
                return f"element_at({arr}, CAST({field(shift, ab)} AS INT) + 1)"

            return (f"SELECT CAST({field(at.stage, sb)} AS INT) AS stage, subject, time, "
                    f"element_at({nis}, CAST({field(at.pid, pb)} AS INT) + 1) AS ni, "
                    f"array_distinct(array(named_struct('concept', {concept(at.a1)}, 'time', "
                    f"time - {field(at.back, db)}), named_struct('concept', {concept(at.a2)}, 'time', time))) "
                    f"AS evidence "
                    f"FROM (SELECT subject, time, min({key}) AS k FROM ({matches}) m GROUP BY subject, time)")
        return (f"SELECT x.stage AS stage, subject, time, element_at({nis}, x.pid + 1) AS ni, "
                f"array_distinct(array(named_struct('concept', element_at({arr}, x.a1 + 1), 'time', ~(x.back)), "
                f"named_struct('concept', element_at({arr}, x.a2 + 1), 'time', time))) AS evidence "
                f"FROM (SELECT subject, time, min(named_struct('pid', pid, 'back', ~(e1.time), 'a1', e1.aid, "
                f"'a2', e2.aid, 'stage', stage)) AS x FROM ({matches}) m GROUP BY subject, time)")

    def batch_cache_sql(self, parsed: str) -> str:
        """The parsed batch as cached for the batch's jobs: the asserted concept as its id (``aid``, NULL for a
        concept no stage reads), and the columns only rejected records need (file, line, concept name, raw
        text, reason) NULL for every other record. Measured: the wide rows (the file path and the concept IRI
        on every tuple) were ~10% of all task CPU to build into the cache and to read back.

        With a bounded lateness a tuple's lateness is judged after the counters (``late_sql``): every row keeps
        its line, its file key and whether it is a possible descent (``spark.sources.parse_lines``), a file's
        first row its name and order, and a tuple of a concept no stage reads its concept name (a late one's
        text needs it)."""
        amap = (f"FROM {parsed} n LEFT JOIN {self.n['amap']} m ON n.ik = 't' AND m.asserted = n.concept")
        carried = "".join(f", n.{c}" for c in self.carry)
        if self.carry:      # a statement names its file and line (the program's side may reject it)
            first = " OR n.fst" if self.lateness is not None else ""
            return (f"SELECT /*+ BROADCAST(m) */ n.src, n.part, n.ik, n.time, n.subject, m.aid, "
                    f"CASE WHEN n.ik = 'x' OR n.part = 0{first} THEN n.file END AS file, "
                    f"coalesce(n.line, monotonically_increasing_id()) AS line, "
                    f"CASE WHEN n.ik = 't' AND m.aid IS NULL THEN n.concept END AS concept, n.raw, n.reason"
                    + (", CASE WHEN n.fst THEN n.fo END AS fo, n.fk, n.dsc" if self.lateness is not None else "")
                    + f"{carried} {amap}")
        if self.lateness is None:
            return (f"SELECT /*+ BROADCAST(m) */ n.src, n.part, n.ik, n.time, n.subject, m.aid, "
                    f"CASE WHEN n.ik = 'x' THEN n.file END AS file, CASE WHEN n.ik = 'x' THEN n.line END AS line, "
                    f"CAST(NULL AS STRING) AS concept, n.raw, n.reason {amap}")
        # a socket's rows (no line numbers) come in one partition in arrival order: their place in it orders them
        return (f"SELECT /*+ BROADCAST(m) */ n.src, n.part, n.ik, n.time, n.subject, m.aid, "
                f"CASE WHEN n.ik = 'x' OR n.fst THEN n.file END AS file, "
                f"coalesce(n.line, monotonically_increasing_id()) AS line, "
                f"CASE WHEN n.ik = 't' AND m.aid IS NULL THEN n.concept END AS concept, n.raw, n.reason, "
                f"CASE WHEN n.fst THEN n.fo END AS fo, n.fk, n.dsc {amap}")

    def batch_stats_sql(self, batch: str) -> str:
        """Per (source, asserted concept) counts and max event times of the cached batch: one small hash
        aggregate (rows = sources x vocabulary, never per tuple). It gives the batch's own watermark (so the
        batch can close up to W_b) and every per-batch counter; per-stage input counts follow on the driver
        from the lookup table. (Observing these on the 500k routed rows, as before, cost ~1 s per batch.)

        With a bounded lateness also per file (rows = files x vocabulary): its order, smallest and largest times
        and punctuation, and whether it has a possible descent: what ``file_entries`` judges the files by."""
        counts = ("count_if(ik = 't') AS tuples, count_if(ik = 'x') AS malformed, count_if(ik = 'p') AS punctuations, "
                  "max(CASE WHEN ik = 't' THEN time END) AS max_t, max(CASE WHEN ik = 'p' THEN time END) AS max_p")
        if self.lateness is None:
            return f"SELECT src, aid, {counts} FROM {batch} GROUP BY src, aid"
        # no string aggregate here (the file's name): its buffer is not fixed-width, and Spark then sorts the
        # batch for a sort aggregate instead of hashing it (+0.2 s per 250k-tuple batch); ``file_names_sql``
        return (f"SELECT src, fk, aid, {counts}, min(CASE WHEN ik = 't' THEN time END) AS min_t, "
                f"bool_or(dsc) AS dsc, max(fo) AS fo FROM {batch} GROUP BY src, fk, aid")

    def file_names_sql(self, batch: str) -> str:
        """Each file's name (its first line and its malformed lines carry it in the cached batch): a few rows,
        read only when the batch has late tuples to name or files of the same modification time to order."""
        return f"SELECT src, fk, max(file) AS name FROM {batch} WHERE file IS NOT NULL GROUP BY src, fk"

    def _late(self, floor: str, latest: str, row: str = "") -> tuple[str, str]:
        """Whether a tuple is late and why, given the floor and the largest time of its source before it (SQL;
        ``row``: the qualifier of the tuple's columns)."""
        L, time = int(self.lateness), f"{row}time"
        # NULL (nothing is behind) where latest - L is below the 64-bit range
        below, behind = f"{time} < {floor}", f"{time} < try_subtract({latest}, {L})"
        late = f"{row}ik = 't' AND coalesce({below} OR {behind}, false)"
        why = (f"CASE WHEN coalesce({below}, false) THEN concat('late: event time ', CAST({time} AS STRING), "
               f"' is below ', CAST({floor} AS STRING), ', the punctuation of its source') "
               f"ELSE concat('late: event time ', CAST({time} AS STRING), ' is more than {L} behind event time ', "
               f"CAST({latest} AS STRING), ', the latest of its source') END")
        return late, why

    def late_in_files_sql(self, entries: str) -> str:
        """The late tuples of the files with a possible descent (src, fk, line, part, aid, why): the largest time
        and punctuation of a file's earlier lines is a window ordered by line over that file's narrow rows alone
        (source, file, line, part, kind, time: a fraction of the batch's bytes to shuffle and sort), combined
        with the source's clock before the file. Few rows (the late ones), cached and broadcast."""
        frame = "PARTITION BY src, fk ORDER BY line, part ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING"
        rows = (f"SELECT /*+ BROADCAST(e) */ r.src, r.fk, r.line, r.part, r.ik, r.time, r.aid, e.e_max, e.e_floor "
                f"FROM {self.n['newc']} r JOIN {entries} e ON e.src = r.src AND e.fk = r.fk AND e.cand "
                f"WHERE r.ik IN ('t', 'p')")
        framed = (f"SELECT src, fk, line, part, ik, time, aid, e_max, e_floor, "
                  f"max(CASE WHEN ik = 't' THEN time END) OVER ({frame}) AS pm, "
                  f"max(CASE WHEN ik = 'p' THEN time END) OVER ({frame}) AS pf FROM ({rows})")
        late, why = self._late("greatest(e_floor, pf)", "greatest(e_max, pm)")
        return f"SELECT src, fk, line, part, aid, {why} AS why FROM ({framed}) WHERE {late}"

    def late_sql(self, entries: str | None, late_in_files: str | None = None) -> str:
        """The cached batch with its bounds and whether each tuple is late, with why (``late``, ``why``).

        Without ``entries`` (no file of the batch may hold a late tuple, or the lateness is unbounded) nothing
        is: the columns are constants. Otherwise the batch is joined (broadcast) with the entries of the files
        that may (``file_entries``: the largest time of the source and its floor before the file): in a file in
        time order a tuple is late when it is below that floor or more than the lateness behind that largest
        time; in a file with a possible descent, when it is one of ``late_in_files`` (``late_in_files_sql``)."""
        n = self.n
        if entries is None:
            return (f"SELECT /*+ BROADCAST(bnd) */ r.*, bnd.*, false AS late, CAST(NULL AS STRING) AS why "
                    f"FROM {n['newc']} r CROSS JOIN {n['bnd']} bnd")
        late, why = self._late("e.e_floor", "e.e_max", "r.")
        cols = ("r.src, r.part, r.ik, r.time, r.subject, r.aid, r.line, r.concept, r.raw, r.reason, r.fk, "
                "coalesce(r.file, e.name) AS file" + "".join(f", r.{c}" for c in self.carry))
        if late_in_files is None:
            return (f"SELECT /*+ BROADCAST(e), BROADCAST(bnd) */ {cols}, bnd.*, {late} AS late, "
                    f"CASE WHEN {late} THEN {why} END AS why FROM {n['newc']} r LEFT JOIN {entries} e "
                    f"ON e.src = r.src AND e.fk = r.fk CROSS JOIN {n['bnd']} bnd")
        plain = f"(NOT coalesce(e.cand, false) AND {late})"
        return (f"SELECT /*+ BROADCAST(e), BROADCAST(l), BROADCAST(bnd) */ {cols}, bnd.*, "
                f"l.why IS NOT NULL OR {plain} AS late, coalesce(l.why, CASE WHEN {plain} THEN {why} END) AS why "
                f"FROM {n['newc']} r LEFT JOIN {entries} e ON e.src = r.src AND e.fk = r.fk "
                f"LEFT JOIN {late_in_files} l ON l.src = r.src AND l.fk = r.fk AND l.line = r.line AND l.part = r.part "
                f"CROSS JOIN {n['bnd']} bnd")

    def late_counts_sql(self) -> str:
        """The late tuples of the batch per (source, asserted concept): the counters' correction, run only when
        a file may hold some."""
        return f"SELECT src, aid, count_if(late) AS late FROM {self.n['new']} GROUP BY src, aid"

    def window_sql(self, b: BatchBounds, with_new: bool = True) -> str:
        """The rows the closing join reads: previous state UNION the batch's accepted cached rows (< hi)."""
        n = self.n
        prev = f"SELECT stage, subject, cid, aid, time, b_lo, b_last, b_reach FROM {n['prev']}"
        if not with_new:
            return prev
        # both plans: the batch's cached stage rows by the broadcast lookup (the staged chain derives exactly these
        # rows; re-running its per-stage exchanges for the closing join measured slower)
        new = (f"SELECT /*+ BROADCAST(m) */ m.stage, a.subject, m.cid, m.aid, a.time, a.b_lo, "
               f"a.b_last, a.b_reach FROM {n['new']} a JOIN {n['cmap']} m ON m.aid = a.aid "
               f"WHERE a.ik = 't' AND NOT a.late AND a.time <= a.b_last AND m.cached")
        return f"{prev} UNION ALL {new}"

    def driver_rows_sql(self) -> str:
        """What closing a batch on the driver reads (``consistency.sweep``): the previous state, and the batch's
        accepted cached stage rows the window reaches or the state keeps (``fresh``)."""
        n = self.n
        return (f"SELECT false AS fresh, stage, subject, cid, aid, time FROM {n['prev']} UNION ALL "
                f"SELECT /*+ BROADCAST(m) */ true AS fresh, m.stage, a.subject, m.cid, m.aid, a.time "
                f"FROM {n['new']} a JOIN {n['cmap']} m ON m.aid = a.aid "
                f"WHERE a.ik = 't' AND NOT a.late AND m.cached AND a.time >= a.b_reach")

    def kept_sql(self, b: BatchBounds) -> str:
        return f"SELECT stage, subject, cid, aid, time FROM {self.n['prev']} WHERE time >= b_keep"

    def routed_sql(self, b: BatchBounds) -> str:
        """Fused: every record of the batch in ONE pass: its stage rows (state), or a rejected row."""
        n = self.n
        acc = "n.ik = 't' AND NOT n.late"
        return (f"SELECT /*+ BROADCAST(m) */ n.src, n.file, n.line, n.part, n.ik, n.time, n.subject, n.concept AS asserted, "
                f"n.raw, n.reason, m.stage, m.cid, n.aid, m.cached, n.why, "
                f"CASE WHEN m.cached AND n.time >= n.b_keep THEN 'state' "
                f"WHEN n.ik = 'x' OR (n.late AND n.part = 0) THEN 'rejected' "
                f"ELSE 'drop' END AS route "
                f"FROM {n['new']} n LEFT JOIN {n['cmap']} m ON {acc} AND m.aid = n.aid "
                # only rows that can be routed somewhere: in steady state most accepted rows are older than the
                # state cut-off (the batch spans more time units than the window) and are dropped before the join
                f"WHERE n.ik = 'x' OR (n.ik = 't' AND (n.late OR n.time >= n.b_keep))")

    def staged_rows_sql(self, b: BatchBounds) -> str:
        """Staged: stage k+1's input is computed from stage k's rows, one exchange by subject per stage."""
        n = self.n
        acc = (f"SELECT subject, aid, time, b_keep FROM {n['new']} "
               f"WHERE ik = 't' AND NOT late")
        ctes, prev = [], None
        for k, stage in enumerate(self.topology.stages):
            p = stage.parallelism
            if k == 0:
                body = (f"SELECT /*+ REPARTITION({p}, subject), BROADCAST(s) */ a.subject, s.cid, s.aid, "
                        f"a.time, a.b_keep FROM ({acc}) a JOIN {n['srcmap']} s ON s.aid = a.aid")
            else:
                body = (f"SELECT /*+ REPARTITION({p}, subject), BROADCAST(e) */ i.subject, e.next AS cid, "
                        f"i.aid, i.time, i.b_keep FROM {prev} i JOIN {n['emit']} e ON e.stage = {k - 1} "
                        f"AND e.cid = i.cid")
            ctes.append(f"in{k} AS ({body})")
            prev = f"in{k}"
        union = " UNION ALL ".join(
            f"SELECT /*+ BROADCAST(c) */ {k} AS stage, i.subject, i.cid, i.aid, i.time, i.b_keep, "
            f"(c.cid IS NOT NULL) AS cached FROM in{k} i LEFT JOIN "
            f"(SELECT cid FROM {n['cached']} WHERE stage = {k}) c ON c.cid = i.cid"
            for k in range(len(self.topology.stages)))
        return "WITH " + ", ".join(ctes) + " " + union

    def count_by_stage_exprs(self, name: str, cond: str = "true") -> list[str]:
        return [f"count_if(stage = {k} AND {cond}) AS {name}_{k}" for k in range(len(self.topology.stages))]

    def report_fields(self) -> dict:
        """A report's fields as the sinks write them, over rows of ``reports_sql`` (the stage as its id, the
        topology's label; no label: no field, as ``Report.to_dict``)."""
        label = self.topology.label
        return {"subject": "subject", "time": "time", "ni": "ni", "evidence": "evidence",
                "stage": f"element_at(array({_strs(self.tables.stage_ids)}), stage + 1)",
                "topology": sql_string(label) if label else "CAST(NULL AS STRING)"}

    def write_sql(self, routed: str | None, staged_rows: str | None, reports: str, kept: str | None,
                  b: BatchBounds) -> str:
        """The batch's one write (JSON lines, partitioned by kind): reports and rejected records already in the
        shape of the sinks' lines, so that the sink copies files instead of re-reading the entry with a job; and
        the state (kept + new). Columns are ordered so that each kind's fields (the others are NULL, hence
        absent from its lines) come in its own order: reports ``report_fields()``, rejected ``source, line, text,
        reason``, state ``subject, time, sk, cid, aid`` (``STORED_STATE_COLUMNS``)."""
        no = {"ni": "CAST(NULL AS ARRAY<STRING>)", "evidence": "CAST(NULL AS ARRAY<STRUCT<concept: STRING, time: BIGINT>>)",
              "subject": "CAST(NULL AS STRING)", "time": "CAST(NULL AS BIGINT)", "stage": "CAST(NULL AS STRING)",
              "topology": "CAST(NULL AS STRING)", "source": "CAST(NULL AS STRING)", "line": "CAST(NULL AS BIGINT)",
              "text": "CAST(NULL AS STRING)", "reason": "CAST(NULL AS STRING)", "sk": "CAST(NULL AS INT)",
              "cid": "CAST(NULL AS INT)", "aid": "CAST(NULL AS INT)"}

        def row(kind: str, **given) -> str:
            exprs = {c: given.get(c, no[c]) for c in STORED_FIELDS}
            return "SELECT " + ", ".join(c if e == c else f"{e} AS {c}" for c, e in exprs.items()) + f", {kind} AS kind"

        parts = [row("'report'", **self.report_fields()) + f" FROM {reports}"]
        state = dict(subject="subject", time="time", sk="stage", cid="cid", aid="aid")
        if kept:
            parts.append(row("'state'", **state) + f" FROM {kept}")
        # a late tuple's text: the line as the tuple (the concept name of a concept no stage reads is kept for it)
        names = f"array({_strs(asserted_names(self.tables))})"
        late_raw = f"concat(CAST(time AS STRING), '\\t', subject, ' ', coalesce({{}}, element_at({names}, aid + 1)))"
        line = "CASE WHEN startswith(file, 'tcp://') THEN NULL ELSE line END"     # a socket's lines are not numbered
        if routed:
            def when(route, column):
                return f"CASE WHEN route = '{route}' THEN {column} END"
            parts.append(row(
                "route", **{k: when("state", v) for k, v in state.items()},
                source=when("rejected", "file"), line=when("rejected", line),
                text=f"CASE WHEN route <> 'rejected' THEN NULL WHEN ik = 'x' THEN raw ELSE {late_raw.format('asserted')} END",
                reason=f"CASE WHEN route <> 'rejected' THEN NULL WHEN ik = 'x' THEN reason ELSE why END")
                + f" FROM {routed} WHERE route <> 'drop'")
        if staged_rows:
            parts.append(row("'state'", **state) + f" FROM {staged_rows} WHERE cached AND time >= b_keep")
            parts.append(row(
                "'rejected'", source="file", line=line,
                text=f"CASE WHEN ik = 'x' THEN raw ELSE {late_raw.format('concept')} END",
                reason="CASE WHEN ik = 'x' THEN reason ELSE why END")
                + f" FROM {self.n['new']} WHERE ik = 'x' OR (late AND part = 0)")
        return " UNION ALL ".join(parts)
