"""Fig. 5: throughput of NTM and the two-stage LTM-0 .. LTM-k for task budgets (2, 4, 6), LUBM and NPD, on every
engine of the run; experiments/README.md, "Fig. 5", says how each engine's figure is taken."""
from __future__ import annotations

import statistics
import time
from contextlib import nullcontext
from dataclasses import replace

from experiments.common import Row, analysis_for, chart, describe_plan, fig5_plans, log, md_table, model_tps, progress
from experiments.picks import default_picks, plan_name

NAME = "fig5"
DEPENDS: tuple[str, ...] = ()
LOCAL_ENGINES = ("local", "operators")


def figure(row: Row) -> float:
    """What the figure shows for a row: the modelled pipeline throughput where there is one, else the measured."""
    modelled = row.get("model_tps")
    return modelled if modelled is not None else row.throughput_tps


def run(ctx) -> list[Row]:
    rows = []
    engines = ctx.engines(every=True)
    # the default balancer's picks on Spark, before any Spark run (the calibration they need runs first)
    picks = {(tbox, e): default_picks(ctx, tbox, e) for e in engines if e not in LOCAL_ENGINES
             for tbox in ctx.args.tboxes}
    # Spark on --master last: its repeated rounds are what gives way to the run's time budget
    for engine in sorted(engines, key=lambda e: e == "spark"):
        with ctx.standalone() if engine == "standalone" else nullcontext():
            rows += measure_engine(ctx, engine, picks)
    return sorted(rows, key=lambda r: engines.index(r.engine))


def measure_engine(ctx, engine: str, picks: dict) -> list[Row]:
    """Every plan of every budget, and on Spark the default balancer's pick where it is not one of them (it gives
    no stage more tasks than the cores: a row ``pick_only``, named as ``picks.plan_name``). One race for every
    TBox, so that the rounds the time budget leaves are shared by them."""
    rounds = ctx.args.spark_rounds if engine == "spark" else 1
    plans, groups, keep, streams, jobs = {}, {}, {}, {}, []   # run key -> topology; (tbox, budget) -> run keys
    for tbox in ctx.args.tboxes:
        streams[tbox] = stream = ctx.stream_for(tbox, engine)
        a = analysis_for(tbox)
        grid_jobs = [(tasks, topo) for tasks in ctx.args.tasks for topo in fig5_plans(a, tasks)]
        if not jobs and engine not in LOCAL_ENGINES:      # a JVM's first run compiles the generated code: not kept
            ctx.measure(engine, grid_jobs[0][1], stream, f"fig5 {tbox} warm-up")
        chosen = picks.get((tbox, engine), {})
        grid_keys = {(tasks, run_key(engine, topo)) for tasks, topo in grid_jobs}
        extra = [(tasks, topo) for tasks, topo in chosen.items() if (tasks, run_key(engine, topo)) not in grid_keys]
        for tasks, topo in grid_jobs + extra:
            key = (tbox, run_key(engine, topo))
            plans.setdefault(key, topo)
            groups.setdefault((tbox, tasks), []).append(key)
            jobs.append((tbox, tasks, topo, (tasks, topo) in extra))
        # the default balancer's pick is what the study judges: in a race it runs in every round
        if rounds > 1:
            keep.update({(tbox, tasks): (tbox, run_key(engine, topo)) for tasks, topo in chosen.items()})
    runs = race(groups, lambda key: ctx.measure(engine, plans[key], streams[key[0]], f"fig5 {key[0]}"), rounds,
                ctx.args.spark_contenders, keep=keep, desc=f"fig5 {engine}", deadline=getattr(ctx, "deadline", None))
    done = max((r.get("round", 1) for measured in runs.values() for r in measured), default=1)
    rows = []
    for tbox, tasks, topo, pick_only in jobs:
        group, key = (tbox, tasks), (tbox, run_key(engine, topo))
        row = combined(in_turns(runs[key], group))
        if group in keep and keep[group] != key:
            row = relative_to(row, runs[key], runs[keep[group]], group)
        row = replace(row, experiment=NAME, tasks=tasks, detail={**row.detail, "rounds": done})
        row.detail.update(describe_plan(topo), model_tps=model_tps(row, topo, streams[tbox].params["tuples"]))
        if pick_only:
            row = replace(row, topology=plan_name(topo, tasks))
            row.detail["pick_only"] = True
        rows.append(row)
    return rows


def grid(rows: list[Row]) -> list[Row]:
    """The figure's plans: NTM and LTM-0 .. LTM-k sharing each budget evenly (not the picks measured besides)."""
    return [r for r in rows if not r.get("pick_only")]


def run_key(engine: str, topology) -> object:
    """What a run measures: the local runner runs every stage in one process, so there the budget only scales the
    pipeline model and one run serves every budget; Spark runs each stage with its tasks."""
    return topology.label if engine in LOCAL_ENGINES else (topology.label,
                                                          tuple(s.parallelism for s in topology.stages))


def race(groups: dict, measure, rounds: int, contenders: int, keep: dict | None = None, desc: str = "",
         deadline: float | None = None, clock=time.monotonic) -> dict:
    """Measure every run key once, then, ``rounds - 1`` times, the ``contenders`` fastest of each group (by
    ``score``: relative to the group's kept key in the same turns) and the group's ``keep`` key once more, group
    after group, so close plans are ranked on repeated runs measured one after the other (this VM's speed
    drifts by 15-35% over minutes; a plan left at one run keeps the drift of the first round). A kept key
    shared by groups runs in each group's turn of every round, the first included, next to the plans that group
    compares it with. A round that would end after ``deadline`` (``clock`` seconds; its length estimated from the
    runs so far) is not started. Returns key -> the rows measured, in order, each with the group whose turn it ran
    in (``turn``; in the first round, the first group that lists the key, or the group that keeps it)."""
    keep = keep or {}
    runs: dict = {}
    owner = {}
    for group, keys in groups.items():
        for key in keys:
            owner.setdefault(key, group)
    # round 1: every key in its owner's turn, and a group's kept key also in that group's turn
    first = [(group, key) for group, keys in groups.items()
             for key in [k for k in keys if owner[k] == group]
             + ([keep[group]] if group in keep and owner.get(keep[group]) != group else [])]
    began, measured = clock(), 0
    for group, key in progress(first, desc=desc):
        runs.setdefault(key, []).append(_in_turn(measure(key), group, 1))
    measured += len(first)
    for r in range(1, max(1, rounds)):
        turns = [(group, list(dict.fromkeys(sorted(keys, key=lambda k: -score(runs, k, group, keep))
                                            [:max(0, contenders)]
                                            + ([keep[group]] if group in keep else []))))
                 for group, keys in groups.items()]
        todo = [(g, k) for g, turn in turns for k in turn]
        if deadline is not None and measured:
            expected = (clock() - began) / measured * len(todo)
            if clock() + expected > deadline:
                log(f"{desc}: {r} round(s); round {r + 1} (~{expected:.0f} s) would end after the run's time "
                    f"budget")
                break
        for group, key in progress(todo, desc=f"{desc} round {r + 1}"):
            runs[key].append(_in_turn(measure(key), group, r + 1))
        measured += len(todo)
    return runs


def blocked_rate(rows: list[Row], reference: list[Row], group) -> float | None:
    """A plan's throughput at a budget, relative to the reference (the default balancer's pick) in the same turns:
    the reference's median in the group's turns times the median, over the rounds both ran in that turn, of the
    plan's run over the reference's. Each turn is a block measured within a minute or two, and this VM's speed
    drifts between rounds by more than the plans differ: a plan's median over the rounds it happened to be run in
    would carry that drift (a plan left at a first round on a fast minute would keep its lead). None if they
    share no turn."""
    ref = {r.get("round"): r.throughput_tps for r in reference if r.get("turn") == group}
    ratios = [r.throughput_tps / ref[r.get("round")] for r in rows
              if r.get("turn") == group and ref.get(r.get("round"))]
    if not ratios:
        return None
    return statistics.median(ref.values()) * statistics.median(ratios)


def score(runs: dict, key, group, keep: dict) -> float:
    """How the race ranks a key in a group: relative to the group's kept key where it has one, else the median
    of its runs in the group's turns."""
    if group in keep and keep[group] in runs and keep[group] != key:
        relative = blocked_rate(runs[key], runs[keep[group]], group)
        if relative is not None:
            return relative
    return rate(in_turns(runs[key], group))


def relative_to(row: Row, rows: list[Row], reference: list[Row], group) -> Row:
    """``row`` with its throughput relative to the reference in the same turns (``blocked_rate``), the median of
    its runs kept as ``median_tps``."""
    relative = blocked_rate(rows, reference, group)
    if relative is None:
        return row
    return replace(row, throughput_tps=relative, detail={**row.detail, "median_tps": round(row.throughput_tps, 1)})


def _in_turn(row: Row, group, round_: int) -> Row:
    return replace(row, detail={**row.detail, "turn": group, "round": round_})


def in_turns(rows: list[Row], group) -> list[Row]:
    """A plan's runs for one group's figure: those made in the group's turns, next to the plans it is compared
    with, where there are any (a plan shared by budgets has runs in each budget's turn); else all of them."""
    return [r for r in rows if r.get("turn") == group] or rows


def rate(rows: list[Row]) -> float:
    return statistics.median(r.throughput_tps for r in rows)


def combined(rows: list[Row]) -> Row:
    """One row for repeated runs of a plan: the run nearest the median, with the median throughput and every
    run's figure (``runs_tps``)."""
    if len(rows) == 1:
        return replace(rows[0], detail={k: v for k, v in rows[0].detail.items() if k not in ("turn", "round")})
    median = rate(rows)
    near = min(rows, key=lambda r: abs(r.throughput_tps - median))
    detail = {k: v for k, v in near.detail.items() if k not in ("turn", "round")}
    return replace(near, throughput_tps=median,
                   detail={**detail, "runs_tps": [round(r.throughput_tps, 1) for r in rows]})


def summary(rows: list[Row]) -> dict:
    rows = grid(rows)
    out = {}
    for engine in dict.fromkeys(r.engine for r in rows):
        for tbox in sorted({r.tbox for r in rows}):
            sub = [r for r in rows if r.tbox == tbox and r.engine == engine]
            for tasks in sorted({r.tasks for r in sub}):
                cand = [r for r in sub if r.tasks == tasks]
                ntm = figure(next(r for r in cand if r.topology == "ntm"))
                best = max((r for r in cand if r.topology.startswith("ltm")), key=figure)
                ltm0 = figure(next(r for r in cand if r.topology == "ltm-0"))
                out.setdefault(engine, {}).setdefault(tbox, {})[tasks] = {
                    "best_ltm": best.topology, "best_ltm_tps": figure(best), "ntm_tps": ntm,
                    "ratio": figure(best) / ntm if ntm else None, "ltm0_over_ntm": ltm0 / ntm if ntm else None}
    return out


def table(rows: list[Row], ctx=None) -> str:
    lines = ["# Fig. 5: throughput of NTM and two-stage LTM-n\n"]
    rows = grid(rows)
    data = summary(rows)
    for engine, by_tbox in data.items():
        for tbox, best in by_tbox.items():
            sub = [r for r in rows if r.tbox == tbox and r.engine == engine]
            modelled = any(r.get("model_tps") is not None for r in sub)
            what = ("modelled pipeline tuples/s = tuples / max over stages of (measured stage time / stage tasks)"
                    if modelled else "measured tuples/s over the micro-batches after the first")
            lines.append(f"## {tbox.upper()}, {engine}: {what}\n")
            first = sub[0]
            raced = (f" The fastest plans of each budget and the default balancer's pick ran in {first['rounds']} "
                     f"rounds, the pick in every budget's turn of every round; a figure is the pick's median in "
                     f"the budget's turns times the median of the plan's runs over the pick's run in the same "
                     f"turn (the machine's drift between rounds cancels; `median_tps` in the JSON: the plain "
                     f"median)."
                     if (first.get("rounds") or 1) > 1 else "")
            lines.append(f"Stream: {first.get('stream_tuples', first.tuples):,} tuples, micro-batches of "
                         f"~{first.get('batch_tuples', 0):,}; {first.get('physical_plan', '')}.{raced}\n")
            topologies = list(dict.fromkeys(r.topology for r in sub))
            budgets = sorted(best)
            lines.append(md_table(["topology"] + [f"tasks {b}" for b in budgets],
                                  [[t] + [figure(next(r for r in sub if r.topology == t and r.tasks == b))
                                          for b in budgets] for t in topologies]))
            lines.append("")
            lines.append(md_table(["tasks", "best LTM", "best LTM / NTM", "LTM-0 / NTM"],
                                  [[t, v["best_ltm"], f"{v['ratio']:.2f}", f"{v['ltm0_over_ntm']:.2f}"]
                                   for t, v in best.items()]))
            lines.append("")
    return "\n".join(lines)


def plot(rows: list[Row], path: str) -> None:
    rows = grid(rows)
    engines = list(dict.fromkeys(r.engine for r in rows))
    tboxes = sorted({r.tbox for r in rows})
    with chart(path, len(engines), len(tboxes), size=(6 * len(tboxes), 3.6 * len(engines)), dpi=110) as (_f, axes):
        for ax, (engine, tbox) in zip(axes.flat, [(e, t) for e in engines for t in tboxes]):
            sub = [r for r in rows if r.engine == engine and r.tbox == tbox]
            topologies = list(dict.fromkeys(r.topology for r in sub))
            budgets = sorted({r.tasks for r in sub})
            width = 0.8 / len(budgets)
            for i, tasks in enumerate(budgets):
                values = [figure(next(r for r in sub if r.topology == t and r.tasks == tasks)) for t in topologies]
                ax.bar([x + i * width for x in range(len(topologies))], values, width, label=f"{tasks} tasks")
            ax.set_xticks([x + width * (len(budgets) - 1) / 2 for x in range(len(topologies))])
            ax.set_xticklabels([t.upper() for t in topologies], rotation=30)
            modelled = any(r.get("model_tps") is not None for r in sub)
            ax.set_ylabel("tuples/s" + (" (modelled pipeline)" if modelled else " (measured)"))
            ax.set_title(f"{tbox.upper()} - {engine}")
            ax.legend(fontsize=8)
