"""The baseline a user might otherwise write: re-check every window with rdflib (SPARQL over the window's graph
plus the TBox), on a prefix of the fig5 stream, next to the reference runner on the same prefix and the best
Spark figure of fig5."""
from __future__ import annotations

from experiments import common
from experiments.common import Row, analysis_for, check_same, md_table, measure, progress
from experiments.rdflib_baseline import run_rdflib
from srtopo.consistency.compile import compile_ntm
from srtopo.testing import tuples

NAME = "baseline"
DEPENDS = ("fig5",)


def run(ctx) -> list[Row]:
    args = ctx.args
    rows = []
    for tbox in args.tboxes:
        stream = ctx.stream(tbox)
        prefix = [t for t in stream.tuples if t.time < args.baseline_time_points]
        result = run_rdflib(common.TBOXES[tbox], prefix, args.window, progress=progress,
                            budget_s=args.baseline_seconds)
        limit = result["time_points_done"]
        prefix = [t for t in prefix if t.time < limit]
        planted = {k for k in stream.planted if k[1] < limit}
        check_same(f"baseline {tbox}", planted, result["report_keys"], "rdflib SPARQL per window")
        topo = compile_ntm(analysis_for(tbox))
        local, run = measure("local", ctx.options("local"), topo, [tuples(prefix)], args.window)
        check_same(f"baseline {tbox}", planted, run.keys, "local ntm (prefix)")
        rows.append(Row(NAME, tbox=tbox, topology="rdflib-sparql-per-window", engine="rdflib", tasks=1,
                        tuples=result["tuples"], reports=len(planted), throughput_tps=result["throughput_tps"],
                        latency_p50_s=result["latency_p50_s"], latency_p95_s=result["latency_p95_s"],
                        cached_tuples=result["cached_tuples"], detail={"time_points": limit}))
        local.experiment, local.tbox, local.tasks = NAME, tbox, 1
        local.detail["time_points"] = limit
        rows.append(local)
    return rows


def table(rows: list[Row], ctx=None) -> str:
    from experiments.figures.fig5 import figure
    fig5 = [] if ctx is None else [r for r in ctx.rows.get("fig5", []) if r.engine == "spark"]
    out = []
    for tbox in dict.fromkeys(r.tbox for r in rows):
        rd = next(r for r in rows if r.tbox == tbox and r.engine == "rdflib")
        lo = next(r for r in rows if r.tbox == tbox and r.engine != "rdflib")
        sp = max((r for r in fig5 if r.tbox == tbox), key=figure, default=None)
        out.append([tbox, rd.tuples, rd.throughput_tps, lo.throughput_tps, f"{lo.throughput_tps / rd.throughput_tps:.0f}x",
                    f"{figure(sp):,.0f} ({sp.topology}, {sp.tasks} tasks)" if sp else "-",
                    f"{figure(sp) / rd.throughput_tps:.0f}x" if sp else "-"])
    return ("# Baseline: re-check every window with rdflib (SPARQL over the window's graph plus the TBox)\n\n"
            "A prefix of the fig5 stream (at most --baseline-time-points time points or --baseline-seconds of "
            "rdflib per TBox). The rdflib check gives exactly the planted reports (checked).\n\n"
            + md_table(["TBox", "tuples", "rdflib tuples/s", "local NTM tuples/s (same prefix)", "local / rdflib",
                        "best Spark (fig5, full stream)", "Spark / rdflib"], out) + "\n")


plot = None
