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

The driver keeps the rows its last entry gave the next batch (pending records, history), tagged with the
entry's token; a batch whose previous entry carries another token (written by the executors' plan, or by
another process before a restart) reads them from the store.
"""
from __future__ import annotations

import json
from dataclasses import replace

from srtopo.ir.records import INTEGER_TEXT
from srtopo.rules.partition import (
    BOUNDS,
    CURRENT,
    HISTORY,
    KEPT_HISTORY,
    META,
    METRICS,
    MODEL,
    PENDING,
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
#: a history row's fields after (kind, time, sig, atom, args): persistent, then nulls (``partition._row``)
_HISTORY_TAIL = (True,) + (None,) * 8


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


#: one encoder for every line (``json.dumps`` with options builds a new one per call: a third of the write)
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _line(fields: dict) -> str:
    """A JSON line as Spark's writer prints it: the fields in order, null fields left out."""
    return _ENCODE({k: v for k, v in fields.items() if v is not None})


class DriverPasses:
    """A rules job's passes on the driver (``RulesJob`` holds one)."""

    def __init__(self, job):
        self.job = job
        self.specs = [replace(s, partitions=1, next_partitions=0 if s.last else 1) for s in job.specs]
        self._kept = None        # (token, first-input rows) of the last entry written here

    def first_input(self, previous) -> list[tuple]:
        """The previous entry's pending records and history as first-segment rows."""
        if previous is None:
            return []
        token = previous[1].get("token")
        if self._kept is not None and token is not None and self._kept[0] == token:
            return self._kept[1]
        fs, store = self.job.fs, self.job.store
        rows = []
        for line in fs.read_lines(store.part(previous[0], "pending")):
            r = json.loads(line)
            stamp = r.get("timestamp")
            rows.append(_row(CURRENT, r.get("time"), r.get("sig"), r.get("atom"), r.get("args"), True, r.get("src"),
                             r.get("source"), r.get("line"), None if stamp is None else str(stamp)))
        for line in fs.read_lines(store.part(previous[0], "history")):
            r = json.loads(line)
            rows.append(_row(HISTORY, r.get("time"), r.get("sig"), r.get("atom"), r.get("args"), True))
        return rows

    def run(self, plan, lines: list[tuple], origin: dict, batch_id, previous, target: str, token: str) -> dict:
        """Evaluate the batch's ``lines`` and write the entry at ``target``; returns what the executors' plan
        observes of its write (the meta text, per-segment metrics)."""
        job = self.job
        rows = list(self.first_input(previous))
        rows.append(_row(BOUNDS, plan.fixed_hi, part=0))
        if lines:
            rows.extend(parse_pass(lines, {k: tuple(v) for k, v in origin.items()}, job.unit, job.number_scale, 1,
                                   int(batch_id)))
        for k, spec in enumerate(self.specs):
            ev = evaluator((job.stage_keys[k], k), job.stage_json[k], 0, 1, job.strategy)
            rows = segment_pass(spec, plan, 0, rows, ev)
        return self._write(rows, target, token)

    def _write(self, rows: list[tuple], target: str, token: str) -> dict:
        """The last segment's rows as the store entry (one file per kind, as ``RulesJob._stored_sql`` shapes
        them) and the observed values."""
        observed: dict = {}
        files: dict[str, list[str]] = {}
        kept: list[tuple] = []
        history = files["history"] = []      # the most rows: printed without a dict each
        heads: dict = {}                     # (time, sig) -> the line's start
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
                head = heads.get((r[1], r[2]))
                if head is None:
                    head = heads[(r[1], r[2])] = f'{{"time":{int(r[1])},"sig":{_ENCODE(r[2])},"atom":'
                history.append(head + _ENCODE(r[3]) + ("}" if r[4] is None else f',"args":{_ENCODE(r[4])}}}'))
                kept.append((HISTORY,) + r[1:5] + _HISTORY_TAIL)
            elif kind == PENDING:
                files.setdefault("pending", []).append(_line(
                    {"time": r[1], "timestamp": json_stamp(r[9]), "sig": r[2], "atom": r[3], "args": r[4],
                     "src": r[6], "source": r[7], "line": r[8]}))
                kept.append(_row(CURRENT, r[1], r[2], r[3], r[4], True, r[6], r[7], r[8], r[9]))
            elif kind == REJECTED:
                files.setdefault("rejected", []).append(_line(
                    {"source": r[7], "line": r[8], "text": r[11], "reason": r[12]}))
            elif kind == META:
                observed["meta"] = r[11]
            elif kind == METRICS:
                for i, name in ((0, "r"), (1, "d")):
                    key = f"{name}{r[8]}"
                    observed[key] = observed.get(key, 0) + int(r[4][i])
        fs = self.job.fs
        fs.delete(target)
        fs.mkdirs(target)
        for kind, lines in files.items():
            if lines:
                fs.write_text(f"{target}/kind={kind}/{PART_FILE}", "\n".join(lines) + "\n")
        self._kept = (token, kept)
        return observed
