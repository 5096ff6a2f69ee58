"""The I-DLV-sr paper's protocol: each ICLP2021 input replayed to a running query, one time point per period.

    python -m experiments.bench_rules_paced                                  # a subset at 1 tp/s
    python -m experiments.bench_rules_paced --inputs all --periods 1,0.5 --engines local,spark1,spark2

A replayer delivers the input log one line (one time point) per ``--period`` seconds over a TCP socket, as
the I-DLV-sr project's ``stream_socket_service`` (``sender.py``) does, to either engine (``tcp://``; ``--feed
files`` gives Spark one new file per time point in a watched directory instead, written aside and renamed in).
``experiments/replay.py`` does the same against the ``srtopo reason`` command line, in a process of its own.
The query runs until every time point's output has appeared. Per input and engine:

* **accepted requests**: time points whose output appeared before the next time point arrived (the paper's
  measure; 100% means the engine kept up);
* **latency** per time point, arrival to output (the local runner: the model handed to the sink; Spark: the
  batch's models written to ``out/`` and handed to the sink), p50 / p95 / max;
* **sustainable rate**: time points per second at full speed, one time point per batch (the replay with no
  pause), i.e. the highest period the engine could be fed without falling behind;
* **backlog**: time points delivered and not yet answered, as each one arrived (its maximum in the table, the
  series in the JSON), and time points **lost** (delivered, never answered);
* process memory, and whether the models equal the local runner's.

``--periods 0,2x`` first measures the sustainable rate, then feeds the same engine at twice it (overload): a
query that falls behind must still answer every time point, with the models of the local runner, its latency
and backlog growing while the feed lasts and draining after it.

A Spark engine is measured as a running service: before the replay, a query of its own processes
``--warmup`` time points (default 20), one per micro-batch, so that the JVM has compiled the batch's code
paths (a new JVM's first ~15 micro-batches take 1.5-2 s instead of ~0.7 s).

Each engine runs in its own process (its own session and master). Results: ``results/bench_rules_paced.json``
and ``.csv``, a table on stdout, and a plot of latency per time point like the paper's Figures 3 and 4
(``results/bench_rules_paced.png``).
"""
from __future__ import annotations

import argparse
import bisect
import csv
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from experiments.common import models_digest, run_worker
from experiments.replay import Sender
from experiments.replay import log_lines as replay_lines
from srtopo.measure import percentile, rss_mb

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "idlvsr" / "ICLP2021-Experiments"
CC = "ContentCaching/events_variation_test/I-DLV-sr"
HJ = "HeavyJoin/I-DLV-sr"
PV = "Photo-voltaicSystem/I-DLV-sr"
PV_SIZES = {"20x20": "G20x20S15n11970", "22x22": "G22x22S15n17532", "24x24": "G24x24S15n24840",
            "26x26": "G26x26S15n34222", "28x28": "G28x28S15n46040", "30x30": "G30x30S15n60682"}


def _inputs() -> dict[str, tuple[str, str]]:
    """name -> (program, log) of every ICLP2021 input, relative to DATA."""
    out = {}
    for n in range(50, 501, 50):
        out[f"cc-{n}"] = (f"{CC}/{n}/Program/cat_w05.idlvsr", f"{CC}/{n}/Log/tp60etp{n}ce1.log")
    window = "ContentCaching/window_variation_test/I-DLV-sr/T3"      # its programs are in Encoding/
    for program in sorted((DATA / window / "Encoding").glob("*.idlvsr")):
        out[f"cc-window-{program.stem}"] = (f"{window}/Encoding/{program.name}", f"{window}/Log/tp60HLH.log")
    for n in range(50, 501, 50):
        for w in (2, 20):
            out[f"hj-{n}-w{w}"] = (f"{HJ}/{n}/Program/encoding_w{w}.idlvsr", f"{HJ}/{n}/Log/tp30etp{n // 2}ce1.log")
    for size, folder in PV_SIZES.items():
        out[f"pv-{size}"] = (f"{PV}/{folder}/Program/{folder}.idlvsr", f"{PV}/{folder}/Log")
    return out


INPUTS = _inputs()
DEFAULT_INPUTS = "cc-100,cc-500,hj-500-w2,hj-500-w20,pv-20x20"
#: engine -> Spark master (``cluster``: a standalone master and two 1-core workers started for the run)
ENGINES = {"local": None, "spark1": "local[1]", "spark2": "local[2]", "cluster": "standalone"}
#: time points a Spark engine is warmed on before the measured replay
WARMUP = 20


def log_lines(name: str) -> tuple[str, list[str]]:
    program, log = INPUTS[name]
    return str(DATA / program), replay_lines(str(DATA / log))


class TimedSink:
    """Records when each time point's model reached the sink."""

    def __init__(self):
        self.seen: dict[int, float] = {}
        self.models: dict[int, list] = {}
        self.done = threading.Event()
        self.expected = None

    def emit(self, model) -> None:
        self.seen.setdefault(model.time, time.perf_counter())
        self.models[model.time] = list(model.atoms)
        if self.expected is not None and len(self.seen) >= self.expected:
            self.done.set()

    def reject(self, record) -> None:
        print(f"rejected: {record}", file=sys.stderr)


def _socket_replayer(lines: list[str], period: float, sent: dict):
    """A one-connection server sending a line per period (``replay.Sender``); returns (port, thread)."""
    sender = Sender()

    def serve():
        sender.connected.wait()
        try:
            sender.send(lines, period, sent)
        finally:
            sender.close()
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return sender.port, thread


def _file_replayer(lines: list[str], period: float, folder: str, sent: dict):
    """A line per period as a new file of ``folder`` (written aside, then renamed in)."""
    aside = folder + ".tmp"
    os.makedirs(aside, exist_ok=True)

    def serve():
        start = time.perf_counter()
        stamp = 0
        for i, line in enumerate(lines):
            delay = start + i * period - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            tmp = os.path.join(aside, f"tp-{i:06d}.log")
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(line + "\n")
            # the file source orders files by modification time (milliseconds): two files renamed in within
            # the same millisecond would be read in any order
            stamp = max(time.time_ns(), stamp + 2_000_000)
            os.utime(tmp, ns=(stamp, stamp))
            sent[i] = time.perf_counter()
            os.rename(tmp, os.path.join(folder, f"tp-{i:06d}.log"))
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def run_one(engine: str, name: str, period: float, partitions: int, workdir: str, master: str | None = None,
            warmup: int = WARMUP, feed: str = "socket", time_points: int = 0) -> dict:
    """One engine on one input at one period (0: full speed), in this process (``master``: a given Spark master;
    ``warmup``: time points a Spark engine processes first, one per micro-batch, in a query of its own;
    ``time_points``: replay only the log's first so many, 0: all)."""
    from srtopo.io.sources import AtomLog
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner
    program, lines = log_lines(name)
    if time_points:
        lines = lines[:time_points]
    topology = compile_program(parse_file(program))
    sink = TimedSink()
    sink.expected = len(lines)          # the logs have no gaps: a line per time point
    sent: dict[int, float] = {}
    if engine == "local":
        port, thread = _socket_replayer(lines, period, sent)
        started = time.perf_counter()
        LocalRunner().run(topology, [AtomLog(f"tcp://127.0.0.1:{port}", "log")], RunConfig(lateness=0), sink)
        thread.join()
        memory = rss_mb()
    elif ENGINES.get(engine) == "standalone":
        from srtopo.runners.spark.standalone import standalone_cluster
        with standalone_cluster(workers=2, cores=1, workdir=os.path.join(workdir, "cluster")) as (master, _ui):
            return run_one("spark", name, period, partitions, workdir, master, warmup, feed,
                           time_points) | {"engine": engine}
    else:
        from srtopo.runners.spark.session import get_session
        spark = get_session(master=master or ENGINES.get(engine), shuffle_partitions=partitions, collector="latency")
        runner = SparkRunner(spark)
        options = SparkOptions(partitions=partitions, once=False)
        # a running service: the JVM's compilers and the Python workers warmed by a query of its own over the
        # first time points, one per micro-batch (the first ~15 batches of a new JVM take 1.5-2 s instead of 0.7)
        warm = os.path.join(workdir, f"warm-{engine}")
        os.makedirs(warm + "/in")
        for i in range(warmup):
            path = Path(warm, "in", f"tp-{i:06d}.log")
            path.write_text(lines[i % len(lines)] + "\n", encoding="utf-8")
            os.utime(path, ns=(i * 10 ** 9, i * 10 ** 9))       # the file source reads by modification time
        if warmup:
            runner.run(topology, [AtomLog(warm + "/in", "log", 1)],
                       RunConfig(lateness=0, checkpoint=warm + "/ck", options=SparkOptions(partitions=partitions)))
        checkpoint = os.path.join(workdir, f"ck-{engine}")
        if feed == "socket":
            # a batch takes every line that has arrived: under a backlog, every time point that is ready
            port, thread = _socket_replayer(lines, period, sent)
            handle = runner.start(topology, [AtomLog(f"tcp://127.0.0.1:{port}", "log")],
                                  RunConfig(lateness=0, checkpoint=checkpoint, options=options), sink)
            started = time.perf_counter()
        else:
            folder = os.path.join(workdir, f"in-{engine}")
            os.makedirs(folder)
            # paced: a batch takes every file that has arrived; full speed: one file (time point) per batch
            handle = runner.start(topology, [AtomLog(folder, "log", 1 if period == 0 else None)],
                                  RunConfig(lateness=0, checkpoint=checkpoint, options=options), sink)
            started = time.perf_counter()
            thread = _file_replayer(lines, period, folder, sent)
        sink.done.wait(timeout=max(120.0, len(lines) * max(period, 0.2) * 20))
        thread.join()
        handle.stop()
        memory = rss_mb()
    seconds = time.perf_counter() - started
    latencies = [sink.seen[t] - sent[t] for t in sorted(sent) if t in sink.seen]
    # accepted: the output appeared before the next time point arrived (the last one: within a period)
    accepted = sum(1 for t in sorted(sent) if t in sink.seen and sink.seen[t] - sent[t] <= (period or float("inf")))
    models = [sink.models[t] for t in sorted(sink.models)]
    # backlog: time points delivered and not yet answered, as each time point arrived
    answered_at = sorted(sink.seen.values())
    backlog = [i + 1 - bisect.bisect_right(answered_at, sent[i]) for i in sorted(sent)]
    return {"engine": engine, "input": name, "period_s": period, "time_points": len(lines),
            "answered": len(latencies), "lost": len(sent) - len(latencies), "accepted": accepted if period else None,
            "backlog_max": max(backlog, default=0), "backlog": backlog,
            "accepted_pct": round(100.0 * accepted / len(lines), 1) if period else None,
            "latency_p50_s": round(percentile(latencies, 0.5), 4) if latencies else None,
            "latency_p95_s": round(percentile(latencies, 0.95), 4) if latencies else None,
            "latency_max_s": round(max(latencies), 4) if latencies else None,
            "seconds": round(seconds, 3), "tps": round(len(latencies) / seconds, 3) if seconds else None,
            "memory_mb": round(memory, 1), "latencies": [round(x, 4) for x in latencies],
            "digest": models_digest(models)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", default=DEFAULT_INPUTS, help="comma-separated: " + ", ".join(INPUTS) + " or all")
    parser.add_argument("--engines", default="local,spark2")
    parser.add_argument("--periods", default="1,0",
                        help="seconds between time points (0: full speed; Nx: N times the rate the same engine "
                             "sustained at full speed on the same input earlier in this run, e.g. 0,2x: overload)")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_rules_paced.json"))
    parser.add_argument("--warmup", type=int, default=WARMUP,
                        help="time points a Spark engine processes first, one per micro-batch, in a query of its own")
    parser.add_argument("--feed", choices=("socket", "files"), default="socket",
                        help="how Spark gets the log: a TCP socket, as the local engine (default), or a new file per "
                             "time point in a watched directory")
    parser.add_argument("--time-points", type=int, default=0,
                        help="replay only each log's first N time points (default: the whole log)")
    parser.add_argument("--worker", nargs=7,
                        metavar=("ENGINE", "INPUT", "PERIOD", "PARTITIONS", "WARMUP", "FEED", "TIME_POINTS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        engine, name, period, partitions, warmup, feed, time_points = args.worker
        workdir = tempfile.mkdtemp(prefix="srtopo-paced-")
        try:
            print(json.dumps(run_one(engine, name, float(period), int(partitions), workdir, warmup=int(warmup),
                                     feed=feed, time_points=int(time_points))))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return 0
    names = list(INPUTS) if args.inputs == "all" else args.inputs.split(",")
    missing = [n for n in names if n not in INPUTS or not (DATA / INPUTS[n][0]).exists()]
    if missing:
        print(f"unknown or absent inputs: {', '.join(missing)}", file=sys.stderr)
        return 2
    periods = args.periods.split(",")
    rows = []
    jobs = [(n, e, p) for n in names for p in periods for e in args.engines.split(",")]
    for i, (name, engine, period) in enumerate(jobs, start=1):
        if period.endswith("x"):        # a multiple of the sustained rate measured in this run
            full = next((r for r in rows if r["input"] == name and r["engine"] == engine and r["period_s"] == 0), None)
            if full is None or not full["tps"]:
                print(f"{period}: measure period 0 first for {name} on {engine}", file=sys.stderr)
                return 2
            period = round(1.0 / (float(period[:-1]) * full["tps"]), 4)
        period = float(period)
        print(f"[{i}/{len(jobs)}] {name} {engine} period {period}s", file=sys.stderr, flush=True)
        row = run_worker("experiments.bench_rules_paced",
                         [engine, name, str(period), str(args.partitions), str(args.warmup), args.feed,
                          str(args.time_points)])
        if row is None:
            return 1
        rows.append(row)
    for row in rows:
        base = next((r for r in rows if r["input"] == row["input"] and r["engine"] == "local"), None)
        row["same_models_as_local"] = base is None or row["digest"] == base["digest"]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"date": time.strftime("%Y-%m-%d"), "args": {k: v for k, v in vars(args).items() if k != "worker"},
                   "rows": rows}, handle, indent=1)
    columns = ["input", "engine", "period_s", "accepted_pct", "latency_p50_s", "latency_p95_s", "latency_max_s",
               "tps", "backlog_max", "lost", "memory_mb", "same_models_as_local"]
    with open(out.with_suffix(".csv"), "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{'input':14} {'engine':7} {'period':>6} {'acc %':>6} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'tp/s':>7} "
          f"{'backlog':>7} {'lost':>4} {'MB':>6} same")
    for r in rows:
        acc = "-" if r["accepted_pct"] is None else f"{r['accepted_pct']:.0f}"
        print(f"{r['input']:14} {r['engine']:7} {r['period_s']:6.2f} {acc:>6} {r['latency_p50_s'] or 0:7.3f} "
              f"{r['latency_p95_s'] or 0:7.3f} {r['latency_max_s'] or 0:7.3f} {r['tps'] or 0:7.2f} "
              f"{r.get('backlog_max', 0):7d} {r.get('lost', 0):4d} {r['memory_mb']:6.0f} {r['same_models_as_local']}")
    _plot(rows, out.with_suffix(".png"))
    _plot_periods(rows, out.with_name(out.stem + "_periods.png"))
    return 0


def _plot(rows: list[dict], path: Path) -> None:
    """Latency per time point, one panel per input at the first paced period (the paper's Figures 3-4)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    paced = [r for r in rows if r["period_s"]]
    names = list(dict.fromkeys(r["input"] for r in paced))
    if not names:
        return
    if len(names) > 8:          # many inputs: one box of latencies per input and engine, the period as a line
        fig, ax = plt.subplots(figsize=(max(8.0, 0.3 * len(paced)), 4))
        ax.boxplot([r["latencies"] for r in paced], showfliers=True)
        ax.set_xticks(range(1, len(paced) + 1), [f"{r['input']} {r['engine']}" for r in paced], rotation=90,
                      fontsize=7)
        ax.axhline(max(r["period_s"] for r in paced), color="grey", linewidth=0.8, linestyle="--")
        ax.set_ylabel("latency per time point (s)")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        for r in (r for r in paced if r["input"] == name):
            ax.plot(range(len(r["latencies"])), r["latencies"], label=f"{r['engine']} ({r['period_s']:g}s)")
            ax.axhline(r["period_s"], color="grey", linewidth=0.6, linestyle="--")
        ax.set_title(name)
        ax.set_xlabel("time point")
        ax.set_ylabel("latency (s)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _plot_periods(rows: list[dict], path: Path) -> None:
    """Total time and latency against the period, a line per input and engine (the paper's Figure 4, a.1 and a.2);
    drawn when some input was fed at two periods or more."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    paced = [r for r in rows if r["period_s"]]
    lines = {}
    for r in paced:
        lines.setdefault((r["input"], r["engine"]), []).append(r)
    lines = {k: sorted(v, key=lambda r: r["period_s"]) for k, v in lines.items() if len(v) > 1}
    if not lines:
        return
    fig, (total, latency) = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = {name: f"C{i % 10}" for i, name in enumerate(dict.fromkeys(name for name, _ in sorted(lines)))}
    for (name, engine), series in sorted(lines.items()):
        periods = [r["period_s"] for r in series]
        style = dict(color=colours[name], linestyle="-" if engine == "local" else "--")
        total.plot(periods, [r["seconds"] for r in series], marker="o", label=f"{name} {engine}", **style)
        latency.plot(periods, [r["latency_p50_s"] for r in series], marker="o", label=f"{name} {engine} p50", **style)
        latency.plot(periods, [r["latency_p95_s"] for r in series], marker="x", alpha=0.45, **style)
    total.set_xlabel("period (s)")
    total.set_ylabel("total time (s)")
    total.set_title("(a.1) total time")
    latency.set_xlabel("period (s)")
    latency.set_ylabel("latency (s)")
    latency.set_yscale("log")
    latency.set_title("(a.2) latency: p50 (o), p95 (x)")
    total.legend(fontsize=6)
    latency.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
