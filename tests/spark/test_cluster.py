"""Cluster mode for real: a standalone master and two 1-core workers on 127.0.0.1 from the pyspark
distribution; `srtopo check --engine spark --master spark://...` gives the local runner's reports, and
`srtopo reason` the local runner's models of a keyed program (its clingo tasks in the workers' executors)."""
import json
import random

import pytest

from tests.spark.helpers import PY, srtopo, srtopo_here, tex_stream, write_tex, write_tnt_files


@pytest.fixture()
def standalone(tmp_path):
    from srtopo.runners.spark.standalone import standalone_cluster
    with standalone_cluster(workers=2, cores=1, workdir=str(tmp_path), python=PY) as cluster:
        yield cluster


@pytest.mark.slow
def test_standalone_cluster_gives_local_reports_and_models(standalone, tmp_path):
    master, webui = standalone
    write_tex(tmp_path / "tex.ttl")
    write_tnt_files(tmp_path / "in", tex_stream(20_000, random.Random(5), n_subjects=1500, rate=40), 3)
    common = ["check", "--tbox", str(tmp_path / "tex.ttl"), "--stream", str(tmp_path / "in"), "--window", "6"]
    local = srtopo_here(common)          # the local runner, in this process
    assert local.returncode == 0, local.stderr
    # --driver-tuples 0: every batch closes in the executors, the cluster's own work
    res = srtopo(common + ["--engine", "spark", "--master", master, "--once", "--files-per-batch", "1",
                           "--shuffle-partitions", "2", "--driver-tuples", "0", "--checkpoint", str(tmp_path / "ck")],
                 timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert master in res.stderr
    key = lambda line: (json.loads(line)["subject"], json.loads(line)["time"])  # noqa: E731
    want = {key(x) for x in local.stdout.splitlines() if x.strip()}
    got = [key(x) for x in res.stdout.splitlines() if x.strip()]
    assert len(got) == len(set(got)) and set(got) == want and want
    # the tasks ran in the workers' executors: the master saw an application with 2 cores
    # (the master learns that the driver is gone asynchronously: ask until it lists the application)
    import time
    import urllib.request
    deadline = time.monotonic() + 60
    while True:
        with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=5) as r:
            state = json.load(r)
        apps = state.get("completedapps", []) + state.get("activeapps", [])
        if apps or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert apps and max(a.get("cores", 0) for a in apps) == 2, state

    # a keyed rule program: the per-sensor stage runs in two key partitions in the workers' executors
    (tmp_path / "p.idlvsr").write_text("hot(S) :- temp(S,V) always in [2 sec], V > 20.\n"
                                       "alarm(S) :- hot(S), not off(S).\n", encoding="utf-8")
    rng = random.Random(3)
    log = [f"{100 + t} " + "; ".join(f"temp(s{s},{rng.randint(15, 30)})" for s in range(8))
           + ("; off(s1)" if t % 5 == 0 else "") for t in range(40)]
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "s.log").write_text("\n".join(log) + "\n", encoding="utf-8")
    common = ["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "log" / "s.log")]
    local = srtopo_here(common)          # the local runner, in this process
    res = srtopo(common + ["--engine", "spark", "--master", master, "--once", "--partitions", "2",
                           "--checkpoint", str(tmp_path / "ck-rules")], timeout=600)
    assert local.returncode == 0 and res.returncode == 0, res.stderr[-3000:]
    assert res.stdout == local.stdout and "alarm(" in local.stdout
