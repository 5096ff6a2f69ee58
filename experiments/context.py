"""What one run of the experiments shares: its parameters, the generated streams (written once as ``.tnt``
files that every runner reads), the runners to measure and their options, and the rows of the experiments
that already ran (the dependencies of the next ones)."""
from __future__ import annotations

import argparse
import os
import shutil
from dataclasses import dataclass, field

from srtopo.experiments.common import Row, Stream, analysis_for, check_same, log, measure, read_rows
from srtopo.experiments.streams import class_streams
from srtopo.topology.runners import LocalOptions, SparkOptions
from srtopo.topology.sources import TntFiles
from srtopo.topology.tnt import write_tnt

DEFAULTS = {   # sizes per TBox: one stream per class, `rate` tuples per class per time point
    "lubm": {"rate": 4, "time_points": 600, "chunk": 150},      # 43 streams: 103,200 tuples, 4 files of 25,800
    "npd": {"rate": 1, "time_points": 300, "chunk": 75},         # 342 streams: 102,600 tuples, 4 files of 25,650
}


@dataclass
class Context:
    args: argparse.Namespace
    work: str
    rows: dict[str, list[Row]] = field(default_factory=dict)
    _streams: dict = field(default_factory=dict)

    @property
    def out(self) -> str:
        return self.args.out

    def engines(self) -> list[str]:
        return ["local", "spark"] if self.args.engine == "both" else [self.args.engine]

    def options(self, engine: str):
        """Each runner's options for this run (the runners themselves are chosen by name)."""
        return {"local": LocalOptions(),
                "spark": SparkOptions(master=self.args.master, physical_plan=self.args.spark_plan,
                                      shuffle_partitions=2)}[engine]

    def stream(self, tbox: str) -> Stream:
        """The class streams of a TBox (``streams.class_streams``), written as .tnt files, one per micro-batch."""
        args = self.args
        key = (tbox, args.scale, args.violation, args.seed)
        if key not in self._streams:
            d = DEFAULTS[tbox]
            tp = max(2, int(d["time_points"] * args.scale))
            gen = class_streams(analysis_for(tbox), time_points=tp, rate=d["rate"], violation=args.violation,
                                seed=args.seed)
            directory = os.path.join(self.work, f"stream-{tbox}-{tp}-{args.seed}")
            shutil.rmtree(directory, ignore_errors=True)
            write_tnt(directory, gen.tuples, time_points_per_file=d["chunk"])
            self._streams[key] = Stream(
                tbox, gen.tuples, gen.planted, directory,
                {**gen.params, "streams": gen.streams, "conflicting_streams": gen.conflicting_streams,
                 "tuples": len(gen.tuples), "violating_tuples": len(gen.planted),
                 "violation_fraction_measured": round(gen.violation_fraction, 5), "window": args.window,
                 "chunk_time_points": d["chunk"]})
            log(f"[{tbox}] stream: {len(gen.tuples):,} tuples, {gen.streams} class streams, "
                f"{len(gen.planted):,} violating ({gen.violation_fraction:.2%})")
        return self._streams[key]

    def measure(self, engine: str, topology, stream: Stream, label: str) -> Row:
        """Measure a topology on a stream's files; its reports must be exactly the planted violations."""
        row, result = measure(engine, self.options(engine), topology, [TntFiles(stream.directory, files_per_batch=1)],
                              self.args.window, tuples=len(stream.tuples))
        check_same(label, stream.planted, result.keys, f"{engine} {topology.label}")
        row.tbox = stream.tbox
        return row

    def dependency(self, name: str) -> list[Row]:
        """The rows of experiment ``name``: from this run, else from its result file."""
        if name not in self.rows:
            rows = read_rows(name, self.out)
            if rows is None:
                raise KeyError(name)
            self.rows[name] = rows
        return self.rows[name]
