"""The I-DLV-sr paper's protocol: each ICLP2021 input replayed to a running query, one time point per period over
a socket; accepted requests, latency, sustainable rate and backlog per engine. experiments/README.md, "What each
benchmark measures", says how."""
from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

from experiments.common import (
    ICLP_INPUTS, TimedSink, arguments, chart, command, iclp_input, iclp_names, in_own_process, log, models_digest,
    splits, text_table, warm_jvm, write_parts, write_rows)
from experiments.replay import Sender, answers, pace
from srtopo.measure import rss_mb

DEFAULT_INPUTS = "cc-100,cc-500,hj-500-w2,hj-500-w20,pv-20x20"
#: engine -> Spark master (``cluster``: a standalone master and two 1-core workers started for the run)
ENGINES = {"local": None, "spark1": "local[1]", "spark2": "local[2]", "cluster": "standalone"}
#: time points a Spark engine is warmed on before the measured replay
WARMUP = 20


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
    stamp = [0]

    def deliver(i: int, line: str) -> None:
        tmp = os.path.join(aside, f"tp-{i:06d}.log")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(line + "\n")
        # the file source orders files by modification time (milliseconds): two files renamed in within the same
        # millisecond would be read in any order
        stamp[0] = max(time.time_ns(), stamp[0] + 2_000_000)
        os.utime(tmp, ns=(stamp[0], stamp[0]))
        os.rename(tmp, os.path.join(folder, f"tp-{i:06d}.log"))
    thread = threading.Thread(target=pace, args=(lines, period, deliver, sent), daemon=True)
    thread.start()
    return thread


def run_one(engine: str, name: str, period: float, partitions: int, master: str | None = None,
            warmup: int = WARMUP, feed: str = "socket", time_points: int = 0) -> dict:
    """One engine on one input at one period (0: full speed), in this process (``master``: a given Spark master;
    ``warmup``: time points a Spark engine processes first, one per micro-batch, in a query of its own;
    ``time_points``: replay only the log's first so many, 0: all)."""
    with tempfile.TemporaryDirectory(prefix="srtopo-paced-") as workdir:
        return _replay(engine, name, period, partitions, master, warmup, feed, time_points, workdir)


def _replay(engine, name, period, partitions, master, warmup, feed, time_points, workdir) -> dict:
    from srtopo.io.sources import AtomLog
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_file
    from srtopo.runners import LocalRunner, RunConfig, SparkOptions, SparkRunner
    program, lines = iclp_input(name)
    lines = lines[:time_points or None]
    topology = compile_program(parse_file(program))
    sink = TimedSink(expected=len(lines))       # the logs have no gaps: a line per time point
    sent: dict[int, float] = {}
    if engine == "local":
        port, thread = _socket_replayer(lines, period, sent)
        started = time.perf_counter()
        LocalRunner().run(topology, [AtomLog(f"tcp://127.0.0.1:{port}", "log")], RunConfig(lateness=0), sink)
        thread.join()
    elif ENGINES.get(engine) == "standalone":
        from srtopo.runners.spark.standalone import standalone_cluster
        with standalone_cluster(workers=2, cores=1, workdir=os.path.join(workdir, "cluster")) as (master, _ui):
            return run_one("spark", name, period, partitions, master, warmup, feed, time_points) | {"engine": engine}
    else:
        from srtopo.runners.spark.session import get_session
        spark = get_session(master=master or ENGINES.get(engine), shuffle_partitions=partitions, collector="latency")
        runner = SparkRunner(spark)
        options = SparkOptions(partitions=partitions, once=False)
        if warmup:      # the first time points, one per micro-batch (a new JVM's first ~15 take 1.5-2 s, not 0.7)
            warm = write_parts(os.path.join(workdir, "warm"), [[lines[i % len(lines)]] for i in range(warmup)])
            warm_jvm(runner, topology, [AtomLog(os.path.dirname(warm[0]), "log", 1)],
                     RunConfig(lateness=0, options=SparkOptions(partitions=partitions)))
        config = RunConfig(lateness=0, checkpoint=os.path.join(workdir, "ck"), options=options)
        if feed == "socket":
            # a batch takes every line that has arrived: under a backlog, every time point that is ready
            port, thread = _socket_replayer(lines, period, sent)
            handle = runner.start(topology, [AtomLog(f"tcp://127.0.0.1:{port}", "log")], config, sink)
            started = time.perf_counter()
        else:
            folder = os.path.join(workdir, "in")
            os.makedirs(folder)
            # paced: a batch takes every file that has arrived; full speed: one file (time point) per batch
            handle = runner.start(topology, [AtomLog(folder, "log", 1 if period == 0 else None)], config, sink)
            started = time.perf_counter()
            thread = _file_replayer(lines, period, folder, sent)
        sink.done.wait(timeout=max(120.0, len(lines) * max(period, 0.2) * 20))
        thread.join()
        handle.stop()
    memory = rss_mb()
    seconds = time.perf_counter() - started
    models = {m.time: list(m.atoms) for m in sink.outputs}
    got = answers(sent, sink.seen, period)
    return {"engine": engine, "input": name, "period_s": period, "time_points": len(lines), **got,
            "accepted_pct": round(100.0 * got["accepted"] / len(lines), 1) if period else None,
            "seconds": round(seconds, 3), "tps": round(got["answered"] / seconds, 3) if seconds else None,
            "memory_mb": round(memory, 1), "rejected": len(sink.rejected),
            "digest": models_digest([models[t] for t in sorted(models)])}


COLUMNS = ["input", "engine", "period_s", "accepted_pct", "latency_p50_s", "latency_p95_s", "latency_max_s", "tps",
           "backlog_max", "lost", "memory_mb", "same_models_as_local"]


def main(argv=None) -> int:
    parser = arguments(
        __doc__, inputs=(DEFAULT_INPUTS, "comma-separated: " + ", ".join(ICLP_INPUTS) + " or all"),
        engines=("local,spark2", ", ".join(ENGINES)),
        periods=("1,0", "seconds between time points (0: full speed; Nx: N times the rate the same engine "
                        "sustained at full speed on the same input earlier in this run, e.g. 0,2x: overload)"),
        partitions=2, out="bench_rules_paced.json",
        warmup=(WARMUP, "time points a Spark engine processes first, one per micro-batch, in a query of its own"),
        feed=("socket", "how Spark gets the log: a TCP socket, as the local engine, or (files) a new file per time "
                        "point in a watched directory"),
        time_points=(0, "replay only each log's first N time points (0: the whole log)"))
    args = parser.parse_args(argv)
    names = iclp_names(args.inputs, parser)
    rows = []
    jobs = [(n, e, p) for n in names for p in splits(args.periods) for e in splits(args.engines)]
    for i, (name, engine, period) in enumerate(jobs, start=1):
        if period.endswith("x"):        # a multiple of the sustained rate measured in this run
            full = next((r for r in rows if r["input"] == name and r["engine"] == engine and r["period_s"] == 0), None)
            if full is None or not full["tps"]:
                parser.error(f"{period}: measure period 0 first for {name} on {engine}")
            period = round(1.0 / (float(period[:-1]) * full["tps"]), 4)
        log(f"[{i}/{len(jobs)}] {name} {engine} period {period}s")
        rows.append(in_own_process(run_one, engine=engine, name=name, period=float(period),
                                   partitions=args.partitions, warmup=args.warmup, feed=args.feed,
                                   time_points=args.time_points))
    for row in rows:
        base = next((r for r in rows if r["input"] == row["input"] and r["engine"] == "local"), None)
        row["same_models_as_local"] = base is None or row["digest"] == base["digest"]
    print(text_table(COLUMNS, [[r[c] for c in COLUMNS] for r in rows]))
    write_rows(args.out, {"args": vars(args), "rows": rows}, rows, COLUMNS,
               {".png": _plot, "_periods.png": _plot_periods})
    return 0


def _plot(rows: list[dict], path: Path) -> None:
    """Latency per time point, one panel per input at the first paced period (the paper's Figures 3-4)."""
    paced = [r for r in rows if r["period_s"]]
    names = list(dict.fromkeys(r["input"] for r in paced))
    if len(names) > 8:          # many inputs: one box of latencies per input and engine, the period as a line
        with chart(path, size=(max(8.0, 0.3 * len(paced)), 4)) as (_fig, axes):
            ax = axes[0][0]
            ax.boxplot([r["latencies"] for r in paced], showfliers=True)
            ax.set_xticks(range(1, len(paced) + 1), [f"{r['input']} {r['engine']}" for r in paced], rotation=90,
                          fontsize=7)
            ax.axhline(max(r["period_s"] for r in paced), color="grey", linewidth=0.8, linestyle="--")
            ax.set_ylabel("latency per time point (s)")
    elif names:
        with chart(path, 1, len(names), size=(4 * len(names), 3.2)) as (_fig, axes):
            for ax, name in zip(axes[0], names):
                for r in (r for r in paced if r["input"] == name):
                    ax.plot(range(len(r["latencies"])), r["latencies"], label=f"{r['engine']} ({r['period_s']:g}s)")
                    ax.axhline(r["period_s"], color="grey", linewidth=0.6, linestyle="--")
                ax.set(title=name, xlabel="time point", ylabel="latency (s)")
                ax.legend(fontsize=7)


def _plot_periods(rows: list[dict], path: Path) -> None:
    """Total time and latency against the period, a line per input and engine (the paper's Figure 4, a.1 and a.2);
    drawn when some input was fed at two periods or more."""
    lines = {}
    for r in rows:
        if r["period_s"]:
            lines.setdefault((r["input"], r["engine"]), []).append(r)
    lines = {k: sorted(v, key=lambda r: r["period_s"]) for k, v in lines.items() if len(v) > 1}
    if not lines:
        return
    with chart(path, 1, 2, size=(11, 4.2)) as (_fig, ((total, latency),)):
        colours = {name: f"C{i % 10}" for i, name in enumerate(dict.fromkeys(name for name, _ in sorted(lines)))}
        for (name, engine), series in sorted(lines.items()):
            periods = [r["period_s"] for r in series]
            style = dict(color=colours[name], linestyle="-" if engine == "local" else "--")
            total.plot(periods, [r["seconds"] for r in series], marker="o", label=f"{name} {engine}", **style)
            latency.plot(periods, [r["latency_p50_s"] for r in series], marker="o", label=f"{name} {engine} p50",
                         **style)
            latency.plot(periods, [r["latency_p95_s"] for r in series], marker="x", alpha=0.45, **style)
        total.set(xlabel="period (s)", ylabel="total time (s)", title="(a.1) total time")
        latency.set(xlabel="period (s)", ylabel="latency (s)", yscale="log", title="(a.2) latency: p50 (o), p95 (x)")
        total.legend(fontsize=6)
        latency.legend(fontsize=6)


if __name__ == "__main__":
    command(main)
