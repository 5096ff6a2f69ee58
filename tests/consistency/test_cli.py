"""CLI behaviour: one-line errors with non-zero exit, check on the local runner, compile formats."""
import json
import subprocess
import sys
from pathlib import Path

from srtopo.cli import main
from srtopo.concepts import RDF_TYPE
from srtopo.io.tnt import format_tnt

ROOT = Path(__file__).resolve().parents[2]
TEX = str(ROOT / "examples" / "tex.ttl")
NS = "http://example.org/tex#"


def test_missing_file_one_line_error(capsys):
    assert main(["compile", "--tbox", "/nonexistent/t.owl"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["srtopo: error: /nonexistent/t.owl: file not found (check the path given to --tbox)"]


def test_non_owl_file_no_traceback(tmp_path):
    path = tmp_path / "notes.owl"
    path.write_text("these are not triples\n")
    proc = subprocess.run([sys.executable, "-m", "srtopo", "compile", "--tbox", str(path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{path}:1:" in lines[0]


def test_debug_shows_traceback(tmp_path):
    path = tmp_path / "notes.owl"
    path.write_text("these are not triples\n")
    proc = subprocess.run([sys.executable, "-m", "srtopo", "--debug", "compile", "--tbox", str(path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_check_local_reports_and_rejects(tmp_path, capsys):
    stream = tmp_path / "s.tnt"
    lines = [
        "# comment",
        format_tnt(1, "http://x/bob", RDF_TYPE, NS + "Student"),
        format_tnt(3, "http://x/bob", RDF_TYPE, NS + "Faculty"),        # Student/Employee via Faculty: report at 3
        "not a line",
        format_tnt(20, "http://x/bob", RDF_TYPE, NS + "Book"),           # outside window 5 of t=3
        format_tnt(21, "http://x/ann", RDF_TYPE, NS + "Article"),
        format_tnt(22, "http://x/ann", RDF_TYPE, NS + "Book"),           # Article/Book: report at 22
        "",
    ]
    stream.write_text("\n".join(lines) + "\n")
    rejected = tmp_path / "rejected.jsonl"
    for split in (["--method", "ntm"], ["--split", "1,2"], ["--split", "1,1,1"]):
        assert main(["check", "--engine", "local", "--tbox", TEX, "--stream", str(stream), "--window", "5",
                     "--rejected-out", str(rejected)] + split) == 0
        out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        assert {(r["subject"], r["time"]) for r in out} == {("http://x/bob", 3), ("http://x/ann", 22)}
        bob = next(r for r in out if r["subject"] == "http://x/bob")
        assert bob["evidence"] == [{"concept": NS + "Student", "time": 1}, {"concept": NS + "Faculty", "time": 3}]
        assert bob["ni"] == [NS + "Student", NS + "Employee"]        # the root above Student/Faculty
        bad = [json.loads(x) for x in rejected.read_text().splitlines()]
        assert [(b["line"], b["text"]) for b in bad] == [(4, "not a line")]


def test_compile_formats(capsys):
    assert main(["compile", "--tbox", TEX, "--method", "ntm"]) == 0
    text = capsys.readouterr().out
    assert "NI closure: 37 pairs" in text and "PIs: 6" in text and "NIs: 10" in text
    assert main(["compile", "--tbox", TEX, "--split", "1,1,1", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph") and '"B1" -> "B2"' in dot and '"B2" -> "B3"' in dot


def test_bad_split_is_explained(capsys):
    assert main(["compile", "--tbox", TEX, "--split", "1,1"]) == 2
    assert "does not cover the 3 NI groups" in capsys.readouterr().err


DATA = ROOT.parent / "shared" / "data"


def _skip_without_data():
    import pytest
    if not DATA.exists():
        pytest.skip("shared data not available")


def test_compile_npd_prints_report_closure_and_groups(capsys):
    _skip_without_data()
    assert main(["compile", "--tbox", str(DATA / "npd" / "npd-v2-ql.owl"), "--stages", "2"]) == 0
    out = capsys.readouterr().out
    assert "PIs: 1259" in out and "NIs: 54 (AllDisjointClasses 3, disjointWith 51)" in out
    assert "skipped (outside DL-Lite): 975 (ABox assertion 686, range (datatype) 202, subClassOf 87)" in out
    assert "triples: 13448 (used 2869, skipped 2898, declarations 1641, annotations 6040)" in out
    assert "NI closure: 32342 pairs; NI roots: 48; NI groups: 5" in out
    assert all(f"    G{i}:" in out for i in range(1, 6))


def test_compile_lubm_univ_bench(capsys):
    _skip_without_data()
    assert main(["compile", "--tbox", str(DATA / "lubm" / "owl-toolkit" / "univ-bench.owl")]) == 0
    out = capsys.readouterr().out
    assert "43 classes" in out and "NIs: 0" in out and "TransitiveProperty 1" in out
    assert "NI closure: 0 pairs" in out and "no disjointness" in out


def test_a_run_that_read_nothing_usable_exits_non_zero(tmp_path, capsys):
    stream = tmp_path / "bad.tnt"
    stream.write_bytes(b"not a line\n\xff\xfe broken bytes\n")
    assert main(["check", "--tbox", TEX, "--stream", str(stream), "--window", "5"]) == 2
    err = capsys.readouterr().err
    assert "no usable tuple" in err and "line 1 of" in err and "not UTF-8 text" in err
    log = tmp_path / "bad.log"
    log.write_text("yesterday a(1)\n")
    program = tmp_path / "p.idlvsr"
    program.write_text("b(X) :- a(X).\n")
    assert main(["reason", "--program", str(program), "--stream", str(log)]) == 2
    assert "no usable record" in capsys.readouterr().err


def test_unsupported_runner_is_said_up_front(tmp_path, capsys):
    program = tmp_path / "p.idlvsr"
    program.write_text("b(X) :- a(X).\n")
    log = tmp_path / "p.log"
    log.write_text("1 a(1)\n")
    assert main(["reason", "--engine", "spark", "--program", str(program), "--stream", "-"]) == 2
    assert "the spark runner cannot read standard input" in capsys.readouterr().err


def test_compile_shows_the_cost_models_prediction_and_the_default_pick_has_the_highest(tmp_path, monkeypatch,
                                                                                      capsys):
    """``compile`` says what the cost model predicts for the topology it prints, whichever balancer chose it; the
    default balancer's pick predicts at least as much as every plan a user can force on the same budget."""
    from srtopo.consistency.cost import CALIBRATION_ENV
    monkeypatch.setenv(CALIBRATION_ENV, str(tmp_path / "absent.json"))

    def predicted(*flags):
        assert main(["compile", "--tbox", TEX, "--format", "json", *flags]) == 0
        cost = json.loads(capsys.readouterr().out)["cost_model"]
        assert cost["engine"].startswith(("local/indexed", "spark/staged on 2 core(s)"))
        assert cost["coefficients"] == "defaults"
        return cost["predicted_tuples_s"]

    for runner_flags in ([], ["--engine", "spark", "--master", "local[2]", "--physical-plan", "staged"]):
        pick = predicted("--tasks", "2", *runner_flags)
        forced = [predicted("--method", "ntm", "--tasks", "4", *runner_flags)]
        forced += [predicted("--tasks", "2", "--split", split, *runner_flags) for split in ("1,2", "2,1", "1,1,1")]
        assert 0 < min(forced) and pick >= max(forced)
    assert main(["compile", "--tbox", TEX, "--split", "1,2"]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("  cost model (local/indexed, coefficients: defaults): predicted ") and \
        last.endswith(" tuples/s")


def _serve_once(data: bytes) -> int:
    """A socket on 127.0.0.1 that sends ``data`` to its first client and closes; its port."""
    import socket
    import threading
    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = server.accept()
        with conn:
            conn.sendall(data)
        server.close()

    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1]


def test_check_reads_a_socket_written_tcp_like_the_file_it_serves(capsys, tmp_path):
    """``--stream tcp://HOST:PORT`` (and ``--also-stream``) read a socket: the reports are the served file's."""
    stream = ROOT / "examples" / "tex-stream.tnt"
    assert main(["check", "--tbox", TEX, "--stream", str(stream), "--window", "10"]) == 0
    from_file = sorted(capsys.readouterr().out.splitlines())
    assert from_file
    port = _serve_once(stream.read_bytes())
    assert main(["check", "--tbox", TEX, "--stream", f"tcp://127.0.0.1:{port}", "--window", "10"]) == 0
    assert sorted(capsys.readouterr().out.splitlines()) == from_file
    nothing = tmp_path / "nothing.tnt"
    nothing.write_text("# no tuple: the socket merged in gives them all\n")
    port = _serve_once(stream.read_bytes())
    assert main(["check", "--tbox", TEX, "--stream", str(nothing), "--also-stream", f"tcp://127.0.0.1:{port}",
                 "--window", "10"]) == 0
    assert sorted(capsys.readouterr().out.splitlines()) == from_file


def test_a_socket_spelt_socket_colon_is_refused_with_the_tcp_spelling(capsys, tmp_path):
    """``socket:HOST:PORT`` is not read as a file path by any command: one line that shows ``tcp://``."""
    program = tmp_path / "p.idlvsr"
    program.write_text("b(X) :- a(X).\n")
    facts = ROOT / "examples" / "shortest-paths.sl"
    for command in (["check", "--tbox", TEX, "--stream", "socket:127.0.0.1:9999", "--window", "10"],
                    ["check", "--tbox", TEX, "--stream", str(ROOT / "examples" / "tex-stream.tnt"),
                     "--also-stream", "socket:127.0.0.1:9999", "--window", "10"],
                    ["reason", "--program", str(program), "--stream", "socket:127.0.0.1:9999"],
                    ["streamlog", "--program", str(facts), "--stream", "socket:127.0.0.1:9999"]):
        assert main(command) == 2, command
        err = capsys.readouterr().err.splitlines()
        assert err == ["srtopo: error: socket:127.0.0.1:9999: a socket is written tcp://HOST:PORT "
                       "(write tcp://127.0.0.1:9999)"], command


LOADER_CASE = """@prefix : <http://ex.org/v#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<http://ex.org/v> a owl:Ontology ; owl:imports <http://ex.org/other> .
:A rdfs:subClassOf :B . :C owl:disjointWith :B . :U rdfs:subClassOf owl:Nothing .
[ owl:intersectionOf ( :A :D ) ] rdfs:subClassOf :C .
"""


def test_check_verbose_shows_the_loader_report_compile_shows(tmp_path, capsys):
    """What the loader skipped (an intersection on the left, a missing import) and the unsatisfiable classes: the
    same lines under ``check --verbose`` (on stderr) as under ``compile``."""
    tbox = tmp_path / "v.ttl"
    tbox.write_text(LOADER_CASE)
    stream = tmp_path / "s.tnt"
    stream.write_text(format_tnt(1, "http://x/a", RDF_TYPE, "http://ex.org/v#A") + "\n")
    for verbose in ([], ["--verbose"]):
        assert main(["compile", "--tbox", str(tbox), *verbose]) == 0
        compiled = capsys.readouterr().out
        report = compiled[:compiled.index("topology v")]
        assert "[imports]" in report and "imported ontologies are not loaded" in report
        assert "unsatisfiable concepts: 1 (U)" in report
        assert "an intersection on the left of ⊑ is outside DL-Lite" in report
        assert main(["check", "--tbox", str(tbox), "--stream", str(stream), "--window", "5", *verbose]) == 0
        err = capsys.readouterr().err
        assert (report in err) == bool(verbose), err


def test_check_says_when_no_report_is_possible(tmp_path, capsys):
    """A TBox without disjointness: ``check`` says so on stderr (without --verbose) and still runs, exit 0."""
    tbox = tmp_path / "none.ttl"
    tbox.write_text("@prefix : <http://ex.org/n#> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                    ":A rdfs:subClassOf :B .\n")
    stream = tmp_path / "s.tnt"
    stream.write_text(format_tnt(1, "http://x/a", RDF_TYPE, "http://ex.org/n#A") + "\n")
    assert main(["check", "--tbox", str(tbox), "--stream", str(stream), "--window", "5"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    note = [line for line in captured.err.splitlines() if "no disjointness" in line]
    assert note == [f"srtopo: note: {tbox} states no disjointness (no NI): no two tuples can conflict; only an "
                    "assertion of owl:Nothing is reported"]
    assert main(["check", "--tbox", TEX, "--stream", str(stream), "--window", "5"]) == 0
    assert "no disjointness" not in capsys.readouterr().err


def test_the_loader_counts_the_classes_the_tbox_uses(tmp_path):
    """Classes and properties count where the file declares them and where its axioms use them: a TBox that
    declares nothing is no TBox of 0 classes. Stripped of their declarations, LUBM and NPD still count every class
    their axioms use (found here by the positions a class takes in the RDF mapping), and some properties."""
    _skip_without_data()
    from rdflib import Graph, URIRef
    from rdflib.namespace import OWL, RDF, RDFS
    from srtopo.consistency.owl import load_tbox
    in_class_position = {RDFS.subClassOf: "both", OWL.equivalentClass: "both", OWL.disjointWith: "both",
                         OWL.someValuesFrom: "object", OWL.allValuesFrom: "object", OWL.onClass: "object",
                         RDFS.domain: "object", RDFS.range: "object", RDF.first: "object", OWL.complementOf: "object"}
    for path, classes, used_classes, properties in (
            (DATA / "lubm" / "owl-toolkit" / "univ-bench.owl", 43, 43, 32),
            (DATA / "npd" / "npd-v2-ql.owl", 342, 331, 380)):
        report = load_tbox(str(path)).report
        assert (report.classes, report.properties) == (classes, properties)
        graph = Graph().parse(str(path))
        declared = {s for s in graph.subjects(RDF.type, OWL.Class) if isinstance(s, URIRef)}
        used = set()
        for predicate, where in in_class_position.items():
            for s, o in graph.subject_objects(predicate):
                used |= {s, o} if where == "both" else {o}
        assert len(declared & used) == used_classes
        for kind in (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty):
            for s in list(graph.subjects(RDF.type, kind)):
                if isinstance(s, URIRef):
                    graph.remove((s, RDF.type, kind))
        stripped = tmp_path / (path.stem + ".nt")
        graph.serialize(str(stripped), format="nt")
        report = load_tbox(str(stripped)).report
        assert report.classes == used_classes and report.properties > 20


def test_compile_text_has_no_stray_conjunction_sign(capsys):
    """Each conjunction op is printed as ``A ∧ B``, not with a leading ``∧``, in every format and method."""
    for flags in (["--method", "ntm"], ["--split", "1,1,1"], ["--method", "ltm"]):
        for fmt in ("text", "dot", "json"):
            assert main(["compile", "--tbox", TEX, "--format", fmt, *flags]) == 0
            out = capsys.readouterr().out
            assert not [line for line in out.splitlines() if line.lstrip().startswith("∧")], (flags, fmt)
    assert main(["compile", "--tbox", TEX, "--split", "1,1,1"]) == 0
    assert "    Admin ∧ Faculty  (violates DJ(Faculty, Admin))" in capsys.readouterr().out.splitlines()
