"""A Streamlog evaluator's state in the exactly-once store: a full snapshot now and then, a delta per batch.

A Streamlog history grows with the stream (rules read earlier timestamps), so writing the whole state at every
batch would make a batch cost more the longer the stream has run. An entry holds either ``state.json``, the
whole ``Streamlog.state()``, or ``delta.json``: the state without the history, the history of the timestamps
evaluated since the entry it continues (``base``), and where the history now starts (``kept_from``: ``retain``
drops the oldest). The state at an entry is its last snapshot with the deltas after it applied in order.

Every ``EVERY`` entries the state is written whole again, so a restart reads at most that many deltas. Which
entries are snapshots follows from the chain alone (``depth`` in the meta), so a replayed batch rewrites the same
files; the meta names the snapshot it needs (``needs``), and ``BatchStore`` keeps the entries from there on.
"""
from __future__ import annotations

import json

from srtopo.errors import TopologyError

SNAPSHOT = "state.json"
DELTA = "delta.json"
#: a snapshot every this many entries
EVERY = 32


def chain_meta(previous) -> tuple[int, int | None]:
    """(depth, snapshot) of the entry ``previous`` (id, meta): deltas since its snapshot, and the snapshot's id
    (an entry of an earlier version, without them, holds a snapshot)."""
    if previous is None:
        return 0, None
    meta = previous[1] or {}
    return meta.get("depth", 0), meta.get("needs", previous[0])


def write(fs, store, batch_id: int, engine, previous, kept_upto) -> dict:
    """Write the state of ``engine`` after batch ``batch_id`` into its entry: a delta over ``previous`` (the
    history after ``kept_upto``, the last timestamp of its history) or, every ``EVERY`` entries and at the start,
    a snapshot. The meta fields that say which."""
    entry = store.entry(batch_id)
    depth, snapshot = chain_meta(previous)
    if previous is None or depth + 1 >= EVERY:
        fs.write_text(f"{entry}/{SNAPSHOT}", json.dumps(engine.state()))
        return {"depth": 0, "needs": int(batch_id)}
    delta = engine.state(after=kept_upto)
    delta["base"] = int(previous[0])
    delta["kept_upto"] = kept_upto
    fs.write_text(f"{entry}/{DELTA}", json.dumps(delta))
    return {"depth": depth + 1, "needs": snapshot}


def read(fs, store, entry_id: int) -> dict | None:
    """The whole state at entry ``entry_id``: its snapshot with the deltas up to it applied, or None."""
    deltas = []
    at = entry_id
    while True:
        text = fs.read_text(f"{store.entry(at)}/{SNAPSHOT}")
        if text is not None:
            state = json.loads(text)
            break
        text = fs.read_text(f"{store.entry(at)}/{DELTA}")
        if text is None:
            if deltas:
                raise TopologyError(f"the Streamlog state of store entry {entry_id} continues entry {at}, which is "
                                   "gone", hint="start over on a new checkpoint")
            return None
        delta = json.loads(text)
        deltas.append(delta)
        at = delta["base"]
    for delta in reversed(deltas):
        state = apply(state, delta)
    return state


def apply(state: dict, delta: dict) -> dict:
    """The state after ``delta``: its small parts replaced, the history cut at ``kept_from`` and extended."""
    start = delta.get("kept_from")
    kept = [pair for pair in state["kept"] if start is not None and pair[0] >= start]
    kept += delta["kept"]
    return {**{k: v for k, v in delta.items() if k not in ("base", "kept_upto")}, "kept": kept}


def last_kept(engine) -> int | None:
    """The timestamp of the latest history the evaluator keeps (what the next delta starts after)."""
    kept = engine.evaluator.kept
    return kept[-1][0] if kept else None
