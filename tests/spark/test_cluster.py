"""Cluster mode for real: a standalone master and two 1-core workers on 127.0.0.1 from the pyspark
distribution; `srtopo check --engine spark --master spark://...` gives the local runner's reports, and
`srtopo reason` the local runner's models of a keyed program (its clingo tasks in the workers' executors)."""
import json
import os
import random
import signal
import socket
import subprocess
import time

import pytest

from tests.spark.helpers import PY, srtopo, tex_stream, write_tex, write_tnt_files


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise AssertionError(f"nothing listens on {port}")


def _workers_registered(webui: int, n: int, timeout: float = 90) -> None:
    import urllib.request
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=5) as r:
                if len([w for w in json.load(r).get("workers", []) if w.get("state") == "ALIVE"]) >= n:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("workers did not register")


@pytest.fixture()
def standalone(tmp_path):
    import pyspark
    home = os.path.dirname(pyspark.__file__)
    env = dict(os.environ, SPARK_HOME=home, PYSPARK_PYTHON=PY, SPARK_LOG_DIR=str(tmp_path / "logs"),
               SPARK_WORKER_DIR=str(tmp_path / "work"), SPARK_LOCAL_IP="127.0.0.1")
    port, webui = _free_port(), _free_port()
    cls = os.path.join(home, "bin", "spark-class")
    procs = []
    try:
        procs.append(subprocess.Popen([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                       "--port", str(port), "--webui-port", str(webui)], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        _wait_port(port)
        for _ in range(2):
            procs.append(subprocess.Popen([cls, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                                           "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                                           "--port", str(_free_port()), "--webui-port", str(_free_port())],
                                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
        _workers_registered(webui, 2)
        yield f"spark://127.0.0.1:{port}", webui
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def test_standalone_cluster_gives_local_reports_and_models(standalone, tmp_path):
    master, webui = standalone
    write_tex(tmp_path / "tex.ttl")
    write_tnt_files(tmp_path / "in", tex_stream(20_000, random.Random(5), n_subjects=1500, rate=40), 3)
    common = ["check", "--tbox", str(tmp_path / "tex.ttl"), "--stream", str(tmp_path / "in"), "--window", "6"]
    local = srtopo(common, timeout=300)
    assert local.returncode == 0, local.stderr
    res = srtopo(common + ["--engine", "spark", "--master", master, "--once", "--files-per-batch", "1",
                           "--shuffle-partitions", "2", "--checkpoint", str(tmp_path / "ck")], timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert master in res.stderr
    key = lambda line: (json.loads(line)["subject"], json.loads(line)["time"])  # noqa: E731
    want = {key(x) for x in local.stdout.splitlines() if x.strip()}
    got = [key(x) for x in res.stdout.splitlines() if x.strip()]
    assert len(got) == len(set(got)) and set(got) == want and want
    # the tasks ran in the workers' executors: the master saw an application with 2 cores
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=5) as r:
        apps = json.load(r).get("completedapps", []) + json.load(urllib.request.urlopen(
            f"http://127.0.0.1:{webui}/json/", timeout=5)).get("activeapps", [])
    assert apps and max(a.get("cores", 0) for a in apps) == 2

    # a keyed rule program: the per-sensor stage runs in two key partitions in the workers' executors
    (tmp_path / "p.idlvsr").write_text("hot(S) :- temp(S,V) always in [2 sec], V > 20.\n"
                                       "alarm(S) :- hot(S), not off(S).\n", encoding="utf-8")
    rng = random.Random(3)
    log = [f"{100 + t} " + "; ".join(f"temp(s{s},{rng.randint(15, 30)})" for s in range(8))
           + ("; off(s1)" if t % 5 == 0 else "") for t in range(40)]
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "s.log").write_text("\n".join(log) + "\n", encoding="utf-8")
    common = ["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "log" / "s.log")]
    local = srtopo(common, timeout=300)
    res = srtopo(common + ["--engine", "spark", "--master", master, "--once", "--partitions", "2",
                           "--checkpoint", str(tmp_path / "ck-rules")], timeout=600)
    assert local.returncode == 0 and res.returncode == 0, res.stderr[-3000:]
    assert res.stdout == local.stdout and "alarm(" in local.stdout
