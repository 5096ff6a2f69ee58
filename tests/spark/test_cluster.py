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

    # a chain with every batch on the executors: the reports closed in a Spark write, the statements withheld and
    # saturated by Spark joins, the program in key-partitioned clingo tasks; no statement passes the driver
    from tests.spark.helpers import TEX
    (tmp_path / "people.idlvsr").write_text(
        f'person(X) :- triple(X, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "{TEX}Person").\n'
        "regular(X) :- person(X) at least 2 in [5].\n#show regular/1.\n", encoding="utf-8")
    common = ["reason", "--tbox", str(tmp_path / "tex.ttl"), "--program", str(tmp_path / "people.idlvsr"), "--stream",
              str(tmp_path / "in"), "--window", "6", "--reports-out"]
    local = srtopo(common + [str(tmp_path / "local-reports.jsonl")], timeout=300)
    metrics = tmp_path / "metrics.jsonl"
    res = srtopo(common + [str(tmp_path / "reports"), "--engine", "spark", "--master", master, "--once",
                           "--files-per-batch", "1", "--driver-tuples", "0", "--driver-lines", "0", "--partitions",
                           "2", "--metrics-out", str(metrics), "--checkpoint", str(tmp_path / "ck-chain")],
                 timeout=900)
    assert local.returncode == 0 and res.returncode == 0, res.stderr[-3000:]
    assert res.stdout == local.stdout and "regular(" in local.stdout
    got = sorted(key(x) for part in (tmp_path / "reports").glob("batch=*/*.json")
                 for x in part.read_text().splitlines() if x.strip())
    assert got == sorted(key(x) for x in (tmp_path / "local-reports.jsonl").read_text().splitlines())
    batches = [json.loads(x) for x in metrics.read_text().splitlines()]
    assert batches and {(b["closed_on"], b["saturated_on"], b["evaluated_on"]) for b in batches} == {
        ("spark", "spark", "executors")}
