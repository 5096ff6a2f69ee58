"""The default balancer (``cost``, the runner-aware cost model) against fig5's measurements: each plan's predicted
and measured throughput, and the plan the default balancer picks; experiments/README.md, "The default balancer
(cost model) against the measured plans", says how."""
from __future__ import annotations

from experiments.common import Row, analysis_for, fig5_plans, md_table
from experiments.figures.fig5 import figure
from experiments.picks import calibration, default_picks, plan_name
from srtopo.consistency.balance import even
from srtopo.consistency.compile import split_label
from srtopo.consistency.cost import coefficients_for, predict_tps
from srtopo.consistency.generate import uniform_rates

NAME = "cost_model"
DEPENDS = ("fig5",)
KEYS = ("tbox", "engine", "budget", "plan", "predicted_tuples_s", "measured_tuples_s", "picked")


def run(ctx) -> list[Row]:
    fig5 = ctx.dependency("fig5")
    path = calibration(ctx)
    rows = []
    for tbox in ctx.args.tboxes:
        a = analysis_for(tbox)
        rates = uniform_rates(a)
        for engine in dict.fromkeys(r.engine for r in fig5 if r.tbox == tbox):
            target = ctx.cost_target(engine)
            coefficients = coefficients_for(target, path)
            picks = default_picks(ctx, tbox, engine)
            for budget in ctx.args.tasks:
                measured = {r.topology: figure(r) for r in fig5 if r.tbox == tbox and r.engine == engine
                            and r.tasks == budget}
                if not measured:
                    continue
                picked = plan_name(picks[budget], budget)
                even_pick = split_label(even(a, tasks=max(1, budget // 2), stages=2, rates=rates).split)
                plans = fig5_plans(a, budget)
                if picked not in {t.label for t in plans}:      # the pick gives no stage more tasks than cores
                    plans.append(picks[budget])
                for topo in plans:
                    name = plan_name(topo, budget)
                    if name not in measured:
                        continue
                    rows.append(Row(NAME, tbox=tbox, topology=name, engine=engine, tasks=budget, detail={
                        "budget": budget, "plan": name,
                        "predicted_tuples_s": round(predict_tps(topo, target, coefficients, rates), 1),
                        "measured_tuples_s": round(measured[name], 1), "picked": name == picked,
                        "even_pick": name == even_pick, "physical_plan": target.key,
                        "coefficients": coefficients.source}))
    return rows


def rows_json(rows: list[Row]) -> list[dict]:
    """The file's rows: the keys above first, then the physical plan, the even pick and the constants' source."""
    out = []
    for r in rows:
        d = {"tbox": r.tbox, "engine": r.engine, **{k: r[k] for k in KEYS[2:]}}
        d.update({k: r[k] for k in ("even_pick", "physical_plan", "coefficients")})
        out.append(d)
    return out


def summary(rows: list[Row]) -> list[dict]:
    """Per (tbox, engine, budget): the pick, the best measured plan among NTM and LTM-0 .. LTM-k sharing the budget
    evenly, and the pick's share of it."""
    out = []
    for key in dict.fromkeys((r.tbox, r.engine, r["budget"]) for r in rows):
        sub = [r for r in rows if (r.tbox, r.engine, r["budget"]) == key]
        best = max((r for r in sub if "@" not in r.topology), key=lambda r: r["measured_tuples_s"])
        pick = next(r for r in sub if r["picked"])
        ev = next((r for r in sub if r["even_pick"]), None)
        out.append({"tbox": key[0], "engine": key[1], "budget": key[2], "picked": pick.topology,
                    "best": best.topology, "pick_over_best": pick["measured_tuples_s"] / best["measured_tuples_s"],
                    "even": ev.topology if ev else None,
                    "even_over_best": ev["measured_tuples_s"] / best["measured_tuples_s"] if ev else None})
    return out


def table(rows: list[Row], ctx=None) -> str:
    lines = ["# The default balancer (cost model) against the measured plans\n",
             "Predicted: `consistency.cost.predict_tps` with the constants of a calibration run made before the "
             "predictions (`srtopo calibrate`); measured: fig5's figure (local engines: the pipeline model on "
             "measured stage times; Spark: steady tuples/s, on `local[2]` relative to the pick in the same turns of "
             "fig5's rounds). Picked: the default balancer's choice among NTM and "
             "the two-stage splits for the budget (on Spark no stage gets more tasks than the cores: `ntm@2` is NTM on "
             "2 tasks); best measured: among NTM and the splits sharing the budget evenly; even: the paper's cost "
             "unit (conjunction ops per stage).\n",
             md_table(["TBox", "engine", "budget", "picked", "best measured", "picked / best", "even picks",
                       "even / best"],
                      [[s["tbox"], s["engine"], s["budget"], s["picked"], s["best"], f"{s['pick_over_best']:.2f}",
                        s["even"], f"{s['even_over_best']:.2f}" if s["even_over_best"] else "-"]
                       for s in summary(rows)]), ""]
    for key in dict.fromkeys((r.tbox, r.engine) for r in rows):
        sub = [r for r in rows if (r.tbox, r.engine) == key]
        lines.append(f"## {key[0].upper()}, {key[1]} ({sub[0]['physical_plan']}; {sub[0]['coefficients']})\n")
        lines.append(md_table(["plan"] + [f"budget {b}: predicted / measured" for b in dict.fromkeys(r["budget"]
                                                                                                  for r in sub)],
                              [[p] + [_cell(next((r for r in sub if r.topology == p and r["budget"] == b), None))
                                      for b in dict.fromkeys(r["budget"] for r in sub)]
                               for p in dict.fromkeys(r.topology for r in sub)]))
        lines.append("")
    return "\n".join(lines)


def _cell(r: Row | None) -> str:
    if r is None:
        return "-"
    mark = " **picked**" if r["picked"] else ""
    return f"{r['predicted_tuples_s']:,.0f} / {r['measured_tuples_s']:,.0f}{mark}"


plot = None
