"""Fig. 6a/6b: conjunction operations per stage and tuples cached, per plan (measured by the reference runner,
next to the window rows Spark kept in fig5 where that ran)."""
from __future__ import annotations

from experiments.common import Row, analysis_for, chart, describe_plan, fig5_plans, md_table, progress

NAME = "fig6"
DEPENDS: tuple[str, ...] = ()


def run(ctx) -> list[Row]:
    try:
        spark_rows = [r for r in ctx.dependency("fig5") if r.engine == "spark"]
    except KeyError:
        spark_rows = []
    spark_cached = {}
    for r in spark_rows:
        spark_cached.setdefault((r.tbox, r.topology), r.cached_tuples)
    rows = []
    for tbox in ctx.args.tboxes:
        stream = ctx.stream(tbox)
        for topo in progress(fig5_plans(analysis_for(tbox), 2), desc=f"fig6 {tbox}"):
            row = ctx.measure("local", topo, stream, f"fig6 {tbox}")
            row.experiment, row.tasks = NAME, 2
            row.detail.update(describe_plan(topo), spark_state_rows_peak=spark_cached.get((tbox, topo.label)))
            rows.append(row)
    return rows


def table(rows: list[Row], ctx=None) -> str:
    lines = ["# Fig. 6a/6b: conjunction operations per stage and tuples cached, per plan\n"]
    for tbox in dict.fromkeys(r.tbox for r in rows):
        sub = [r for r in rows if r.tbox == tbox]
        lines.append(f"## {tbox.upper()}\n")
        lines.append(md_table(
            ["topology", "conjunction ops per stage", "of which between named classes", "inference ops per stage",
             "conjunction ops evaluated per stage", "peak tuples cached (local, window)", "per stage",
             "Spark state rows (peak)"],
            [[r.topology, " + ".join(map(str, r["conjunction_ops"])), " + ".join(map(str, r["conjunction_ops_named"])),
              " + ".join(map(str, r["inference_ops"])), " + ".join(f"{x:,}" for x in r["ops_evaluated"]),
              r.cached_tuples, " + ".join(f"{x:,}" for x in r["cached_per_stage"]),
              r["spark_state_rows_peak"]] for r in sub]))
        lines.append("")
    return "\n".join(lines)


def plot(rows: list[Row], path: str) -> None:
    tboxes = list(dict.fromkeys(r.tbox for r in rows))
    with chart(path, 2, len(tboxes), size=(6 * len(tboxes), 7), dpi=110) as (_fig, axes):
        for j, tbox in enumerate(tboxes):
            sub = [r for r in rows if r.tbox == tbox]
            labels = [r.topology.upper() for r in sub]
            xs = range(len(sub))
            b1 = [r["conjunction_ops"][0] for r in sub]
            b2 = [r["conjunction_ops"][1] if len(r["conjunction_ops"]) > 1 else 0 for r in sub]
            ax = axes[0][j]
            ax.bar([x - 0.2 for x in xs], b1, 0.4, color="tab:green", label="B1")
            ax.bar([x + 0.2 for x in xs], b2, 0.4, color="tab:red", label="B2")
            ax.set_xticks(list(xs))
            ax.set_xticklabels(labels, rotation=30)
            ax.set_yscale("log" if max(b1 + b2) > 20 * max(1, sorted(b1 + b2)[len(b1 + b2) // 2]) else "linear")
            ax.set_title(f"(a) {tbox.upper()}: conjunction ops per stage")
            ax.legend(fontsize=8)
            ax = axes[1][j]
            ax.bar(list(xs), [r.cached_tuples for r in sub], color="tab:blue")
            ax.set_xticks(list(xs))
            ax.set_xticklabels(labels, rotation=30)
            ax.set_title(f"(b) {tbox.upper()}: peak tuples cached (window)")
