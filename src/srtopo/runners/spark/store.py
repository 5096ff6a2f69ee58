"""The exactly-once store of a Spark topology: one directory per micro-batch under ``CHECKPOINT/store``.

Layout: ``store/<batch>/kind=<k>/`` holds what batch <batch> wrote (JSON lines, partitioned by kind: the state the
next batch reads, its outputs, its rejected records, ...), and ``store/<batch>/_meta.json`` the small state of
the batch (event-time bookkeeping). The meta file is written last: an entry without one was never completed.

Protocol: batch b reads only the entry of the latest batch before it that completed, and overwrites its own
entry with content that is a deterministic function of (that entry, the batch's input as recorded in Spark's
offsets log). The batch counts as done only when Spark writes its commit-log entry after ``foreachBatch``
returns, so a crash at any point re-runs the uncommitted batch with the same id and input, which rewrites the
same files. Where a kind's output is not such a function (a choice program's answer sets), a replayed batch
whose entry is complete already reads its outcome back from it instead (``MicroBatchJob.reuse``): the entry is
completed before the sinks receive anything, so what they received is what the replay hands over again. Entry
b-1 is deleted only while batch b+1 runs (after b committed). An entry whose content builds on older ones (a
state written as a delta) names the oldest it needs in its meta (``needs``): entries from that one on are kept
as long as it may be read.
"""
from __future__ import annotations

import json


def batch_label(batch_id) -> str:
    """Directory name of a batch: zero-padded ids sort in batch order; other labels (``final``) as they are."""
    return batch_id if isinstance(batch_id, str) else f"{int(batch_id):010d}"


class BatchStore:
    def __init__(self, fs, root: str):
        self.fs = fs
        self.root = root.rstrip("/")
        self._last = None           # (id, meta) of the latest completed entry this process knows

    def entry(self, batch_id) -> str:
        return f"{self.root}/{batch_label(batch_id)}"

    def part(self, batch_id, kind: str) -> str:
        return f"{self.entry(batch_id)}/kind={kind}"

    def completed_before(self, batch_id: int):
        """(id, meta) of the latest completed entry older than ``batch_id``, or None."""
        if self._last is not None and self._last[0] < batch_id:
            return self._last
        ids = sorted((int(x) for x in self.fs.list_names(self.root) if x.isdigit()), reverse=True)
        for i in ids:
            if i >= batch_id:
                continue
            text = self.fs.read_text(f"{self.entry(i)}/_meta.json")
            if text:
                self._last = (i, json.loads(text))
                return self._last
        return None

    def completed(self, batch_id: int) -> dict | None:
        """The meta of batch ``batch_id``'s own entry if it is complete, else None."""
        text = self.fs.read_text(f"{self.entry(batch_id)}/_meta.json")
        return json.loads(text) if text else None

    def last_completed(self):
        return self.completed_before(2 ** 62)

    def complete(self, batch_id: int, meta: dict, previous=None) -> None:
        """Write the batch's meta (the entry is complete) and delete the entries no replay can need."""
        self.fs.write_text(f"{self.entry(batch_id)}/_meta.json", json.dumps(meta))
        self._last = (int(batch_id), meta)
        if previous is not None:   # previous (and what it needs) stays until this batch commits; older can go
            floor = min(previous[0], previous[1].get("needs", previous[0]))
            for name in self.fs.list_names(self.root):
                if name.isdigit() and int(name) < floor:
                    self.fs.delete(self.entry(int(name)))

    def forget(self) -> None:
        """Drop what this process remembers (a new query may have written entries since)."""
        self._last = None
