"""TBox statistics: classes, PIs, NIs, NI closure, roots and groups of LUBM and NPD, next to the paper's."""
from __future__ import annotations

from experiments.common import Row, md_table, tbox_stats

NAME = "tboxes"
DEPENDS: tuple[str, ...] = ()
PAPER = {"lubm": {"classes": 43, "pis": 56, "nis": 70, "ni_closure": 773, "ni_groups": 5},
         "npd": {"classes": 329, "pis": 332, "nis": 51, "ni_closure": None, "ni_groups": 5}}


def run(ctx) -> list[Row]:
    rows = []
    for tbox in ctx.args.tboxes:
        stats = tbox_stats(tbox)
        rows.append(Row(NAME, tbox=tbox, detail={k: v for k, v in stats.items() if k != "tbox"}))
    return rows


def table(rows: list[Row], ctx=None) -> str:
    def kinds(d):
        return ", ".join(f"{k} {v}" for k, v in d.items())
    return "# TBox statistics\n\n" + md_table(
        ["TBox", "classes", "PIs (kinds)", "NIs", "NI closure (all basic concepts)", "NI closure (named classes)",
         "NI roots", "NI groups (sizes, deepest first)", "paper: classes/PIs/NIs/closure/groups"],
        [[r.tbox, r["classes"], f"{r['pis']} ({kinds(r['pi_kinds'])})", f"{r['nis']} ({kinds(r['ni_kinds'])})",
          r["ni_closure"], r["ni_closure_named"], r["ni_roots"],
          f"{r['ni_groups']} ({', '.join(map(str, r['group_sizes']))})",
          "/".join("-" if PAPER[r.tbox][k] is None else str(PAPER[r.tbox][k])
                   for k in ("classes", "pis", "nis", "ni_closure", "ni_groups"))] for r in rows]) + "\n"


plot = None
