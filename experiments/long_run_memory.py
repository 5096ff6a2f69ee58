"""Memory of a long Spark run: driver, JVM and Python workers sampled while a stream ten times the benchmarks'
length flows through; the window bounds what is kept, so memory must level off. experiments/README.md, "What
each benchmark measures", says how."""
from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from experiments.campaign import wait_until
from experiments.common import EXAMPLES, arguments, chart, command_of, descendants, splits, write_json
from experiments.kill_campaign import PROGRAM
from srtopo.concepts import RDF_TYPE
from srtopo.consistency.choose import topology_from_tbox
from srtopo.consistency.owl import load_tbox
from srtopo.environment import java_executable
from srtopo.io.sinks import JsonLinesSink
from srtopo.io.sources import AtomLog, TntFiles
from srtopo.io.tnt import format_tnt
from srtopo.measure import rss_mb
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import RunConfig, SparkOptions, SparkRunner


def jmap_path() -> str | None:
    java = java_executable()
    jmap = os.path.join(os.path.dirname(os.path.realpath(java)), "jmap") if java else None
    return jmap if jmap and os.path.exists(jmap) else None


def _histogram(pid: int) -> list[list[str]]:
    """The JVM ``pid``'s objects that are still alive, per class (``jmap -histo:live``, a full collection first)."""
    done = subprocess.run([jmap_path(), "-histo:live", str(pid)], capture_output=True, text=True, timeout=120)
    return [line.split() for line in done.stdout.splitlines()]


def live_instances(pid: int, class_name: str) -> int:
    """How many objects of a class the JVM ``pid`` keeps alive."""
    rows = [row for row in _histogram(pid) if row[-1:] == [class_name]]
    return int(rows[0][1]) if rows else 0


def _live_heap_mb(pid: int, spark, runtime) -> float:
    """The JVM's live heap: the bytes of every object still reachable, from ``jmap -histo:live`` (which runs a
    full collection first), or after ``System.gc()`` where there is no jmap (a hint the collector may answer
    with a concurrent cycle: noisier). A collection first, and a pause: Spark's cleaner drops its records of
    accumulators and broadcasts only after a collection found them unreachable."""
    spark.sparkContext._jvm.java.lang.System.gc()
    time.sleep(0.5)
    total = [row for row in _histogram(pid) if row[:1] == ["Total"]] if jmap_path() else []
    if total:
        return round(int(total[-1][2]) / 2 ** 20, 1)
    return round((runtime.totalMemory() - runtime.freeMemory()) / 2 ** 20, 1)


def _size(path: Path) -> int:
    """Bytes of the files under ``path`` (files that Spark removes while they are counted are skipped)."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _input_files(kind: str, batches: int, seed: int):
    """(name, text) of the stream's files, one per micro-batch."""
    rng = random.Random(seed)
    if kind == "consistency":
        classes = sorted(load_tbox(str(EXAMPLES / "tex.ttl")).concepts)
    for b in range(batches):
        if kind == "consistency":
            lines = [format_tnt(b * 5 + i // 1000, f"http://ex.org/data/s{rng.randrange(300)}", RDF_TYPE,
                                rng.choice(classes)) for i in range(5000)]
        else:
            atoms = [f"temp(s{s},{rng.randint(15, 32)})" for s in range(12) if rng.random() < 0.7]
            lines = [f"{1000 + b} " + "; ".join(atoms)]
        yield f"part-{b:06d}.txt", "\n".join(lines) + "\n"


def run(kind: str, batches: int, seed: int = 1, every: int = 5) -> dict:
    """Feed the stream ``every`` files at a time; once the query has read them and is idle, sample (the live
    heap is then what the run keeps, not what a running task holds for a moment)."""
    from srtopo.runners.spark.session import get_session
    spark = get_session(master="local[2]", shuffle_partitions=2)
    jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    runtime = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
    with tempfile.TemporaryDirectory(prefix=f"srtopo-long-{kind}-") as tmp:
        folder = Path(tmp)
        (folder / "in").mkdir()
        (folder / "staging").mkdir()
        if kind == "consistency":
            topology = topology_from_tbox(str(EXAMPLES / "tex.ttl"))
            source = TntFiles(str(folder / "in"), files_per_batch=1)
            config = RunConfig(window=10, lateness=0, checkpoint=str(folder / "ck"), out=str(folder / "out"),
                               options=SparkOptions(once=False))
        else:
            topology, source = compile_program(parse_program(PROGRAM)), AtomLog(str(folder / "in"), "log", 1)
            config = RunConfig(lateness=0, checkpoint=str(folder / "ck"), out=str(folder / "out"),
                               options=SparkOptions(partitions=2, once=False))
        samples: list[dict] = []
        handle = SparkRunner(spark).start(topology, [source], config, JsonLinesSink(None, echo=None))
        started = time.perf_counter()
        files = _input_files(kind, batches, seed)
        written = 0
        try:
            while written < batches:
                for name, text in itertools.islice(files, every):
                    staged = folder / "staging" / name
                    staged.write_text(text, encoding="utf-8")
                    os.replace(staged, folder / "in" / name)   # whole files only: the source never sees a partial one
                    written += 1
                wait_until(lambda: len(handle.batch_metrics) >= written or handle.query.exception() is not None, 600)
                if len(handle.batch_metrics) < written:
                    raise RuntimeError(f"the query stopped or stalled at batch {len(handle.batch_metrics)}: "
                                       f"{handle.query.exception()}")
                workers = [p for p in descendants(jvm) if "python" in command_of(p)]
                samples.append({"t": time.perf_counter() - started, "batches": len(handle.batch_metrics),
                                "driver_mb": rss_mb(), "jvm_mb": rss_mb(jvm),
                                "workers_mb": round(sum(rss_mb(p) or 0 for p in workers), 1),
                                "state_mb": round(_size(folder / "ck" / "store") / 2 ** 20, 2),
                                "heap_live_mb": _live_heap_mb(jvm, spark, runtime)})
        finally:
            handle.stop()
        seconds = time.perf_counter() - started
    return summarise({"kind": kind, "batches": batches, "seconds": round(seconds, 1), "samples": samples})


KEYS = ("driver_mb", "jvm_mb", "heap_live_mb", "workers_mb", "state_mb")


def summarise(result: dict) -> dict:
    """Per measure, the median of its samples over the batches from 10% to 20% of the run ("10%") and over the
    last 10% ("100%"), and the growth from one to the other (medians: one sample of the live heap can catch a
    collection that has not finished). The live heap is a sawtooth (Spark drops what it remembers of finished
    work in bulk), so two points of it may sit on different teeth: its peak over 50-100% of the run against
    its peak over 10-50% (``peak_growth``) says whether the sawtooth climbs. Peaks of the median of three
    neighbouring samples: a reading whose full collection the JVM skipped ("GC locker is held; pre-dump GC was
    skipped") is one sample of dead objects, not a peak."""
    batches, samples = result["batches"], result["samples"]
    raw = [(s["batches"], s["heap_live_mb"]) for s in samples if s.get("heap_live_mb") is not None]
    near = [max(0, min(i - 1, len(raw) - 3)) for i in range(len(raw))]     # three samples, at the ends too
    heap = [(b, median(v for _b, v in raw[lo:lo + 3])) for (b, _v), lo in zip(raw, near)]
    first = [v for b, v in heap if 0.1 * batches <= b < 0.5 * batches]
    second = [v for b, v in heap if b >= 0.5 * batches]
    peaks = {"10-50%": max(first), "50-100%": max(second)} if first and second else {}
    spans = {"10%": (0.1 * batches, 0.2 * batches), "100%": (0.9 * batches, batches + 1)}
    at = {}
    for name, (lo, hi) in spans.items():
        inside = [s for s in samples if lo <= s["batches"] < hi]
        at[name] = {k: median(v) for k in KEYS if (v := [s[k] for s in inside if s.get(k) is not None])}
    growth = {k: round(at["100%"][k] / at["10%"][k] - 1, 3) if at["10%"].get(k) and k in at["100%"] else None
              for k in KEYS}
    peak_growth = round(peaks["50-100%"] / peaks["10-50%"] - 1, 3) if peaks else None
    return result | {"at": at, "growth": growth, "heap_peaks": peaks, "heap_peak_growth": peak_growth}


def main(argv=None) -> int:
    args = arguments(__doc__, batches=500, kinds="consistency,rules", out="long_run_memory.json").parse_args(argv)
    results = [run(kind, args.batches) for kind in splits(args.kinds)]
    for r in results:
        peak = r["heap_peak_growth"]
        print(f"{r['kind']}: {r['batches']} batches in {r['seconds']} s; growth from 10% to 100%: "
              + ", ".join(f"{k} {v:+.1%}" for k, v in r["growth"].items() if v is not None)
              + "; live heap peak 10-50% -> 50-100%: " + ("no sample in one of them" if peak is None
                                                           else f"{peak:+.1%}"),
              file=sys.stderr)
    write_json(args.out, {"results": results})
    _plot(results, Path(args.out).with_suffix(".png"))
    return 0


def _plot(results: list[dict], path: Path) -> None:
    with chart(path, 1, len(results), size=(5 * len(results), 3.4), dpi=110) as (_fig, axes):
        for ax, r in zip(axes[0], results):
            xs = [s["batches"] for s in r["samples"]]
            for key in ("driver_mb", "jvm_mb", "workers_mb", "state_mb"):
                ax.plot(xs, [s[key] for s in r["samples"]], label=key.replace("_mb", ""))
            live = [s for s in r["samples"] if "heap_live_mb" in s]
            ax.plot([s["batches"] for s in live], [s["heap_live_mb"] for s in live], label="JVM heap live", marker=".")
            ax.set(title=f"{r['kind']} on Spark local[2]", xlabel="micro-batches done", ylabel="MB")
            ax.legend(fontsize=7)


if __name__ == "__main__":
    raise SystemExit(main())
