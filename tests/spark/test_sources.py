"""Several sources merged by event time on Spark (the synchronized union: a time is final only once every
source's watermark passed it). RDF graph files on every runner: tests/runners."""
import os

from srtopo.concepts import RDF_TYPE
from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.consistency.tbox import TBox
from srtopo.io.sources import TntFiles
from srtopo.io.tnt import format_tnt
from srtopo.runners import RunConfig, SparkOptions, SparkRunner
from srtopo.runners.spark.sql import NEG

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


def test_a_directory_is_read_in_modification_time_order_by_both_runners(spark, tmp_path):
    """Files named against their modification times: both runners read them in modification-time order (what
    Spark's file source takes new files in), so both reject the same line as late, whatever the batches."""
    from srtopo.runners import LocalRunner
    d = tmp_path / "in"
    d.mkdir()
    for name, t, mtime in (("c.tnt", 10, 1), ("b.tnt", 20, 2), ("a.tnt", 15, 3)):
        (d / name).write_text(format_tnt(t, EX + "x", RDF_TYPE, EX + "Person") + "\n")
        os.utime(d / name, (1_600_000_000 + mtime, 1_600_000_000 + mtime))
    topo = compile_ntm(analyse(TBOX))
    for per_batch in (1, 3):
        source = TntFiles(str(d), files_per_batch=per_batch)
        spark_result = SparkRunner().run(topo, [source], RunConfig(window=2, lateness=2, options=SparkOptions()))
        local = LocalRunner().run(topo, [source], RunConfig(window=2, lateness=2))
        for result in (spark_result, local):
            assert [(os.path.basename(r.source), r.line, r.reason) for r in result.rejected] == [
                ("a.tnt", 1, "late: event time 15 is more than 2 behind event time 20, the latest of its source")]
    # files of the same millisecond: by name (within one micro-batch; Spark takes them across batches in the
    # order it lists them)
    for name, t in (("e.tnt", 25), ("d.tnt", 30)):
        (d / name).write_text(format_tnt(t, EX + "y", RDF_TYPE, EX + "Person") + "\n")
        os.utime(d / name, (1_600_000_004, 1_600_000_004))
    source = TntFiles(str(d))
    for result in (SparkRunner().run(topo, [source], RunConfig(window=2, lateness=2, options=SparkOptions())),
                   LocalRunner().run(topo, [source], RunConfig(window=2, lateness=2))):
        assert sorted(os.path.basename(r.source) for r in result.rejected) == ["a.tnt", "e.tnt"]


def test_a_sockets_lines_are_judged_in_arrival_order(spark):
    """Spark reads a socket in one partition (it deals a batch's lines over several otherwise), so the line
    more than the lateness behind the one before it is the one rejected, as on the local runner."""
    import socket
    import threading
    import time

    from srtopo.io.sources import SocketLines
    from srtopo.runners import LocalRunner
    text = "".join(format_tnt(t, EX + f"s{i}", RDF_TYPE, EX + "Person") + "\n"
                   for i, t in enumerate((5, 9, 6, 12, 12, 3, 13)))
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    keep_open = threading.Event()

    def serve(times: int):
        for _ in range(times):
            conn, _ = server.accept()
            conn.sendall(text.encode())
            if times == 1:          # Spark: the query reads until stopped
                keep_open.wait(120)
            conn.close()
    topo = compile_ntm(analyse(TBOX))
    threading.Thread(target=serve, args=(1,), daemon=True).start()
    run = SparkRunner().start(topo, [SocketLines("127.0.0.1", port)],
                              RunConfig(window=2, lateness=2, options=SparkOptions(once=False)))
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and sum(b.get("tuples", 0) for b in run.batch_metrics) < 7:
            time.sleep(0.5)
        run.stop()
        result = run.result()
    finally:
        keep_open.set()
        run.cleanup()
    threading.Thread(target=serve, args=(1,), daemon=True).start()
    keep_open.set()
    local = LocalRunner().run(topo, [SocketLines("127.0.0.1", port)], RunConfig(window=2, lateness=2))
    server.close()
    # the default plan (columnar) reads files: a socket takes the fused plan, with its driver close, and says so
    assert result.physical_plan.startswith("spark fused") and "close on the driver" in result.physical_plan
    for got in (result, local):
        assert sorted((r.text.split("\t")[0], r.line, r.reason) for r in got.rejected) == [
            ("3", None, "late: event time 3 is more than 2 behind event time 12, the latest of its source"),
            ("6", None, "late: event time 6 is more than 2 behind event time 9, the latest of its source")]
