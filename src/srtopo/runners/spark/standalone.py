"""A standalone Spark cluster on 127.0.0.1 (a master and N workers from the pyspark distribution), for the
cluster-mode tests and benchmarks: ``with standalone_cluster(workers=2) as (master_url, webui): ...``."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager

from srtopo.errors import SrtopoError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise SrtopoError(f"the standalone master did not listen on port {port} within {timeout:.0f} s",
                      hint="is Java 17 on the PATH (java -version)?")


def _wait_workers(webui: int, n: int, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=5) as r:
                if len([w for w in json.load(r).get("workers", []) if w.get("state") == "ALIVE"]) >= n:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SrtopoError(f"{n} standalone workers did not register within {timeout:.0f} s")


@contextmanager
def standalone_cluster(workers: int = 2, cores: int = 1, memory: str = "1g", workdir: str | None = None,
                       python: str | None = None, timeout: float = 90.0):
    """Start a master and ``workers`` workers (``cores`` cores each), yield (master URL, master web UI port),
    and stop them all (their process groups) on exit."""
    import pyspark
    home = os.path.dirname(pyspark.__file__)
    workdir = workdir or tempfile.mkdtemp(prefix="srtopo-standalone-")
    env = dict(os.environ, SPARK_HOME=home, PYSPARK_PYTHON=python or sys.executable,
               SPARK_LOG_DIR=os.path.join(workdir, "logs"), SPARK_WORKER_DIR=os.path.join(workdir, "work"),
               SPARK_LOCAL_IP="127.0.0.1")
    port, webui = free_port(), free_port()
    spark_class = os.path.join(home, "bin", "spark-class")
    procs = []

    def start(*args):
        procs.append(subprocess.Popen([spark_class, *args], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True))
    try:
        start("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(webui))
        _wait_port(port, timeout)
        for _ in range(workers):
            start("org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host", "127.0.0.1",
                  "--cores", str(cores), "--memory", memory, "--port", str(free_port()),
                  "--webui-port", str(free_port()))
        _wait_workers(webui, workers, timeout)
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
