"""The two real UBA universities against our LUBM TBox: consistent under every plan (unbounded window), and
replayed as an RDF stream with planted disjoint types, which every plan and runner must report."""
from __future__ import annotations

import os
import shutil

from experiments import common
from experiments.common import (
    ExperimentError, Row, analysis_for, check_same, describe_plan, md_table, measure, progress)
from experiments.streams import uba_replay, uba_triples
from srtopo.consistency.compile import compile_ntm, ltm_n
from srtopo.io.sources import TntFiles
from srtopo.io.tnt import tuples_of_statement, write_tnt
from srtopo.runners import RunConfig, get_runner
from srtopo.testing import tuples

NAME = "uba"
DEPENDS: tuple[str, ...] = ()


def _tuples(lines):
    out = []
    for t, s, p, o in lines:
        out.extend(tuples_of_statement(t, f"<{s}>", p, o if o.startswith('"') else f"<{o}>"))
    return out


def run(ctx) -> list[Row]:
    args = ctx.args
    a = analysis_for("lubm")
    triples = uba_triples(common.UBA)
    plans = [compile_ntm(a)] + [ltm_n(a, n) for n in range(len(a.groups) + 1)]
    # 1. the real data alone, unbounded window: consistent under every plan (checked by the reference runner)
    base = _tuples((0, s, p, o) for s, p, o in triples)
    rows = []
    for topo in progress(plans, desc="UBA data, unbounded window"):
        result = get_runner("local").run(topo, [tuples(base)], RunConfig(window=None))
        if result.outputs:
            raise ExperimentError(f"the real UBA data is inconsistent under {topo.label}: {result.outputs[0]}")
        rows.append(Row(NAME, tbox="lubm", topology=topo.label, engine="local", tuples=len(base), reports=0,
                        detail={"check": "uba-consistent", "triples": len(triples)}))
    # 2. replayed as an RDF stream with planted violations, on every runner
    replay = uba_replay(a, triples, per_time=args.uba_per_time, violation=args.uba_violation, seed=args.seed)
    directory = os.path.join(ctx.work, "uba-replay")
    shutil.rmtree(directory, ignore_errors=True)
    write_tnt(directory, replay.lines, time_points_per_file=max(1, replay.time_points // 4))
    n_tuples = len(_tuples(replay.lines))
    reference = None
    for engine in ctx.engines():
        chosen = plans if engine == ctx.engines()[0] else [plans[0], plans[3]]   # the first runner: every plan
        for topo in progress(chosen, desc=f"UBA replay, {engine}"):
            row, run = measure(engine, ctx.options(engine), topo, [TntFiles(directory, files_per_batch=1)],
                               args.window, tuples=n_tuples)
            keys = run.keys
            if reference is None:
                reference = keys
                if replay.planted - keys:
                    raise ExperimentError(f"UBA replay: planted violations not reported: "
                                          f"{sorted(replay.planted - keys)[:3]}")
                if {s for s, _ in keys} - {s for s, _ in replay.planted}:
                    raise ExperimentError("UBA replay: a subject without a planted violation was reported")
            check_same("UBA replay", reference, keys, f"{engine} {topo.label}")
            row.experiment, row.tbox, row.tasks = NAME, "lubm", sum(s.parallelism for s in topo.stages)
            row.detail.update(check="uba-replay", planted=len(replay.planted), subjects=replay.subjects,
                              time_points=replay.time_points, **describe_plan(topo))
            rows.append(row)
    return rows


def table(rows: list[Row], ctx=None) -> str:
    base = next(r for r in rows if r["check"] == "uba-consistent")
    replay = [r for r in rows if r["check"] == "uba-replay"]
    first = replay[0]
    return (f"# UBA universities (University0_0 + University0_1)\n\n"
            f"{base['triples']:,} triples, {base.tuples:,} tuples; with every plan and an unbounded window the real "
            f"data gives **0 reports**.\n\nReplay: {first['subjects']:,} subjects ({first['time_points']} time "
            f"points), {first['planted']} planted disjoint rdf:type assertions: every plan and runner reports "
            f"{first.reports} (subject, time) pairs (every planted one, plus later role assertions about the same "
            f"subjects that meet the planted type in the window).\n\n"
            + md_table(["engine", "topology", "tuples", "reports", "throughput (tuples/s)", "cached tuples"],
                       [[r.engine, r.topology, r.tuples, r.reports, r.throughput_tps, r.cached_tuples]
                        for r in replay]) + "\n")


plot = None
