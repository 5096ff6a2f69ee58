"""Helpers for the Spark tests: the CLI in a subprocess, the T_ex TBox and streams as files."""
from __future__ import annotations

import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.environ.get("PYSPARK_PYTHON") or sys.executable


def srtopo(args, **kwargs):
    env = dict(os.environ, PYSPARK_PYTHON=PY)
    return subprocess.run([PY, "-m", "srtopo", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          **kwargs)


_ONE_APPLICATION = """
import json, sys
from tests.spark.helpers import run_cli
with open(sys.argv[2], "w", encoding="utf-8") as handle:
    json.dump([run_cli(args) for args in json.loads(sys.argv[1])], handle)
"""


def srtopo_in_one_application(commands: list[list[str]], folder, timeout: int = 900) -> list:
    """The CLI commands run one after the other in ONE new process, so on one Spark application (the first
    command's session is the later ones' too: on a cluster, one driver and one set of executors to start, not
    one per command); a ``CompletedProcess`` per command."""
    import json
    env = dict(os.environ, PYSPARK_PYTHON=PY)
    results = os.path.join(str(folder), "one-application-results.json")
    done = subprocess.run([PY, "-c", _ONE_APPLICATION, json.dumps(commands), results], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(results, encoding="utf-8") as handle:
        return [subprocess.CompletedProcess(args, *got) for args, got in zip(commands, json.load(handle))]


def run_cli(args) -> tuple:
    """The CLI ``args`` run in this process: (exit status, standard output, standard error)."""
    import contextlib
    import io

    from srtopo.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as stop:
            status = stop.code
    return status, out.getvalue(), err.getvalue()


def srtopo_here(args) -> subprocess.CompletedProcess:
    """The CLI ``args`` run in this process, on the test session's SparkSession (no JVM to start): its exit
    status, standard output and error. ``--master`` is left out: the session's own master is local[2] already,
    and a master given to a running session would set the command's defaults on it for the tests after."""
    args = list(args)
    while "--master" in args:
        at = args.index("--master")
        del args[at:at + 2]
    return subprocess.CompletedProcess(args, *run_cli(args))


def srtopo_popen(args, **kwargs):
    env = dict(os.environ, PYSPARK_PYTHON=PY)
    return subprocess.Popen([PY, "-m", "srtopo", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


TEX = "http://ex.org/tex#"
TEX_PIS = [("Student", "Person"), ("Employee", "Person"), ("Faculty", "Employee"), ("Admin", "Employee"),
           ("Article", "Publication"), ("Book", "Publication")]
TEX_NIS = [("Person", "Publication"), ("Organization", "Person"), ("Person", "Work"), ("Publication", "Organization"),
           ("Publication", "Work"), ("Organization", "Work"), ("Student", "Employee"), ("Article", "Book"),
           ("Faculty", "Admin"), ("Student", "Faculty")]
TEX_CLASSES = sorted({c for p in TEX_PIS + TEX_NIS for c in p})


def write_tex(path) -> None:
    """The paper's running example T_ex as OWL in Turtle."""
    lines = ["@prefix owl: <http://www.w3.org/2002/07/owl#> .",
             "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .", f"@prefix : <{TEX}> .",
             "<http://ex.org/tex> a owl:Ontology ."]
    lines += [f":{c} a owl:Class ." for c in TEX_CLASSES]
    lines += [f":{a} rdfs:subClassOf :{b} ." for a, b in TEX_PIS]
    lines += [f":{a} owl:disjointWith :{b} ." for a, b in TEX_NIS]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def tex_stream(n: int, rng: random.Random, n_subjects: int = 2000, rate: int = 50):
    from srtopo.concepts import RDF_TYPE
    out = []
    for i in range(n):
        out.append((f"http://ex.org/data/s{rng.randrange(n_subjects)}", RDF_TYPE, TEX + rng.choice(TEX_CLASSES), i // rate))
    return out


def write_tnt_files(directory, triples, files: int) -> list[str]:
    """(s, p, o, t) triples as ``files`` .tnt files of equal size (the project's one writer)."""
    from srtopo.io.tnt import write_tnt
    return write_tnt(str(directory), ((t, s, p, o) for s, p, o, t in triples), per_file=-(-len(triples) // files))


#: where a run is killed: (the store entry to wait for, then the delay): right after the first batch wrote its
#: store entry; as soon as a later batch starts writing; a little after the next entry appears, during its sink
#: and commit
KILL_POINTS = {"after-entry": (1, 0.0), "later-batch-writing": (3, 0.0), "during-sink": (4, 0.5)}


def kill_at(args, checkpoint, batches, points, frozen: list | None = None) -> list[int]:
    """Run the CLI ``args`` once per kill point (names of ``KILL_POINTS``), each killed with SIGKILL there; the
    latest store entry at each kill. ``batches(checkpoint)`` lists the store's entries. With ``frozen`` (a list),
    the run's JVM is stopped (SIGSTOP) before its driver is killed and left so, its pid appended: the moment a
    killed driver's JVM goes on, made to last."""
    import json
    import signal
    import time
    from srtopo.runners.spark.lease import DRIVER_FILE
    assert frozen is None or len(points) == 1, "a frozen JVM would hold up the next kill point's run"
    kills = []
    for wait_for, delay in (KILL_POINTS[p] for p in points):
        proc = srtopo_popen(args, start_new_session=True)
        deadline = time.time() + 240
        try:
            while max(batches(checkpoint), default=-1) < wait_for:
                assert proc.poll() is None, proc.stderr.read()[-3000:]
                assert time.time() < deadline, "no progress"
                time.sleep(0.05)
            time.sleep(delay)
            if frozen is not None:
                with open(os.path.join(str(checkpoint), DRIVER_FILE), encoding="utf-8") as handle:
                    jvm = json.load(handle)["jvm_pid"]
                assert isinstance(jvm, int), "the run recorded no JVM"
                os.kill(jvm, signal.SIGSTOP)
                frozen.append(jvm)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        kills.append(max(batches(checkpoint)))
    return kills
