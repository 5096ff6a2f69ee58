"""Several sources merged by event time on Spark (the synchronized union: a time is final only once every
source's watermark passed it). RDF graph files on every runner: tests/runners."""
import os

from srtopo.concepts import RDF_TYPE
from srtopo.ontology.model import TBox
from srtopo.ontology.nis import analyse
from srtopo.topology.compile import compile_ntm
from srtopo.topology.runners import RunConfig, SparkOptions, SparkRunner
from srtopo.topology.sources import TntFiles
from srtopo.topology.spark.sql import NEG
from srtopo.topology.tnt import format_tnt

EX = "http://ex.org/r#"
TBOX = TBox.build([(EX + "Student", EX + "Person")], [(EX + "Person", EX + "Course"),
                                                       ("exists:" + EX + "teaches", EX + "Student")])


def test_synchronized_union_waits_for_every_source(spark, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "a0.tnt").write_text("\n".join(format_tnt(t, EX + "x", RDF_TYPE, EX + "Person") for t in range(0, 50)) + "\n")
    (b / "b0.tnt").write_text("# nothing yet\n")
    topo = compile_ntm(analyse(TBOX))
    config = RunConfig(window=2, lateness=0, checkpoint=str(tmp_path / "ck"), out=str(tmp_path / "out"),
                       options=SparkOptions(once=True))
    sources = [TntFiles(str(a)), TntFiles(str(b))]
    first = SparkRunner().run(topo, sources, config)
    # source b has sent no tuple: the merged watermark cannot pass anything
    assert first.batches[-1].detail["watermark"] == NEG
    (b / "b1.tnt").write_text(format_tnt(40, EX + "x", RDF_TYPE, EX + "Course") + "\n# watermark 60\n")
    os.utime(b / "b1.tnt", (4_000_000_000, 4_000_000_000))
    second = SparkRunner().run(topo, sources, config)
    assert second.batches[-1].detail["watermark"] == 49   # min(a: 49, b: 60 by punctuation)
    assert second.keys == {(EX + "x", t) for t in range(40, 43)}
