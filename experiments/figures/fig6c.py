"""Fig. 6c: LTM with 3, 4, 5 stages (one task each, split by the even balancer) vs NTM with 3, 4, 5 tasks."""
from __future__ import annotations

from experiments.common import Row, analysis_for, chart, describe_plan, md_table, model_tps, progress
from experiments.figures.fig5 import figure
from srtopo.consistency.choose import choose_topology
from srtopo.consistency.generate import uniform_rates

NAME = "fig6c"
DEPENDS: tuple[str, ...] = ()


def run(ctx) -> list[Row]:
    rows = []
    for tbox in ctx.args.tboxes:
        stream = ctx.stream(tbox)
        a = analysis_for(tbox)
        rates = uniform_rates(a)
        jobs = []
        for n in ctx.args.stages:
            if n > len(a.groups):
                continue
            jobs.append(("ltm", n, choose_topology(a, method="ltm", stages=n, balancer="even", rates=rates)))
            jobs.append(("ntm", n, choose_topology(a, method="ntm", tasks=n)))
        for method, n, topo in progress(jobs, desc=f"fig6c {tbox}"):
            for engine in ctx.engines():
                row = ctx.measure(engine, topo, stream, f"fig6c {tbox}")
                row.experiment, row.tasks = NAME, n
                row.detail.update(describe_plan(topo), method=method,
                                  model_tps=model_tps(row, topo, stream.params["tuples"]))
                rows.append(row)
    return rows


def table(rows: list[Row], ctx=None) -> str:
    lines = ["# Fig. 6c: LTM with 3, 4, 5 stages (one task each, split by the even balancer) vs NTM with "
             "3, 4, 5 tasks\n"]
    for engine in dict.fromkeys(r.engine for r in rows):
        for tbox in dict.fromkeys(r.tbox for r in rows):
            sub = [r for r in rows if r.tbox == tbox and r.engine == engine]
            lines.append(f"## {tbox.upper()} ({engine})\n")
            table_rows = []
            for n in sorted({r.tasks for r in sub}):
                ltm = next(r for r in sub if r.tasks == n and r["method"] == "ltm")
                ntm = next(r for r in sub if r.tasks == n and r["method"] == "ntm")
                table_rows.append([n, ltm.topology, " + ".join(map(str, ltm["conjunction_ops"])), figure(ltm),
                                   figure(ntm), f"{figure(ltm) / figure(ntm):.2f}" if figure(ntm) else "-"])
            lines.append(md_table(["tasks / stages", "LTM split", "LTM conj. ops", "LTM tuples/s", "NTM tuples/s",
                                   "LTM / NTM"], table_rows))
            lines.append("")
    return "\n".join(lines)


def plot(rows: list[Row], path: str) -> None:
    panels = [(e, t) for e in dict.fromkeys(r.engine for r in rows) for t in dict.fromkeys(r.tbox for r in rows)]
    with chart(path, 1, len(panels), size=(5 * len(panels), 3.8), dpi=110) as (_fig, axes):
        for ax, (engine, tbox) in zip(axes[0], panels):
            sub = [r for r in rows if r.engine == engine and r.tbox == tbox]
            ns = sorted({r.tasks for r in sub})
            for method, color, label in (("ltm", "tab:red", "LTM (n stages x 1 task)"),
                                         ("ntm", "tab:blue", "NTM (1 stage x n tasks)")):
                ax.plot(ns, [figure(next(r for r in sub if r.tasks == n and r["method"] == method)) for n in ns],
                        marker="o", color=color, label=label)
            ax.set_xticks(ns)
            ax.set(xlabel="stages (LTM) / tasks (NTM)", ylabel="tuples/s", title=f"{tbox.upper()} - {engine}")
            ax.legend(fontsize=8)
