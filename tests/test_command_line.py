"""The command line as a new user meets it: errors of one line (or three for a mistyped option) with status 2 on
every runner, flags that would do nothing refused, I-DLV-sr command lines that paste, summaries, quiet runs."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from srtopo.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
TEX = str(ROOT / "examples" / "tex.ttl")
STREAM = str(ROOT / "examples" / "tex-stream.tnt")


def _err(capsys) -> list[str]:
    return [x for x in capsys.readouterr().err.splitlines() if x.strip()]


def _exit(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_a_mistyped_option_is_named_with_the_closest_real_one_in_three_lines(capsys):
    assert _exit(["check", "--tbox", TEX, "--stream", STREAM, "--windw", "10"]) == 2
    err = _err(capsys)
    assert len(err) <= 3 and "--windw" in err[0] and "did you mean --window?" in err[0]
    assert "required" not in " ".join(err)      # not the option it hid as missing
    assert _exit(["reason", "--program=p.idlvsr", "--strategy=auto", "--stratgy", "rl"]) == 2
    err = _err(capsys)
    assert len(err) <= 3 and "--stratgy" in err[0] and "--strategy" in err[0]


def test_a_mistyped_command_or_choice_is_named_with_the_closest_one(capsys):
    assert _exit(["chek", "--tbox", TEX]) == 2
    err = _err(capsys)
    assert len(err) <= 3 and "unknown command 'chek' (did you mean check?)" in err[0]
    assert _exit(["check", "--tbox", TEX, "--stream", STREAM, "--window", "3", "--method", "ntn"]) == 2
    assert "unknown --method 'ntn' (did you mean ntm?)" in _err(capsys)[0]
    assert _exit(["reason", "--program", "p.idlvsr", "--strategy", "xyz"]) == 2
    err = _err(capsys)[0]
    assert "unknown --strategy 'xyz' (choose from " in err and "restart" in err


def test_version_and_debug_or_verbose_anywhere(capsys):
    assert _exit(["--version"]) == 0
    assert capsys.readouterr().out.startswith("srtopo ")
    for argv in (["compile", "--tbox", TEX, "--debug"], ["--debug", "compile", "--tbox", TEX],
                 ["compile", "--verbose", "--tbox", TEX]):
        assert main(argv) == 0, argv
        capsys.readouterr()


def test_help_texts_show_no_markup():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    for name, command in sub.items():
        text = command.format_help()
        assert "``" not in text, name
    assert "``" not in parser.format_help()


def test_the_top_help_says_what_srtopo_does_not_how_its_code_is_cut():
    text = build_parser().format_help()
    description = text.split("positional arguments")[0]
    assert "ontology" in description and "I-DLV-sr" in description and "srtopo COMMAND --help" in description
    assert "parser" not in description and "signal" not in description


@pytest.mark.parametrize("argv,said", [
    (["check", "--tbox", TEX, "--stream", STREAM, "--window", "3", "--partitions", "7"],
     "--partitions is a flag of the spark runner"),
    (["check", "--tbox", TEX, "--stream", STREAM, "--window", "3", "--engine", "spark", "--partitions", "7"],
     "--partitions does nothing for a consistency topology"),
    (["check", "--tbox", TEX, "--stream", STREAM, "--window", "3", "--master", "local[2]"],
     "--master is a flag of the spark runner"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--local-plan", "operators"],
     "--local-plan does nothing for a rules topology"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--strategy", "rl"],
     "--strategy rl is a strategy for a program's choice part"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--strategy", "forget-lemmas"],
     "--strategy forget-lemmas is a strategy for a program's choice part"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--engine", "spark", "--partitions", "0"],
     "expected a whole number >= 1"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--driver-lines", "5"],
     "--driver-lines is a flag of the spark runner"),
    (["check", "--tbox", TEX, "--stream", STREAM, "--window", "3", "--engine", "spark", "--driver-lines", "5"],
     "--driver-lines does nothing for a consistency topology"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--engine", "spark", "--driver-lines", "-1"],
     "expected a whole number >= 0"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--parallelism", "2"],
     "--parallelism is a flag of the spark runner"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--checkpoint", "ck"],
     "--checkpoint is a flag of the spark runner"),
    (["check", "--tbox", TEX, "--stream", STREAM, "--window", "99999999999999999999999"],
     "is beyond the largest window"),
    (["compile", "--tbox", TEX, "--stages", "0"], "expected a whole number >= 1"),
    (["compile", "--tbox", TEX, "--tasks", "-3"], "expected a whole number >= 1"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--files-per-batch", "0"], "expected a whole number >= 1"),
    (["streamlog", "--program", str(ROOT / "examples" / "shortest-paths.sl"), "--stream", "LOG", "--idle", "-1"],
     "expected a number of seconds > 0"),
])
def test_flags_that_would_do_nothing_are_refused(tmp_path, capsys, argv, said):
    (tmp_path / "p.idlvsr").write_text("c(X) :- b(X) in [2].\n")
    (tmp_path / "s.log").write_text("0 b(1)\n")
    argv = [str(tmp_path / "p.idlvsr") if a == "PROGRAM" else str(tmp_path / "s.log") if a == "LOG" else a
            for a in argv]
    assert _exit(argv) == 2
    err = _err(capsys)
    assert len(err) <= 3 and said in err[0], err
    assert not list(tmp_path.glob("spark-warehouse"))


@pytest.mark.parametrize("argv,line", [
    (["compile"], "give --tbox (a consistency topology), --program (a rules or Streamlog topology), or both (a chain)"),
    (["reason", "--program", "PROGRAM", "--stream", "LOG", "--lateness", "-1"], "--lateness must be >= 0, got -1"),
    (["reason", "--program", "PROGRAM"],
     "give the stream: --stream FILE|DIR|-|tcp://HOST:PORT (or --log FILE, or --port-number N)"),
    (["check", "--tbox", TEX, "--stream", STREAM, "--window", "3", "--master", "local[2]"],
     "--master is a flag of the spark runner: it does nothing with --engine local (add --engine spark, or leave "
     "--master out)"),
    (["check", "--tbox", TEX, "--stream", STREAM, "--window", "-3"], "--window must be >= 0, got -3"),
    (["calibrate", "--engines", "warp"],
     "--engines: no cost model named 'warp' (use local, spark, all or local/indexed, local/operators, local/columnar, "
     "spark/columnar, spark/fused, "
     "spark/staged)"),
])
def test_command_line_mistakes_are_usage_errors_of_one_line_and_status_2(tmp_path, capsys, argv, line):
    """A missing, conflicting or idle flag is a ``UsageError``: one line, exit status 2 (``--debug`` raises it)."""
    from srtopo.errors import UsageError
    (tmp_path / "p.idlvsr").write_text("c(X) :- b(X) in [2].\n")
    (tmp_path / "s.log").write_text("0 b(1)\n")
    argv = [str(tmp_path / "p.idlvsr") if a == "PROGRAM" else str(tmp_path / "s.log") if a == "LOG" else a
            for a in argv]
    assert _exit(argv) == 2
    assert _err(capsys) == [f"srtopo: error: {line}"]
    with pytest.raises(UsageError) as raised:
        main(["--debug", *argv])
    assert str(raised.value) == line


def test_spark_errors_before_spark_starts_are_one_line(tmp_path, capsys):
    (tmp_path / "p.idlvsr").write_text("c(X) :- b(X) in [2].\n")
    assert main(["reason", "--engine", "spark", "--once", "--program", str(tmp_path / "p.idlvsr"),
                 "--stream", str(tmp_path / "nope.log")]) == 2
    assert _err(capsys) == [f"srtopo: error: stream not found: {tmp_path / 'nope.log'} (give a file or a directory "
                            "of stream files)"]
    assert main(["check", "--engine", "spark", "--master", "local[abc]", "--tbox", TEX, "--stream", STREAM,
                 "--window", "10", "--once"]) == 2
    err = _err(capsys)
    assert len(err) == 1 and "unknown Spark master 'local[abc]'" in err[0]


def test_an_error_spark_raises_is_one_line(spark, tmp_path):
    """What Spark raises - an analysis error, a query whose batch function failed - becomes one line."""
    from srtopo.cli import one_line
    from srtopo.runners.spark.errors import translate
    try:
        spark.read.text(str(tmp_path / "nope")).collect()
    except Exception as error:      # noqa: BLE001 - the error under test
        line = one_line(error)
    assert "\n" not in line and "PATH_NOT_FOUND" in line and "nope" in line and "at org." not in line
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("x\n")

    def fail(_df, _batch):
        raise ValueError("the batch refused its input")
    query = spark.readStream.format("text").load(str(tmp_path / "in")).writeStream.foreachBatch(fail) \
        .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start()
    with pytest.raises(Exception) as caught:
        query.awaitTermination()
    got = translate(caught.value)
    assert got is not None and str(got) == "a micro-batch failed: ValueError: the batch refused its input"


@pytest.mark.slow
def test_check_reads_standard_input_and_prints_its_summary():
    text = Path(STREAM).read_text()
    proc = subprocess.run([sys.executable, "-m", "srtopo", "check", "--tbox", TEX, "--stream", "-", "--window", "10"],
                          input=text, capture_output=True, text=True, cwd=ROOT)
    from_file = subprocess.run([sys.executable, "-m", "srtopo", "check", "--tbox", TEX, "--stream", STREAM,
                                "--window", "10"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout == from_file.stdout and proc.stdout.count("\n") > 3
    # standard input is live: the run says it takes lateness 0, then gives its summary
    notes = proc.stderr.splitlines()
    assert notes[0].startswith("srtopo: a live stream without a lateness: using 0")
    assert notes[-1].startswith("srtopo: 465 tuples, ")


def test_reason_prints_a_summary_and_rejected_out_counts_instead_of_echoing(tmp_path, capsys):
    (tmp_path / "p.idlvsr").write_text("c(X) :- b(X).\n")
    (tmp_path / "s.log").write_text("0 b(1)\n1 b(\n2 b(2); b(3)\n3 )(\n")
    args = ["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "s.log")]
    assert main(args + ["--rejected-out", str(tmp_path / "rej.jsonl")]) == 0
    err = _err(capsys)
    assert err == [f"srtopo: 2 rejected record(s) written to {tmp_path / 'rej.jsonl'}",
                   "srtopo: 2 models written, 3 atoms read, 2 rejected records (0 late), 3 batches; local: one "
                   "process, 1 stage(s) in order"]
    assert len((tmp_path / "rej.jsonl").read_text().splitlines()) == 2


def _out_lines(path) -> list[str]:
    """The lines of an --out file (the local runner) or of its per-batch files (Spark), in time order."""
    files = [path] if path.is_file() else sorted(path.rglob("*.json"))
    return sorted((x for f in files for x in f.read_text().splitlines()), key=lambda x: json.loads(x)["time"])


def test_a_log_timestamp_is_written_alike_by_both_runners(spark, tmp_path):
    """A log's integer timestamp is a JSON number, a date a string, in every --out line of both runners: the
    runners' lines are equal byte for byte."""
    (tmp_path / "p.idlvsr").write_text("c(X) :- b(X).\n")
    for name, log in (("numbers", "0 b(1)\n1 b(2)\n"), ("dates", "2021-05-17T13:38:30 b(1)\n2021-05-17T13:38:31 b(2)\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "s.log").write_text(log)
        got = {}
        for runner in ("local", "spark"):
            out = tmp_path / f"{name}-{runner}"
            extra = ["--engine", "spark", "--once"] if runner == "spark" else []
            assert main(["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / name / "s.log"),
                         "--out", str(out), *extra]) == 0
            got[runner] = _out_lines(out)
        assert got["local"] == got["spark"], name
        stamps = [json.loads(x)["timestamp"] for x in got["local"]]
        assert stamps == ([0, 1] if name == "numbers" else ["2021-05-17T13:38:30", "2021-05-17T13:38:31"])


def test_dot_labels_break_lines_as_graphviz_reads_them(capsys):
    assert main(["compile", "--tbox", TEX, "--split", "1,2", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    label = next(line for line in dot.splitlines() if line.strip().startswith('"B1" [label='))
    assert "B1\\nparallelism 1\\n" in label and "\\\\n" not in label


def test_unsatisfiable_concepts_are_named(tmp_path, capsys):
    (tmp_path / "t.ttl").write_text("@prefix : <http://x.org/o#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                                    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                                    ":A a owl:Class . :B a owl:Class . :C a owl:Class .\n"
                                    ":C rdfs:subClassOf :A , :B . :A owl:disjointWith :B .\n")
    assert main(["compile", "--tbox", str(tmp_path / "t.ttl")]) == 0
    out = capsys.readouterr().out
    assert "unsatisfiable concepts: 1 (C)" in out
    (tmp_path / "t.ttl").write_text("@prefix : <http://x.org/o#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                                    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                                    ":A a owl:Class . :B a owl:Class . :p a owl:ObjectProperty .\n"
                                    ":p rdfs:domain :A ; rdfs:range :B . :A owl:disjointWith :B .\n"
                                    ":p owl:inverseOf :p .\n")
    assert main(["compile", "--tbox", str(tmp_path / "t.ttl")]) == 0
    assert "(exists p, exists p^-)" in capsys.readouterr().out


def test_idlvsr_command_lines_paste(tmp_path, capsys):
    """Every I-DLV-sr option is taken with its meaning or refused in one line naming the option that does it."""
    program, log = tmp_path / "p.idlvsr", tmp_path / "s.log"
    program.write_text("c(X) :- b(X) in [2].\n")
    log.write_text("2021-05-17T13:38:27 b(1)\n2021-05-17T13:38:28 b(2)\n")
    base = ["reason", f"--program={program}", f"--log={log}"]
    assert main(base + ["--print-rewriting", "--verbose=1", "--print-reasoning-info", "--print-operators-info=0"]) == 0
    err = capsys.readouterr().err
    assert "c(X) :- __sr_b_aux1(X)." in err                           # the rewriting
    assert "srtopo: stage S1: 2 solver calls, 2 groundings, 1 task(s)" in err     # the statistics
    assert _exit(base + ["--print-extended-log"]) == 2
    err = _err(capsys)
    assert len(err) == 2 and "--print-extended-log is not taken here" in err[0]
    parsed = build_parser().parse_args(base + ["--engine", "spark", "--parallelism=3"])
    from srtopo.runners.spark.runner import SparkRunner
    assert SparkRunner.options_from_args(parsed).partitions == 3


def test_windows_without_a_unit_are_seconds_as_in_idlvsr(tmp_path, capsys):
    """With --t-unit min, [90] is ninety seconds: it reaches one minute back, not ninety; [2 min] two."""
    program, log = tmp_path / "p.idlvsr", tmp_path / "s.log"
    program.write_text("s(X) :- b(X) in [90].\nm(X) :- b(X) in [2 min].\n")
    log.write_text("2021-05-17T13:00:00 b(1)\n2021-05-17T13:01:00 b(2)\n2021-05-17T13:02:00 b(3)\n")
    assert main(["reason", f"--program={program}", f"--log={log}", "--t-unit=min"]) == 0
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["time"] == 2
    assert {a for a in last["atoms"] if a.startswith("s(")} == {"s(2)", "s(3)"}
    assert {a for a in last["atoms"] if a.startswith("m(")} == {"m(1)", "m(2)", "m(3)"}
    program.write_text("s(X) :- b(X) in {0,30}.\n")
    assert main(["reason", f"--program={program}", f"--log={log}", "--t-unit=min"]) == 2
    assert "not a whole number of time points" in capsys.readouterr().err

def test_what_a_new_user_ran_into_is_one_located_line(tmp_path, capsys):
    """Two scripts defining one external function, a window inside an aggregate, a #trigger_frequency that is
    not whole time points: each one line with the file and what to do."""
    (tmp_path / "a.py").write_text("def dbl(x):\n    return 2 * x\n")
    (tmp_path / "b.py").write_text("def dbl(x):\n    return 3 * x\n")
    (tmp_path / "s.log").write_text("0 p(1)\n")
    cases = {"d(Y) :- p(X), &dbl(X;Y).\n": "'dbl' is defined by several scripts",
             "a(X) :- #count{Y : p(Y) in [2]} = X.\n": "unsupported: streaming literal inside an aggregate",
             "#trigger_frequency(1500 msec) a :- p(1).\n": "p.idlvsr:1: #trigger_frequency(1500 msec) is not a whole"}
    for program, said in cases.items():
        (tmp_path / "p.idlvsr").write_text(program)
        assert main(["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "s.log"),
                     "--py-script", f"{tmp_path / 'a.py'},{tmp_path / 'b.py'}"]) == 2
        err = _err(capsys)
        assert len(err) == 1 and said in err[0], err


def test_rejected_records_on_stderr_stop_at_twenty_on_every_command(tmp_path, capsys):
    (tmp_path / "p.idlvsr").write_text("c(X) :- b(X).\n")
    (tmp_path / "s.log").write_text("0 b(1)\n" + "".join(f"{t} b(\n" for t in range(1, 41)))
    assert main(["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "s.log")]) == 0
    err = _err(capsys)
    assert sum("line" in x and "of" in x for x in err) == 20
    assert "... 20 more rejected records (use --rejected-out)" in " ".join(err)


def test_the_help_of_every_command_says_all_of_its_first_sentence():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    assert "one JSON line per timestamp that has derived facts" in " ".join(sub["streamlog"].format_help().split())


#: command -> (runner flags its help lists, runner flags that act on other kinds only)
HELP_FLAGS = {"check": ({"--local-plan", "--physical-plan", "--driver-tuples"}, {"--partitions", "--driver-lines"}),
              "reason": ({"--partitions", "--driver-lines"}, {"--local-plan", "--physical-plan", "--driver-tuples"}),
              "streamlog": ({"--partitions"}, {"--local-plan", "--physical-plan", "--driver-lines",
                                                "--driver-tuples"})}


@pytest.mark.parametrize("command", sorted(HELP_FLAGS))
def test_the_help_of_a_command_lists_only_the_runner_flags_it_takes(command, tmp_path, capsys):
    """A flag another kind of topology takes is not offered; given anyway, it is refused saying why."""
    import re
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    listed = set(re.findall(r"--[a-z][a-z-]*", sub.format_help()))
    offered, other = HELP_FLAGS[command]
    assert offered <= listed and not other & listed, sorted(other & listed)
    (tmp_path / "p.idlvsr").write_text("c(X) :- b(X).\n")
    inputs = {"check": ["--tbox", TEX, "--stream", STREAM, "--window", "3"],
              "reason": ["--program", str(tmp_path / "p.idlvsr"), "--stream", STREAM],
              "streamlog": ["--program", str(ROOT / "examples" / "shortest-paths.sl"), "--stream", STREAM]}[command]
    flag = sorted(other)[0]
    value = {"--local-plan": "operators", "--physical-plan": "staged"}.get(flag, "2")
    engine = "local" if flag == "--local-plan" else "spark"
    assert main([command, *inputs, "--engine", engine, flag, value]) == 2
    assert f"{flag} does nothing for a" in _err(capsys)[-1]


def test_a_tsv_stream_without_a_usable_line_gets_the_tsv_hint(tmp_path, capsys):
    (tmp_path / "s.tsv").write_text("not a tuple\n")
    assert main(["check", "--tbox", TEX, "--stream", str(tmp_path / "s.tsv"), "--stream-format", "tsv",
                 "--window", "3"]) == 2
    assert "tab-separated tuples" in _err(capsys)[-1]


def _wait_open(proc, path, timeout: float = 60) -> None:
    """Until the process ``proc`` holds ``path`` open (it got past its imports and is waiting on it)."""
    import os
    import time
    deadline = time.monotonic() + timeout
    while True:
        try:
            if any(os.readlink(f"/proc/{proc.pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{proc.pid}/fd")):
                return
        except OSError:        # a descriptor closed while listed
            pass
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, f"{path} was not opened"
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["check", "reason", "streamlog"])
def test_a_named_pipe_is_read_as_it_comes_and_ctrl_c_stops_the_wait(command, tmp_path):
    """A named pipe as --stream: the run waits for its writer, reads what it writes, ends when it closes; and a
    run still waiting for a writer stops on Ctrl-C with status 130 (a blocking read ignored the signal)."""
    import os
    import signal
    import time
    if command == "check":
        args, lines = ["check", "--tbox", TEX, "--window", "10"], Path(STREAM).read_text()
    elif command == "reason":
        (tmp_path / "p.idlvsr").write_text("c(X) :- b(X).\n")
        args, lines = ["reason", "--program", str(tmp_path / "p.idlvsr")], "0 b(1)\n1 b(2)\n"
    else:
        args = ["streamlog", "--program", str(ROOT / "examples" / "shortest-paths.sl")]
        lines = (ROOT / "examples" / "arcs.txt").read_text()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "srtopo", *args, "--stream", str(fifo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_open(proc, fifo)
    time.sleep(0.5)                                 # it waits for a writer rather than ending
    assert proc.poll() is None
    with open(fifo, "w") as writer:
        writer.write(lines)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    file = tmp_path / "same"
    file.write_text(lines)
    expected = subprocess.run([sys.executable, "-m", "srtopo", *args, "--stream", str(file)], capture_output=True,
                              text=True, timeout=60)
    assert out == expected.stdout and out.strip()
    waiting = subprocess.Popen([sys.executable, "-m", "srtopo", *args, "--stream", str(fifo)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_open(waiting, fifo)
    waiting.send_signal(signal.SIGINT)
    _, err = waiting.communicate(timeout=20)
    assert waiting.returncode == 130, err
    assert "Traceback" not in err and len([x for x in err.splitlines() if x.strip()]) == 1
    if command != "streamlog":         # Spark reads files: a pipe is refused before a JVM starts
        spark = subprocess.run([sys.executable, "-m", "srtopo", *args, "--stream", str(fifo), "--engine", "spark"],
                               capture_output=True, text=True, timeout=60)
        err = [x for x in spark.stderr.splitlines() if x.strip()]
        assert spark.returncode == 2 and len(err) == 1 and "not a regular file" in err[0], spark.stderr


def _wait_for_signal_handlers(proc, limit: float = 60.0) -> None:
    """Until the child catches SIGTERM, which Python leaves at its default until ``srtopo.interrupt.install``: a
    signal before that (a fixed sleep on a loaded machine) met the interpreter's own start-up, not srtopo."""
    import signal
    import time
    if not os.path.exists(f"/proc/{proc.pid}/status"):
        pytest.skip("needs /proc to see when the command installs its signal handlers")
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with open(f"/proc/{proc.pid}/status") as status:
            caught = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.002)
    raise AssertionError("the command did not install its signal handlers within a minute")


@pytest.mark.slow
def test_a_signal_while_the_program_loads_is_one_line(tmp_path):
    """Ctrl-C (or SIGTERM) in the first second, while the runners are imported: one line and 130 (143), not a
    KeyboardInterrupt traceback from inside an import."""
    import signal
    for signum in (signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen([sys.executable, "-m", "srtopo", "check", "--tbox", TEX, "--stream", STREAM,
                                 "--window", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for_signal_handlers(proc)     # srtopo routes signals; the runners' imports have not ended
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        lines = [x for x in err.splitlines() if x.strip()]
        assert proc.returncode == 128 + signum, err
        assert len(lines) == 1 and lines[0].startswith(f"srtopo: stopped by {signal.Signals(signum).name}"), err


def test_an_empty_program_says_no_empty_parallelism_note(tmp_path, capsys):
    (tmp_path / "p.idlvsr").write_text("", encoding="utf-8")
    (tmp_path / "s.log").write_text("0 a(1);\n", encoding="utf-8")
    assert main(["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "s.log")]) == 0
    err = capsys.readouterr().err
    assert "parallelism  not used" not in err and "()" not in err and "0 stage(s)" in err

