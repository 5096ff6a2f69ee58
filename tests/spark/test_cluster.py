"""Cluster mode for real: a standalone master and two 1-core workers on 127.0.0.1 from the pyspark
distribution; `srtopo check --engine spark --master spark://...` gives the local runner's reports, `srtopo reason`
the local runner's models of a keyed program (its clingo tasks in the workers' executors), and a chain both. The
three Spark commands run one after the other in one process, on one application (one driver, one set of
executors: the cluster's own work, not three start-ups)."""
import json
import random

import pytest

from tests.spark.helpers import PY, TEX, srtopo_here, srtopo_in_one_application, tex_stream, write_tex, \
    write_tnt_files


@pytest.fixture()
def standalone(tmp_path):
    from srtopo.runners.spark.standalone import standalone_cluster
    with standalone_cluster(workers=2, cores=1, workdir=str(tmp_path), python=PY) as cluster:
        yield cluster


def _key(line: str) -> tuple:
    report = json.loads(line)
    return report["subject"], report["time"]


@pytest.mark.slow
def test_standalone_cluster_gives_local_reports_and_models(standalone, tmp_path):
    master, webui = standalone
    write_tex(tmp_path / "tex.ttl")
    write_tnt_files(tmp_path / "in", tex_stream(6_000, random.Random(5), n_subjects=500, rate=40), 3)
    check = ["check", "--tbox", str(tmp_path / "tex.ttl"), "--stream", str(tmp_path / "in"), "--window", "6"]
    # a keyed rule program: the per-sensor stage runs in two key partitions in the workers' executors
    (tmp_path / "p.idlvsr").write_text("hot(S) :- temp(S,V) always in [2 sec], V > 20.\n"
                                       "alarm(S) :- hot(S), not off(S).\n", encoding="utf-8")
    rng = random.Random(3)
    log = [f"{100 + t} " + "; ".join(f"temp(s{s},{rng.randint(15, 30)})" for s in range(8))
           + ("; off(s1)" if t % 5 == 0 else "") for t in range(40)]
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "s.log").write_text("\n".join(log) + "\n", encoding="utf-8")
    reason = ["reason", "--program", str(tmp_path / "p.idlvsr"), "--stream", str(tmp_path / "log" / "s.log")]
    # a chain with every batch on the executors: the reports closed in a Spark write, the statements withheld and
    # saturated by Spark joins, the program in key-partitioned clingo tasks; no statement passes the driver
    (tmp_path / "people.idlvsr").write_text(
        f'person(X) :- triple(X, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "{TEX}Person").\n'
        "regular(X) :- person(X) at least 2 in [5].\n#show regular/1.\n", encoding="utf-8")
    chain = ["reason", "--tbox", str(tmp_path / "tex.ttl"), "--program", str(tmp_path / "people.idlvsr"), "--stream",
             str(tmp_path / "in"), "--window", "6", "--reports-out"]
    metrics = tmp_path / "metrics.jsonl"
    on = ["--engine", "spark", "--master", master, "--once"]
    checked, reasoned, chained = srtopo_in_one_application([
        # --driver-tuples 0: every batch closes in the executors
        check + on + ["--files-per-batch", "1", "--shuffle-partitions", "2", "--driver-tuples", "0",
                      "--checkpoint", str(tmp_path / "ck")],
        reason + on + ["--partitions", "2", "--checkpoint", str(tmp_path / "ck-rules")],
        chain + [str(tmp_path / "reports")] + on + [
            "--files-per-batch", "1", "--driver-tuples", "0", "--driver-lines", "0", "--partitions", "2",
            "--metrics-out", str(metrics), "--checkpoint", str(tmp_path / "ck-chain")]], tmp_path)

    local = srtopo_here(check)          # the local runner, in this process
    assert local.returncode == 0 and checked.returncode == 0, checked.stderr[-3000:]
    assert master in checked.stderr
    want = {_key(x) for x in local.stdout.splitlines() if x.strip()}
    got = [_key(x) for x in checked.stdout.splitlines() if x.strip()]
    assert len(got) == len(set(got)) and set(got) == want and want

    local = srtopo_here(reason)
    assert local.returncode == 0 and reasoned.returncode == 0, reasoned.stderr[-3000:]
    assert reasoned.stdout == local.stdout and "alarm(" in local.stdout

    local = srtopo_here(chain + [str(tmp_path / "local-reports.jsonl")])
    assert local.returncode == 0 and chained.returncode == 0, chained.stderr[-3000:]
    assert chained.stdout == local.stdout and "regular(" in local.stdout
    got = sorted(_key(x) for part in (tmp_path / "reports").glob("batch=*/*.json")
                 for x in part.read_text().splitlines() if x.strip())
    assert got == sorted(_key(x) for x in (tmp_path / "local-reports.jsonl").read_text().splitlines())
    batches = [json.loads(x) for x in metrics.read_text().splitlines()]
    assert batches and {(b["closed_on"], b["saturated_on"], b["evaluated_on"]) for b in batches} == {
        ("spark", "spark", "executors")}

    # the tasks ran in the workers' executors: the master saw one application with 2 cores
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
    assert len(apps) == 1 and apps[0].get("cores", 0) == 2, state
