"""Event times are 64-bit integers on every runner: a stream at the ends of that range (down to -2^63, where t - w
has no 64-bit value, and up to 2^63 - 1) gives the local runner's reports on every Spark path: the driver's close,
the Spark write, the staged plan, an unbounded window, a bounded lateness (the watermark, the late tuples, the state
carried between micro-batches and its pruning)."""
import pytest

from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.owl import load_tbox
from srtopo.runners import LocalRunner, SparkOptions, SparkRunner
from srtopo.testing import run_topology, tuples
from tests.runners.test_every_runner import NS, TEX

MIN, MAX = -2 ** 63, 2 ** 63 - 1
W = 5
LATENESS = 10
X = "http://x/"


def _stream(with_late: bool):
    """(subject, concept, time) in time order but for one descent within the lateness (k), and, with a lateness,
    one tuple far behind (late) that every runner rejects."""
    s, f, a, b = NS + "Student", NS + "Faculty", NS + "Article", NS + "Book"
    out = [(X + "a", s, MIN), (X + "a", f, MIN), (X + "b", s, MIN), (X + "c", s, MIN), (X + "i", s, MIN),
           (X + "b", f, MIN + 3), (X + "k", s, MIN + 4), (X + "k", f, MIN + 2), (X + "c", f, MIN + 6),
           (X + "d", a, -2 ** 62 - 10), (X + "d", b, -2 ** 62 - 10), (X + "e", a, -2 ** 62), (X + "e", b, -2 ** 62 + 1)]
    if with_late:
        out.append((X + "late", s, MIN + 1))
    out += [(X + "f", s, 2 ** 62 - 1), (X + "f", f, 2 ** 62 - 1), (X + "g", s, 2 ** 62), (X + "g", f, 2 ** 62 + 5),
            (X + "h", s, MAX - 3), (X + "j", b, MAX), (X + "h", f, MAX), (X + "i", f, MAX), (X + "j", a, MAX)]
    return out


#: by hand, window 5: c's tuples are 6 apart, i's 2^64 - 1 apart; unbounded, both conflict
BOUNDED = {("a", MIN), ("b", MIN + 3), ("k", MIN + 4), ("d", -2 ** 62 - 10), ("e", -2 ** 62 + 1), ("f", 2 ** 62 - 1),
           ("g", 2 ** 62 + 5), ("h", MAX), ("j", MAX)}
UNBOUNDED = BOUNDED | {("c", MIN + 6), ("i", MAX)}

PATHS = {"fused-driver": SparkOptions(physical_plan="fused"),
         "fused-write": SparkOptions(physical_plan="fused", driver_tuples=0),
         "staged": SparkOptions(physical_plan="staged")}


@pytest.mark.parametrize("window,lateness", [(W, LATENESS), (W, None), (None, LATENESS)],
                         ids=["w5-lateness", "w5-unbounded-lateness", "unbounded-window"])
@pytest.mark.parametrize("path", list(PATHS))
def test_the_whole_64_bit_range_on_every_spark_path(spark, path, window, lateness):
    tex = load_tbox(TEX)
    topology = compile_ltm(tex, [1, 1, 1]) if path == "staged" else compile_ntm(tex)
    stream = _stream(with_late=lateness is not None)
    local = run_topology(LocalRunner(), topology, [tuples(stream, batches=3)], window=window, lateness=lateness)
    expected = {(X + s, t) for s, t in (BOUNDED if window is not None else UNBOUNDED)}
    assert local.keys == expected
    got = run_topology(SparkRunner(), topology, [tuples(stream, batches=3)], window=window, lateness=lateness,
                       options=PATHS[path])
    assert got.keys == expected
    assert sorted(r.to_json() for r in got.reports) == sorted(r.to_json() for r in local.reports)
    assert (got.counters.records, got.counters.malformed, got.counters.late) == \
           (local.counters.records, local.counters.malformed, local.counters.late)
    assert sorted((r.line, r.reason) for r in got.rejected) == sorted((r.line, r.reason) for r in local.rejected)
    assert local.counters.late == (1 if lateness is not None else 0)
