"""The Streamlog state as the Spark store keeps it (``runners.spark.slstate``): snapshots every few entries,
deltas between them. At every entry the state read back is the evaluator's whole state, and an evaluator
restored from it continues with the output of one that never stopped, with and without ``retain``."""
import random

import pytest

from srtopo.runners.spark import slstate
from srtopo.runners.spark.store import batch_label
from srtopo.streamlog import Streamlog, parse_program

PROGRAM = ("record(T,S,V) :- reading(T,S,V), not beaten(T,S,V).\n"
           "beaten(T,S,V) :- reading(T,S,V), reading(T0,S,V0), T0 < T, V0 >= V.\n#show record/3.\n")


class _FS:
    def __init__(self):
        self.files = {}

    def write_text(self, path, text):
        self.files[path] = text

    def read_text(self, path):
        return self.files.get(path)


class _Store:
    root = "store"

    def entry(self, batch_id):
        return f"store/{batch_label(batch_id)}"


def _batches(seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    t, out = 0, []
    for _ in range(12):
        lines = []
        for _ in range(rng.randint(2, 10)):
            t += rng.randint(0, 2)
            lines.append(f"reading({t},s{rng.randint(1, 9)},{rng.randint(0, 50)}).")
        out.append(lines)
    return out


@pytest.mark.parametrize("retain", [None, 3])
def test_every_entry_reads_back_the_whole_state_and_a_restart_from_it_continues_alike(monkeypatch, retain):
    monkeypatch.setattr(slstate, "EVERY", 4)
    program = parse_program(PROGRAM).check()
    batches = _batches(5)
    straight = Streamlog(program, retain=retain)
    expected = [[m for line in lines for m in straight.push(0, line)] for lines in batches]
    fs, store = _FS(), _Store()
    engine = Streamlog(program, retain=retain)
    previous, kinds = None, []
    for b, lines in enumerate(batches):
        upto = slstate.last_kept(engine)
        for line in lines:
            engine.push(0, line)
        meta = slstate.write(fs, store, b, engine, previous, upto)
        kinds.append("snapshot" if meta["depth"] == 0 else "delta")
        previous = (b, meta)
        assert slstate.read(fs, store, b) == engine.state()
        # a new process restarting from entry b gives the rest of the output
        restarted = Streamlog(program, retain=retain)
        restarted.restore(slstate.read(fs, store, b))
        rest = [[m for line in later for m in restarted.push(0, line)] for later in batches[b + 1:]]
        assert rest == expected[b + 1:]
    assert kinds == ["snapshot", "delta", "delta", "delta"] * 3
    assert sum(len(m) for m in expected) > 12
