"""Report latency of the consistency check on Spark under a paced feed, at 50% and 80% of the rate the query
sustains. experiments/README.md, "What each benchmark measures", says how."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from experiments.bench_consistency import DEFAULT_TBOX, load, make_stream
from experiments.common import arguments, log, progress, splits, stats, text_table, write_json
from srtopo.concepts import RDF_TYPE
from srtopo.consistency.compile import compile_ntm
from srtopo.io.sinks import MemorySink
from srtopo.io.sources import TntFiles
from srtopo.io.tnt import write_tnt
from srtopo.runners import RunConfig, SparkOptions, SparkRunner

#: files per batch size: for the sustainable rate, then for each paced run
FILES = {100_000: (16, 15), 500_000: (6, 5), 1_000_000: (4, 4)}


def _files(folder: Path, tuples: list, batch: int, n: int, file_tuples: int) -> list[list[Path]]:
    """``n`` micro-batches of ``batch`` tuples, each as files of ``file_tuples`` tuples (a file is read whole, as
    one task: a micro-batch of one file would parse on one core)."""
    folder.mkdir(parents=True, exist_ok=True)
    per_file = min(batch, file_tuples)
    names = write_tnt(str(folder), ((t, s, RDF_TYPE, c) for s, c, t in tuples[:batch * n]), per_file=per_file)
    paths = [Path(p) for p in sorted(names)]
    k = -(-batch // per_file)
    return [paths[i:i + k] for i in range(0, len(paths), k)]


def sustainable(topology, files: list[list[Path]], work: Path, master: str, window: int, batch: int) -> dict:
    """Tuples/s of the same kind of running query with every batch's files fed at once (the Python hand-over
    included), from the end of its 3rd batch to the end of its last: the tuples of the batches in between (a
    listing while files are still being moved in can make a batch smaller) over that time."""
    got = paced(topology, files, work, master, window, 0.0, 1, batch)
    done, tuples = got.pop("_finished"), got.pop("_tuples")
    rate = sum(tuples[3:]) / (done[-1] - done[2]) if len(done) > 3 else batch / got["batch_p50_s"]
    return {"steady_tuples_per_s": round(rate), "sustained_batch_p50_s": got["batch_p50_s"]}


def _publish(work: Path, inbox: Path, files: list[Path]) -> None:
    """Make ``inbox`` (a symbolic link) show exactly ``files``, all at once: a folder of hard links to them,
    then the link moved onto it in one rename. Moving a batch's files in one by one, a listing between two
    moves split the batch over two micro-batches (about one batch in fifteen), which delayed half of its
    reports by a micro-batch."""
    folder = work / f"shown-{len(files):06d}-{time.monotonic_ns()}"
    folder.mkdir()
    for path in files:
        os.link(path, folder / path.name)
    link = work / ".in.next"
    link.unlink(missing_ok=True)
    link.symlink_to(folder, target_is_directory=True)
    os.replace(link, inbox)


def paced(topology, files: list[list[Path]], work: Path, master: str, window: int, period: float, rate: int,
          batch: int) -> dict:
    """Feed one micro-batch's files every ``period`` seconds into a running query (0: all at once); latency of
    every report it writes."""
    inbox, out = work / "in", work / "out"
    work.mkdir(parents=True)
    fed = work / "fed"
    fed.mkdir()
    _publish(work, inbox, [])
    config = RunConfig(window=window, lateness=0, checkpoint=str(work / "ck"), out=str(out),
                       options=SparkOptions(master=master, once=False))
    handle = SparkRunner().start(topology, [TntFiles(str(inbox), files_per_batch=len(files[0]))], config, MemorySink())
    arrivals = []
    try:
        next_at = time.time()
        for group in progress(files, desc=f"feed every {period:.2f} s", leave=False):
            time.sleep(max(0.0, next_at - time.time()))
            for path in group:
                shutil.copy(path, fed / path.name)
            arrivals.append(time.time())        # before the files show: the query may report on them first
            _publish(work, inbox, sorted(fed.iterdir()))
            next_at += period
        # every tuple processed
        deadline = time.time() + 600
        while sum(m["tuples"] for m in list(handle.batch_metrics)) < batch * len(files):
            if handle.query.exception() is not None or time.time() > deadline:
                raise RuntimeError(f"the query stopped or stalled: {handle.query.exception()}")
            time.sleep(0.05)
    finally:
        handle.stop()
    metrics = list(handle.batch_metrics)
    written = {m["batch"]: m["written_at"] for m in metrics}
    latencies, per_batch = [], {}
    for name in sorted(os.listdir(out)):
        if not name.startswith("batch=") or name == "batch=final":
            continue
        done = written[int(name.split("=", 1)[1])]
        for part in sorted((out / name).iterdir()):
            if part.suffix != ".json":
                continue
            for line in part.read_text(encoding="utf-8").splitlines():
                t = json.loads(line)["time"]
                last = min(len(files) - 1, ((t + 1) * rate - 1) // batch)   # the last batch with tuples of time t
                latencies.append(done - arrivals[last])
                per_batch.setdefault(name, []).append(done - arrivals[last])
    durations = [m["duration_s"] for m in metrics]
    if period == 0:
        return {**stats(durations, "batch_{}_s", ("p50",), digits=3), "_finished": [m["finished_at"] for m in metrics],
                "_tuples": [m["tuples"] for m in metrics]}
    done_tuples, backlog = 0, []      # batches that had arrived but were not processed when a batch finished
    for m in metrics:
        done_tuples += m["tuples"]
        backlog.append(sum(1 for a in arrivals if a <= m["finished_at"]) - done_tuples / batch)
    return {"period_s": round(period, 3), "fed_batches": len(files), "reports": len(latencies),
            **stats(latencies, "latency_{}_s", ("min", "p50", "p95", "max"), digits=3),
            **stats(durations, "batch_{}_s", digits=3),
            "backlog_max_batches": round(max(backlog), 2) if backlog else 0, "batches": len(metrics),
            "batch_durations_s": [round(d, 3) for d in durations],
            "batch_latency_p50_s": {int(name.split("=", 1)[1]): stats(v, digits=3)["p50"]
                                    for name, v in sorted(per_batch.items())}}


def main(argv=None) -> int:
    args = arguments(__doc__, batch_tuples="100000,500000,1000000",
                     fractions=("0.5,0.8", "fractions of the sustainable rate to feed at"), master="local[2]",
                     rate=(2000, "tuples per time unit"), window=30,
                     file_tuples=(50_000, "tuples per input file (bench_consistency's); a micro-batch is whole files"),
                     out="bench_consistency_latency.json").parse_args(argv)
    sizes, fractions = splits(args.batch_tuples, int), splits(args.fractions, float)
    _, analysis = load(DEFAULT_TBOX)
    topology = compile_ntm(analysis)
    need = max(b * max(FILES.get(b, (4, 4))) for b in sizes)
    tuples = make_stream(analysis, need, args.rate, 0.1, 50_000, 1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="srtopo-latency-") as tmp:
        work = Path(tmp)
        # a JVM whose JIT has compiled Spark's planner and generated code, as a running service's has: the first
        # ~1M tuples through a query of their own (a cold JVM's first batches take 2-3x longer), or as many whole
        # batches of the stream as there are when the batches measured are smaller
        warm_batch = min(100_000, len(tuples) // 10)
        warm = _files(work / "warm", tuples, warm_batch, 10, args.file_tuples)
        sustainable(topology, warm, work / "warm-run", args.master, args.window, warm_batch)
        for batch in sizes:
            n_sus, n_paced = FILES.get(batch, (4, 4))
            files = _files(work / f"files-{batch}", tuples, batch, max(n_sus, n_paced), args.file_tuples)
            sus = sustainable(topology, files[:n_sus], work / f"sus-{batch}", args.master, args.window, batch)
            log(f"{batch} tuples per batch: sustains {sus['steady_tuples_per_s']} tuples/s")
            for fraction in fractions:
                period = batch / (fraction * sus["steady_tuples_per_s"])
                got = paced(topology, files[:n_paced], work / f"paced-{batch}-{fraction}", args.master, args.window,
                            period, args.rate, batch)
                row = {"batch_tuples": batch, "file_tuples": min(batch, args.file_tuples), "fraction": fraction,
                       "master": args.master, **sus, **got}
                log(json.dumps(row))
                rows.append(row)
    columns = ["batch_tuples", "fraction", "steady_tuples_per_s", "period_s", "latency_p50_s", "latency_p95_s",
               "latency_max_s", "batch_p50_s", "backlog_max_batches"]      # backlog: batches waiting
    print(text_table(columns, [[r[c] for c in columns] for r in rows]))
    write_json(args.out, {"rows": rows, "cpus": os.cpu_count()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
