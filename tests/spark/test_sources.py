"""RDF files in rdflib formats (one timestamped graph per file) and several sources merged by event time."""
import os

from srtopo.ontology.model import TBox
from srtopo.ontology.nis import analyse
from srtopo.topology.compile import compile_ntm
from srtopo.topology.runners.local import LocalRunner
from srtopo.topology.spark import RdfSource, SparkConsistencyRunner, TntSource
from srtopo.topology.spark.plan import NEG
from srtopo.topology.tnt import RDF_TYPE, format_tnt, parse_tnt_lines

EX = "http://ex.org/r#"
TBOX = TBox.build([(EX + "Student", EX + "Person")], [(EX + "Person", EX + "Course"),
                                                       ("exists:" + EX + "teaches", EX + "Student")])


def _ttl(path, triples, generated=None):
    lines = [f"<{s}> <{p}> <{o}> ." for s, p, o in triples]
    if generated is not None:
        lines.append(f'<{EX}graph> <http://www.w3.org/ns/prov#generatedAtTime> "{generated}"^^'
                     f'<http://www.w3.org/2001/XMLSchema#integer> .')
    path.write_text("\n".join(lines) + "\n")


def test_rdf_graph_files_turtle_and_ntriples(spark, tmp_path):
    d = tmp_path / "graphs"
    d.mkdir()
    _ttl(d / "obs-0001.ttl", [(EX + "a", RDF_TYPE, EX + "Student"), (EX + "b", EX + "teaches", EX + "c")])
    _ttl(d / "obs-0002.nt", [(EX + "a", RDF_TYPE, EX + "Course"), (EX + "b", RDF_TYPE, EX + "Student")])
    _ttl(d / "late-name-99.ttl", [(EX + "c", RDF_TYPE, EX + "Person")], generated=3)
    (d / "broken-4.ttl").write_text("this is not turtle <<<\n")
    for i, name in enumerate(sorted(os.listdir(d))):
        os.utime(d / name, (1_600_000_000 + i, 1_600_000_000 + i))
    topo = compile_ntm(analyse(TBOX))
    runner = SparkConsistencyRunner(topo, 5, lateness=None, spark=spark)
    got = {(r["subject"], r["time"]) for r in runner.run_once(
        [RdfSource(str(d))], out=str(tmp_path / "out"), checkpoint=str(tmp_path / "ck")).collect()}
    lines = [format_tnt(1, EX + "a", RDF_TYPE, EX + "Student"), format_tnt(1, EX + "b", EX + "teaches", EX + "c"),
             format_tnt(2, EX + "a", RDF_TYPE, EX + "Course"), format_tnt(2, EX + "b", RDF_TYPE, EX + "Student"),
             format_tnt(3, EX + "c", RDF_TYPE, EX + "Person")]
    want = {r.key for r in LocalRunner(topo, 5).run(parse_tnt_lines(lines))}
    assert got == want == {(EX + "a", 2), (EX + "b", 2)}
    rejected = runner.rejected().collect()
    assert len(rejected) == 1 and rejected[0]["source"].endswith("broken-4.ttl")


def test_synchronized_union_waits_for_every_source(spark, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "a0.tnt").write_text("\n".join(format_tnt(t, EX + "x", RDF_TYPE, EX + "Person") for t in range(0, 50)) + "\n")
    (b / "b0.tnt").write_text("# nothing yet\n")
    topo = compile_ntm(analyse(TBOX))
    runner = SparkConsistencyRunner(topo, 2, lateness=0, spark=spark)
    runner.start([TntSource(str(a)), TntSource(str(b))], out=str(tmp_path / "out"), checkpoint=str(tmp_path / "ck"),
                 once=True)
    runner.await_query()
    # source b has sent no tuple: the merged watermark cannot pass anything
    assert runner.batch_metrics[-1]["watermark"] == NEG
    (b / "b1.tnt").write_text(format_tnt(40, EX + "x", RDF_TYPE, EX + "Course") + "\n# watermark 60\n")
    os.utime(b / "b1.tnt", (4_000_000_000, 4_000_000_000))
    runner.start([TntSource(str(a)), TntSource(str(b))], out=str(tmp_path / "out"), checkpoint=str(tmp_path / "ck"),
                 once=True)
    runner.await_query()
    assert runner.batch_metrics[-1]["watermark"] == 49   # min(a: 49, b: 60 by punctuation)
    runner.finish()
    got = {(r["subject"], r["time"]) for r in runner.reports().collect()}
    assert got == {(EX + "x", t) for t in range(40, 43)}
