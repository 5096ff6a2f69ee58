"""The even balancer's predicted best two-stage split against the best one measured in fig5."""
from __future__ import annotations

from srtopo.experiments.common import Row, analysis_for, md_table
from srtopo.experiments.figures.fig5 import figure
from srtopo.experiments.streams import named_classes
from srtopo.topology.balance import even

NAME = "balancer"
DEPENDS = ("fig5",)


def run(ctx) -> list[Row]:
    fig5 = ctx.dependency("fig5")
    rows = []
    for tbox in ctx.args.tboxes:
        a = analysis_for(tbox)
        rates = {c: 1.0 for c in named_classes(a)}
        for tasks in ctx.args.tasks:
            chosen = even(a, tasks=max(1, tasks // 2), stages=2, rates=rates)
            predicted = f"ltm-{chosen.split[0]}"
            for engine in sorted({r.engine for r in fig5}):
                cand = [r for r in fig5 if r.tbox == tbox and r.tasks == tasks and r.engine == engine]
                if not cand:
                    continue
                best = max((r for r in cand if r.topology.startswith("ltm")), key=figure)
                pred = next((r for r in cand if r.topology == predicted), None)
                ntm = next(r for r in cand if r.topology == "ntm")
                rows.append(Row(NAME, tbox=tbox, topology=predicted, engine=engine, tasks=tasks, detail={
                    "predicted_split": list(chosen.split), "predicted_costs": list(chosen.costs),
                    "predicted_tps": figure(pred) if pred else None, "measured_best": best.topology,
                    "measured_best_tps": figure(best), "ntm_tps": figure(ntm),
                    "predicted_over_best": figure(pred) / figure(best) if pred and figure(best) else None}))
    return rows


def table(rows: list[Row], ctx=None) -> str:
    return ("# The even balancer's predicted best two-stage split vs the measured best\n\n"
            "`even` (topology/balance.py) scores every contiguous two-stage split with its cost model (rate x "
            "(conjunction ops touched + forwarding), rate 1 per class stream) and picks the smallest maximum stage "
            "cost. Measured best = the fastest LTM-n in fig5 for the same budget.\n\n"
            + md_table(["TBox", "tasks", "engine", "predicted", "stage costs", "measured best", "predicted tuples/s",
                        "best tuples/s", "predicted / best"],
                       [[r.tbox, r.tasks, r.engine, r.topology, " / ".join(f"{c:.0f}" for c in r["predicted_costs"]),
                         r["measured_best"], r["predicted_tps"], r["measured_best_tps"],
                         f"{r['predicted_over_best']:.2f}" if r["predicted_over_best"] else "-"] for r in rows]) + "\n")


plot = None
