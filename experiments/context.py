"""What one run of the experiments shares: its parameters, the generated streams (written once as ``.tnt``
files that every runner reads), the runners to measure and their options, and the rows of the experiments
that already ran (the dependencies of the next ones)."""
from __future__ import annotations

import argparse
import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field

from experiments.common import ExperimentError, Row, Stream, analysis_for, check_same, log, measure, read_rows
from srtopo.consistency.generate import class_streams, named_classes
from srtopo.io.sources import TntFiles
from srtopo.io.tnt import write_tnt
from srtopo.runners import LocalOptions, SparkOptions

DEFAULTS = {   # sizes per TBox: one stream per class, `rate` tuples per class per time point
    "lubm": {"rate": 4, "time_points": 600, "chunk": 150},      # 43 streams: 103,200 tuples, 4 files of 25,800
    "npd": {"rate": 1, "time_points": 300, "chunk": 75},         # 342 streams: 102,600 tuples, 4 files of 25,650
}
#: engines of the study -> (registered runner, what its stream is: "default", "spark" (long) or "operators")
ENGINES = {"local": ("local", "default"), "operators": ("local", "operators"), "spark": ("spark", "spark"),
           "standalone": ("spark", "spark")}
#: the engines the experiments other than fig5 run on (fig5 runs on every engine asked for)
MAIN_ENGINES = ("local", "spark")


@dataclass
class Context:
    args: argparse.Namespace
    work: str
    rows: dict[str, list[Row]] = field(default_factory=dict)
    _streams: dict = field(default_factory=dict)
    cluster_url: str | None = None
    calibration: str | None = None      # the cost model's calibration file of this run, once made
    deadline: float | None = None       # time.monotonic() by which fig5's repeated Spark rounds must have ended

    @property
    def out(self) -> str:
        return self.args.out

    def engines(self, every: bool = False) -> list[str]:
        """The engines asked for (``every``: all of them; else those the experiments other than fig5 run on)."""
        return [e for e in self.args.engines if every or e in MAIN_ENGINES]

    def options(self, engine: str):
        """Each engine's runner options for this run (the runners themselves are chosen by name)."""
        if engine in ("local", "operators"):
            return LocalOptions(physical_plan="operators" if engine == "operators" else "indexed")
        master = self.cluster_url if engine == "standalone" else self.args.master
        if engine == "standalone" and master is None:
            raise ExperimentError("the standalone engine runs inside Context.standalone()")
        return SparkOptions(master=master, physical_plan=self.args.spark_plan, shuffle_partitions=2)

    def cost_target(self, engine: str):
        """The cost model's view of an engine of the study (``consistency.cost.Target``)."""
        from srtopo.consistency.cost import Target, cores_of_master
        if engine in ("local", "operators"):
            return Target("local", "operators" if engine == "operators" else "indexed")
        if engine == "standalone":      # two one-core workers
            cores, known = 2, True
        else:
            cores, known = cores_of_master(self.args.master), (self.args.master or "local").startswith("local")
        return Target("spark", self.args.spark_plan, cores, batch_tuples=self.args.spark_batch_tuples,
                      partitions=2, cores_known=known)

    @contextmanager
    def standalone(self):
        """A standalone cluster of two one-core workers on this machine, with the session of the run on it; the
        session is stopped after, so the next Spark run starts its own."""
        from srtopo.runners.spark.session import stop_active_session
        from srtopo.runners.spark.standalone import standalone_cluster
        stop_active_session()
        with standalone_cluster(workers=2, cores=1, memory="2g", workdir=os.path.join(self.work, "cluster")) \
                as (url, _):
            self.cluster_url = url
            try:
                yield url
            finally:
                stop_active_session()
                self.cluster_url = None

    def stream(self, tbox: str, kind: str = "default") -> Stream:
        """The class streams of a TBox (``srtopo.consistency.generate.class_streams``), written as .tnt files. ``default``: ~100k
        tuples (x --scale) in 4 files, one per micro-batch; ``spark``: --spark-tuples in files of ~50k tuples,
        --spark-batch-tuples per micro-batch; ``operators``: --operators-tuples (the paper's operators are slow on
        big closures), one batch."""
        args = self.args
        key = (tbox, kind, args.scale, args.violation, args.seed)
        if key not in self._streams:
            d = DEFAULTS[tbox]
            per_point = d["rate"] * len(named_classes(analysis_for(tbox)))
            per_batch = 1
            if kind == "spark":   # whole micro-batches of whole files, at least --spark-tuples in all
                per_batch = max(1, round(args.spark_batch_tuples / args.spark_file_tuples))
                files = -(-args.spark_tuples // args.spark_file_tuples)
                files = -(-files // per_batch) * per_batch
                chunk = max(1, -(-args.spark_tuples // (files * per_point)))
                tp = max(2, files * chunk)
            elif kind == "operators":
                tp = max(2, -(-args.operators_tuples[tbox] // per_point))
                chunk = tp
            else:
                tp = max(2, int(d["time_points"] * args.scale))
                chunk = d["chunk"]
            gen = class_streams(analysis_for(tbox), time_points=tp, rate=d["rate"], violation=args.violation,
                                seed=args.seed)
            directory = os.path.join(self.work, f"stream-{tbox}-{kind}-{tp}-{args.seed}")
            shutil.rmtree(directory, ignore_errors=True)
            files = write_tnt(directory, gen.tuples, time_points_per_file=chunk)
            self._streams[key] = Stream(
                tbox, gen.tuples if kind != "spark" else [], gen.planted, directory,
                {**gen.params, "streams": gen.streams, "conflicting_streams": gen.conflicting_streams,
                 "tuples": len(gen.tuples), "violating_tuples": len(gen.planted),
                 "violation_fraction_measured": round(gen.violation_fraction, 5), "window": args.window,
                 "chunk_time_points": chunk, "files": len(files), "files_per_batch": per_batch,
                 "batch_tuples": round(len(gen.tuples) / len(files) * per_batch), "kind": kind})
            log(f"[{tbox}] {kind} stream: {len(gen.tuples):,} tuples, {gen.streams} class streams, "
                f"{len(gen.planted):,} violating ({gen.violation_fraction:.2%}), {len(files)} files, "
                f"{per_batch} per micro-batch")
        return self._streams[key]

    def stream_for(self, tbox: str, engine: str) -> Stream:
        return self.stream(tbox, ENGINES[engine][1])

    def measure(self, engine: str, topology, stream: Stream, label: str) -> Row:
        """Measure a topology on a stream's files; its reports must be exactly the planted violations."""
        row, result = measure(ENGINES[engine][0], self.options(engine), topology,
                              [TntFiles(stream.directory, files_per_batch=stream.params["files_per_batch"])],
                              self.args.window, tuples=stream.params["tuples"])
        check_same(label, stream.planted, result.keys, f"{engine} {topology.label}")
        row.tbox, row.engine = stream.tbox, engine
        row.detail.update(stream_tuples=stream.params["tuples"], batch_tuples=stream.params["batch_tuples"])
        return row

    def dependency(self, name: str) -> list[Row]:
        """The rows of experiment ``name``: from this run, else from its result file."""
        if name not in self.rows:
            rows = read_rows(name, self.out)
            if rows is None:
                raise KeyError(name)
            self.rows[name] = rows
        return self.rows[name]
