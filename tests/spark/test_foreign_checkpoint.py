"""A checkpoint written for another query is refused with a message saying so (Spark alone would reuse its
offsets and state silently); the same query restarts on it."""
import pytest

from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.consistency.tbox import TBox
from srtopo.errors import TopologyError
from srtopo.io.tnt import format_tnt
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import SparkOptions, get_runner
from srtopo.testing import lines, run_topology

EX = "http://ex.org/c#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def _topology(nis):
    return compile_ntm(analyse(TBox.build([], [(EX + a, EX + b) for a, b in nis])))


def test_a_checkpoint_of_another_query_is_refused(spark, tmp_path):
    runner = get_runner("spark")
    checkpoint = str(tmp_path / "ck")
    stream = lines([format_tnt(t, EX + "x", RDF_TYPE, EX + c) for t, c in ((1, "A"), (2, "B"), (3, "C"))])
    first = _topology([("A", "B")])
    run = lambda topology, window=5, source=stream: run_topology(   # noqa: E731
        runner, topology, [source], window=window, lateness=10, checkpoint=checkpoint, options=SparkOptions())
    assert run(first).keys == {(EX + "x", 2)}
    again = run(first)                  # the same query on its own checkpoint: nothing new, nothing refused
    assert not again.rejected
    with pytest.raises(TopologyError, match="written for another query: its topology"):
        run(_topology([("A", "C")]))   # another TBox
    with pytest.raises(TopologyError, match=r"its window \(5\) differs"):
        run(first, window=7)
    with pytest.raises(TopologyError, match="another query: its topology .a consistency topology"):
        run(compile_program(parse_program("b(X) :- a(X).")), source=lines(['{"time": 0, "atoms": ["a(1)"]}']))


def test_a_run_going_on_with_a_larger_lateness_is_refused_or_takes_the_checkpoints(spark, tmp_path):
    """Batches closed every event time below their watermark: a later run on the checkpoint with a larger
    lateness (None: unbounded, what a --once run defaults to) would close some of them again. Given, it is
    refused; left to the default, the run goes on with the checkpoint's lateness, and every report is written
    once, as by one run over the whole stream."""
    from srtopo.io.sources import TntFiles
    runner = get_runner("spark")
    rows = [format_tnt(t, EX + f"s{t // 2 % 3}", RDF_TYPE, EX + ("A" if t % 2 else "B")) for t in range(40)]
    topology = _topology([("A", "B")])
    whole = run_topology(runner, topology, [lines(rows)], window=2, lateness=0,
                         checkpoint=str(tmp_path / "whole"), options=SparkOptions())
    stream, checkpoint = tmp_path / "in", str(tmp_path / "ck")
    stream.mkdir()
    (stream / "a.tnt").write_text("\n".join(rows[:20]) + "\n")
    run_topology(runner, topology, [TntFiles(str(stream))], window=2, lateness=0, checkpoint=checkpoint,
                 options=SparkOptions())
    (stream / "b.tnt").write_text("\n".join(rows[20:]) + "\n")
    with pytest.raises(TopologyError, match="written by a run with lateness 0: going on with 5"):
        run_topology(runner, topology, [TntFiles(str(stream))], window=2, lateness=5, checkpoint=checkpoint,
                     options=SparkOptions())
    rest = run_topology(runner, topology, [TntFiles(str(stream))], window=2, lateness=None, checkpoint=checkpoint,
                        options=SparkOptions())
    got = [(r.subject, r.time) for r in rest.reports]   # the run's output folder: every batch's, both runs'
    assert len(got) == len(set(got)) > 10
    assert sorted(got) == sorted((r.subject, r.time) for r in whole.reports)
