"""A small rule micro-batch evaluated in one process (the Spark runner's driver): the passes its executor tasks
run (``partition``), called in-process, writing the same store entry.

Each Python stage of the executors' plan (``runners.spark.rules``) costs Spark 60-80 ms on local[2] whatever it
holds, and each shuffle ~80 ms more: a micro-batch of one time point took ~0.45-0.6 s there, where its own work
is 10-100 ms (docs/spark.md, "Latency or throughput"). So a small micro-batch is collected to the driver (the
stream's offsets, trigger and commit log stay Spark's), run through the same passes in one partition
(``partition.parse_pass``, ``segment_pass``: every key in one clingo call per time point, which gives the same
models as any partitioning), and written as the same store entry the executors' plan writes. Either plan
continues from the other's entry, so a stream may switch plan batch by batch (a burst goes to the executors,
the paced stream after it to the driver).

An entry's history is a delta: the persistent atoms of the time points it evaluated, with the entries before
it still in the windows' reach named in its meta (``history_chain``); every ``CHAIN_LIMIT`` entries one writes
the whole history again (a snapshot), so a reader lists a bounded number of directories. The driver keeps the
pending records and the history its last entry left, tagged with the entry's token, and its evaluators end
where that entry does: the next batch continues from them (no history handed to clingo again, none rewritten).
A batch whose previous entry carries another token (written by the executors' plan, by another query, or by
another process before a restart) reads them from the store and hands the history to the evaluators again.
"""
from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import replace

from srtopo.ir.records import INTEGER_TEXT, json_line
from srtopo.rules.partition import (
    BOUNDS,
    CURRENT,
    HISTORY,
    KEPT_HISTORY,
    META,
    METRICS,
    MODEL,
    PENDING,
    POINT,
    REJECTED,
    UNSATISFIABLE,
    _row,
    evaluator,
    parse_pass,
    record_order,
    segment_pass,
)

#: the file of each kind in a driver-written entry (Spark's readers take any name not starting with _ or .)
PART_FILE = "part-00000-driver.json"
#: the most entries a history chain names before an entry writes its whole history (a snapshot): each one is a
#: directory more that the executors' plan, or the driver after a restart, lists and reads
CHAIN_LIMIT = 24


def history_chain(previous) -> list[list[int]]:
    """The entries holding the history the batch after entry ``previous`` reads: [batch, last time point it
    evaluated] each. An entry written before histories were deltas holds the whole history itself."""
    if previous is None:
        return []
    meta = previous[1]
    if "history" in meta:
        return [[int(b), int(hi)] for b, hi in meta["history"]]
    return [[int(previous[0]), int(meta["closed"])]]


def next_chain(chain: list, snapshot: bool, batch_id, hi: int, max_reach: int, wrote: bool) -> list[list[int]]:
    """The chain after a batch that evaluated up to ``hi`` and wrote history rows (``wrote``): the entries still
    holding time points in the windows' reach, and this one."""
    kept = [] if snapshot else [e for e in chain if e[1] > hi - max_reach]
    if wrote:
        kept.append([int(batch_id), int(hi)])
    return kept


def first_records(rows) -> dict:
    """Per source, its first accepted record with a timestamp in the source's order: src -> (file, line, file
    order, time kind, time value). ``rows``: (src, file, line, raw, fmt, duplicates, file order); a socket's
    lines (no line number) are numbered in the order given."""
    from srtopo.rules.log import record_row
    from srtopo.rules.timestamps import GIVEN
    best: dict = {}
    arrived = 0
    for src, file, line, raw, fmt, dup, fo in rows:
        if line is None:
            line, arrived = arrived, arrived + 1
        if src in best and record_order(src, best[src][2], best[src][0], best[src][1]) <= \
                record_order(src, fo, file, line):
            continue
        row = record_row(raw if raw is not None else "", fmt, bool(dup))
        if row is not None and row[5] is None and row[0] != GIVEN:
            best[src] = (file, line, fo, row[0], row[1])
    return best


def json_stamp(stamp):
    """A log timestamp as the entry's JSON value: a number if it is an integer written plainly, else its text
    (what the executors' plan writes through a VARIANT, and ``records.Model.to_dict`` writes)."""
    if stamp is None:
        return None
    return int(stamp) if INTEGER_TEXT.fullmatch(stamp) else stamp


def _line(fields: dict) -> str:
    """A JSON line as Spark's writer prints it: the fields in order, null fields left out."""
    return json_line({k: v for k, v in fields.items() if v is not None})


class DriverPasses:
    """A rules job's passes on the driver (``RulesJob`` holds one). The evaluators are the process's (``partition
    .evaluator``: a restarted query, or a service's next query of the program, finds them built); their solvers
    and windows' history continue from batch to batch while the entries are this driver's."""

    def __init__(self, job):
        self.job = job
        self.specs = [replace(s, partitions=1, next_partitions=0 if s.last else 1) for s in job.specs]
        #: (token, pending rows, history (time, sig, atom, args)) of the last entry written here
        self._kept = None

    def evaluators(self) -> list:
        job = self.job
        return [evaluator((job.stage_keys[k], k), job.stage_json[k], 0, 1, job.strategy)
                for k in range(len(self.specs))]

    def _read(self, previous, chain) -> tuple[list, list]:
        """The pending records (first-segment rows) of entry ``previous`` and the history of its chain."""
        fs, store = self.job.fs, self.job.store
        pending, history = [], []
        if previous is None:
            return pending, history
        for line in fs.read_lines(store.part(previous[0], "pending")):
            r = json.loads(line)
            stamp = r.get("timestamp")
            pending.append(_row(CURRENT, r.get("time"), r.get("sig"), r.get("atom"), r.get("args"), True,
                                r.get("src"), r.get("source"), r.get("line"), None if stamp is None else str(stamp)))
        for batch, _hi in chain:
            for line in fs.read_lines(store.part(batch, "history")):
                r = json.loads(line)
                args = r.get("args")
                history.append((r.get("time"), r.get("sig"), r.get("atom"), tuple(args) if args is not None else None))
        return pending, history

    def run(self, plan, lines: list[tuple], origin: dict, batch_id, previous, chain, target: str, token: str) -> dict:
        """Evaluate the batch's ``lines`` and write the entry at ``target`` (its history a snapshot where
        ``plan.snapshot``); returns what the executors' plan observes of its write (the meta text, per-segment
        metrics, history rows written)."""
        evaluators = self.evaluators()
        with ExitStack() as held:
            for ev in evaluators:       # in segment order: queries of one program take them in the same order
                held.enter_context(ev.lock)
            return self._run(evaluators, plan, lines, origin, batch_id, previous, chain, target, token)

    def _run(self, evaluators, plan, lines, origin, batch_id, previous, chain, target, token) -> dict:
        job = self.job
        kept, self._kept = self._kept, None        # stale until this batch is written
        # the first time point evaluated, as ``segment_pass`` takes it: from the stream's first one on
        lo = plan.closed + 1 if plan.first is None else max(plan.closed + 1, int(plan.first))
        mark = previous[1].get("token") if previous is not None else None
        own = kept is not None and mark is not None and kept[0] == mark
        continues = own and all(ev.resumes == mark and ev.reasoner.time == lo for ev in evaluators)
        for ev in evaluators:
            ev.resumes = None
        pending, history = (kept[1], kept[2]) if own else self._read(previous, chain)
        rows = list(pending)
        rows.extend(_row(POINT, t, part=0) for t in sorted({r[1] for r in pending}))
        if not continues:
            rows.extend(_row(HISTORY, t, sig, atom, list(args) if args is not None else None, True)
                        for t, sig, atom, args in history)
        rows.append(_row(BOUNDS, plan.fixed_hi, part=0))
        if lines:
            rows.extend(parse_pass(lines, {k: tuple(v) for k, v in origin.items()}, job.unit, job.number_scale, 1,
                                   int(batch_id)))
        passes = replace(plan, snapshot=False)      # the history given is kept here, not passed through
        for k, spec in enumerate(self.specs):
            rows = segment_pass(spec, passes, 0, rows, evaluators[k], continues, job.check_stop)
        observed = self._write(rows, history, plan.snapshot, target, token)
        for ev in evaluators:
            ev.resumes = token
        return observed

    def _write(self, rows: list[tuple], history: list, snapshot: bool, target: str, token: str) -> dict:
        """The last segment's rows as the store entry (one file per kind, as ``RulesJob._stored_sql`` shapes
        them) and the observed values."""
        observed: dict = {}
        files: dict[str, list[str]] = {}
        pending: list[tuple] = []
        new: list[tuple] = []
        print_empty = self.job.print_empty
        for r in rows:
            kind = r[0]
            if kind == MODEL:
                if not print_empty and not r[5]:
                    continue
                no_answer = r[12] == UNSATISFIABLE
                files.setdefault("model", []).append(_line(
                    {"time": r[1], "atoms": [] if no_answer else r[10], "timestamp": json_stamp(r[9]),
                     "unsatisfiable": True if no_answer else None}))
            elif kind == KEPT_HISTORY:
                new.append((r[1], r[2], r[3], tuple(r[4]) if r[4] is not None else None))
            elif kind == PENDING:
                files.setdefault("pending", []).append(_line(
                    {"time": r[1], "timestamp": json_stamp(r[9]), "sig": r[2], "atom": r[3], "args": r[4],
                     "src": r[6], "source": r[7], "line": r[8]}))
                pending.append(_row(CURRENT, r[1], r[2], r[3], r[4], True, r[6], r[7], r[8], r[9]))
            elif kind == REJECTED:
                files.setdefault("rejected", []).append(_line(
                    {"source": r[7], "line": r[8], "text": r[11], "reason": r[12]}))
            elif kind == META:
                observed["meta"] = r[11]
            elif kind == METRICS:
                for i, name in ((0, "r"), (1, "d")):
                    key = f"{name}{r[8]}"
                    observed[key] = observed.get(key, 0) + int(r[4][i])
        cut = int(json.loads(observed["meta"])["hi"]) - self.specs[-1].max_reach
        history = [h for h in history if h[0] > cut] + new
        written = history if snapshot else new
        files["history"] = _history_lines(written)
        observed["h"] = len(written)
        fs = self.job.fs
        fs.delete(target)
        fs.mkdirs(target)
        for kind, lines in files.items():
            if lines:
                fs.write_text(f"{target}/kind={kind}/{PART_FILE}", "\n".join(lines) + "\n")
        self._kept = (token, pending, history)
        return observed


def _history_lines(history: list[tuple]) -> list[str]:
    """History rows (time, sig, atom, args) as the entry's JSON lines (the most rows: printed without a dict)."""
    heads: dict = {}                     # (time, sig) -> the line's start
    out = []
    for t, sig, atom, args in history:
        head = heads.get((t, sig))
        if head is None:
            head = heads[(t, sig)] = f'{{"time":{int(t)},"sig":{json_line(sig)},"atom":'
        out.append(head + json_line(atom) + ("}" if args is None else f',"args":{json_line(args)}}}'))
    return out
