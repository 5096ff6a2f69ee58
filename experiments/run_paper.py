"""Reproduce section 5 of "Distributed Stream Consistency Checking" (seed 003) on Spark and locally.

    python -m experiments.run_paper all            # everything below, in order, with the total runtime
    python -m experiments.run_paper tboxes         # LUBM / NPD statistics (classes, PIs, NIs, closure, roots, groups)
    python -m experiments.run_paper uba            # the real UBA universities: consistent; replay with planted violations
    python -m experiments.run_paper fig5           # throughput of NTM, LTM-0..LTM-k, task budgets 2,4,6
    python -m experiments.run_paper fig6           # (a) conjunction ops per stage, (b) tuples cached, per plan
    python -m experiments.run_paper fig6c          # LTM with 3,4,5 stages (1 task each) vs NTM with 3,4,5 tasks
    python -m experiments.run_paper balancer       # the even balancer's predicted split vs the measured best (reads fig5)
    python -m experiments.run_paper baseline       # rdflib: SPARQL over every window's graph plus the TBox

Each writes experiments/results/<name>.json, .csv, .md (and .png). Every plan must give the same set of
(subject, time) reports as the generator planted on the same stream; a difference stops the run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

from srtopo.experiments import common
from srtopo.experiments.common import (ExperimentError, analysis_for, check_same, fig5_plans, log, md_table, named_ops,
                                run_local, run_spark, stage_partitions, tbox_stats, write_results)
from srtopo.experiments.streams import class_streams, write_tnt

DEFAULTS = {   # sizes per TBox: one stream per class, `rate` tuples per class per time point
    "lubm": {"rate": 4, "time_points": 600, "chunk": 150},      # 43 streams: 103,200 tuples, 4 files of 25,800
    "npd": {"rate": 1, "time_points": 300, "chunk": 75},         # 342 streams: 102,600 tuples, 4 files of 25,650
}

_STREAMS: dict = {}


def progress(iterable, **kwargs):
    from tqdm import tqdm
    return tqdm(iterable, file=sys.stderr, dynamic_ncols=True, **kwargs)


def get_stream(tbox: str, args) -> common.Stream:
    key = (tbox, args.scale, args.violation, args.seed, args.window)
    if key in _STREAMS:
        return _STREAMS[key]
    d = DEFAULTS[tbox]
    a = analysis_for(tbox)
    tp = max(2, int(d["time_points"] * args.scale))
    gen = class_streams(a, time_points=tp, rate=d["rate"], violation=args.violation, seed=args.seed)
    directory = None
    if "spark" in engines(args):
        directory = os.path.join(args.work, f"stream-{tbox}-{tp}-{args.seed}")
        shutil.rmtree(directory, ignore_errors=True)
        write_tnt(directory, gen.tuples, chunk=d["chunk"])
    stream = common.Stream(tbox, gen.tuples, gen.planted, directory,
                           {**gen.params, "streams": gen.streams, "conflicting_streams": gen.conflicting_streams,
                            "tuples": len(gen.tuples), "violating_tuples": len(gen.planted),
                            "violation_fraction_measured": round(gen.violation_fraction, 5),
                            "window": args.window, "chunk_time_points": d["chunk"]})
    _STREAMS[key] = stream
    log(f"[{tbox}] stream: {len(gen.tuples):,} tuples, {gen.streams} class streams, "
        f"{len(gen.planted):,} violating ({gen.violation_fraction:.2%})")
    return stream


def engines(args) -> list[str]:
    return ["local", "spark"] if args.engine == "both" else [args.engine]


def model_tps(result: dict, topology, tuples: int) -> float:
    """The paper's pipeline model on the reference runner: each stage's measured CPU time shared by its
    tasks, stages running concurrently; the slowest stage bounds the throughput (the source is assumed
    fast enough, as the paper tunes its generator to the system's capacity)."""
    parts = [s.parallelism for s in topology.stages]
    bottleneck = max(sec / p for sec, p in zip(result["stage_seconds"], parts))
    return tuples / bottleneck if bottleneck else 0.0


def describe_plan(topology) -> dict:
    return {"conjunction_ops": topology.conjunction_counts, "conjunction_ops_named": named_ops(topology),
            "inference_ops": [len(s.inference_ops) for s in topology.stages],
            "partitions": [s.parallelism for s in topology.stages]}


def measure(topology, stream: common.Stream, engine: str, args, label: str) -> dict:
    if engine == "local":
        result = run_local(topology, stream.tuples, args.window)
    else:
        result = run_spark(topology, stream.directory, args.work, args.window, plan=args.spark_plan,
                           master=args.master, tuples=len(stream.tuples))
    check_same(label, stream.planted, result["report_keys"], f"{engine} {topology.plan}")
    result["reports"] = len(result["report_keys"])
    return result


# --- tboxes ----------------------------------------------------------------------------------------------

def cmd_tboxes(args) -> dict:
    rows = [tbox_stats(t) for t in args.tboxes]
    paper = {"lubm": {"classes": 43, "pis": 56, "nis": 70, "ni_closure": 773, "ni_groups": 5},
             "npd": {"classes": 329, "pis": 332, "nis": 51, "ni_closure": None, "ni_groups": 5}}
    table = md_table(
        ["TBox", "classes", "PIs (kinds)", "NIs", "NI closure (all basic concepts)", "NI closure (named classes)",
         "NI roots", "NI groups (sizes, deepest first)", "paper: classes/PIs/NIs/closure/groups"],
        [[r["tbox"], r["classes"], f"{r['pis']} ({', '.join(f'{k} {v}' for k, v in r['pi_kinds'].items())})",
          f"{r['nis']} ({', '.join(f'{k} {v}' for k, v in r['ni_kinds'].items())})", r["ni_closure"],
          r["ni_closure_named"], r["ni_roots"], f"{r['ni_groups']} ({', '.join(map(str, r['group_sizes']))})",
          "/".join(str(paper[r['tbox']][k]) if paper[r['tbox']][k] is not None else "-"
                   for k in ("classes", "pis", "nis", "ni_closure", "ni_groups"))] for r in rows])
    md = "# TBox statistics\n\n" + table + "\n"
    write_results("tboxes", rows, {"paper": paper}, md, args.out)
    print(md)
    return {"rows": rows}


# --- UBA ---------------------------------------------------------------------------------------------------

def cmd_uba(args) -> dict:
    from srtopo.experiments.streams import uba_replay, uba_triples
    from srtopo.topology.compile import compile_ntm, ltm_n
    from srtopo.topology.runners.local import LocalRunner
    from srtopo.topology.tnt import tuples_of_statement
    a = analysis_for("lubm")
    triples = uba_triples(common.UBA)
    plans = [compile_ntm(a)] + [ltm_n(a, n) for n in range(len(a.groups) + 1)]
    # 1. the real data alone, unbounded window: consistent under every plan
    base = []
    for i, (s, p, o) in enumerate(triples):
        base.extend(tuples_of_statement(0, f"<{s}>", p, o if o.startswith('"') else f"<{o}>"))
    rows = []
    for topo in progress(plans, desc="UBA data, unbounded window"):
        reports = LocalRunner(topo, window=None).run(base)
        if reports:
            raise ExperimentError(f"the real UBA data is inconsistent under {topo.plan}: {reports[0]}")
        rows.append({"check": "uba-consistent", "plan": topo.plan, "tbox": "lubm", "tuples": len(base),
                     "reports": 0})
    # 2. replay as an RDF stream with planted violations
    replay = uba_replay(a, triples, per_time=args.uba_per_time, violation=args.uba_violation, seed=args.seed)
    tuples = []
    for t, s, p, o in replay.lines:
        tuples.extend(tuples_of_statement(t, f"<{s}>", p, o if o.startswith('"') else f"<{o}>"))
    directory = os.path.join(args.work, "uba-replay")
    shutil.rmtree(directory, ignore_errors=True)
    write_tnt(directory, replay.lines, chunk=max(1, replay.time_points // 4))
    keys_by_plan = {}
    for topo in progress(plans, desc="UBA replay, local"):
        result = run_local(topo, tuples, args.window)
        keys_by_plan[topo.plan] = result["report_keys"]
        rows.append({"check": "uba-replay", "plan": topo.plan, "tbox": "lubm", "engine": "local", "tasks": 1,
                     "tuples": len(tuples), "planted": len(replay.planted), "reports": len(result["report_keys"]),
                     "throughput_tps": result["throughput_tps"], "latency_p50_s": result["latency_p50_s"],
                     "latency_p95_s": result["latency_p95_s"], "cached_tuples": result["cached_tuples"],
                     **describe_plan(topo)})
    reference = keys_by_plan["ntm"]
    missing = replay.planted - {k for k in reference}
    if missing:
        raise ExperimentError(f"UBA replay: planted violations not reported: {sorted(missing)[:3]}")
    if {s for s, _ in reference} - {s for s, _ in replay.planted}:
        raise ExperimentError("UBA replay: a subject without a planted violation was reported")
    for plan, keys in keys_by_plan.items():
        check_same("UBA replay", reference, keys, f"local {plan}")
    if "spark" in engines(args):
        for topo in progress([plans[0], plans[3]], desc="UBA replay, spark"):
            result = run_spark(topo, directory, args.work, args.window, plan=args.spark_plan, master=args.master,
                               tuples=len(tuples))
            check_same("UBA replay", reference, result["report_keys"], f"spark {topo.plan}")
            rows.append({"check": "uba-replay", "plan": topo.plan, "tbox": "lubm", "engine": "spark", "tasks": 2,
                         "tuples": len(tuples), "planted": len(replay.planted),
                         "reports": len(result["report_keys"]), "throughput_tps": result["throughput_tps"],
                         "latency_p50_s": result["latency_p50_s"], "latency_p95_s": result["latency_p95_s"],
                         "cached_tuples": result["cached_tuples"], **describe_plan(topo)})
    md = (f"# UBA universities (University0_0 + University0_1)\n\n"
          f"{len(triples):,} triples, {len(base):,} tuples; with every plan and an unbounded window the real data "
          f"gives **0 reports**.\n\nReplay: {replay.subjects:,} subjects, {args.uba_per_time} per time point "
          f"({replay.time_points} time points), {len(replay.planted)} planted disjoint rdf:type assertions, "
          f"window {args.window}: every plan reports {len(reference)} (subject, time) pairs (every planted one, "
          f"plus later role assertions about the same subjects that meet the planted type in the window).\n\n"
          + md_table(["engine", "plan", "tuples", "reports", "throughput (tuples/s)", "cached tuples"],
                     [[r["engine"], r["plan"], r["tuples"], r["reports"], r["throughput_tps"], r["cached_tuples"]]
                      for r in rows if r["check"] == "uba-replay"]))
    write_results("uba", rows, {"params": {"per_time": args.uba_per_time, "violation": args.uba_violation,
                                           "seed": args.seed, "window": args.window}}, md, args.out)
    print(md)
    return {"rows": rows}


# --- Fig. 5 ----------------------------------------------------------------------------------------------

def cmd_fig5(args) -> dict:
    rows = []
    params = {}
    for tbox in args.tboxes:
        stream = get_stream(tbox, args)
        params[tbox] = stream.params
        a = analysis_for(tbox)
        local_cache = {}
        jobs = [(tasks, topo) for tasks in args.tasks for topo in fig5_plans(a, tasks)]
        for tasks, topo in progress(jobs, desc=f"fig5 {tbox}"):
            for engine in engines(args):
                if engine == "local":
                    if topo.plan not in local_cache:
                        local_cache[topo.plan] = measure(topo, stream, "local", args, f"fig5 {tbox}")
                    result = dict(local_cache[topo.plan])
                    result["model_tps"] = model_tps(result, topo, len(stream.tuples))
                else:
                    result = measure(topo, stream, "spark", args, f"fig5 {tbox}")
                rows.append({"plan": topo.plan, "tbox": tbox, "tasks": tasks, "engine": engine, **describe_plan(topo),
                             **{k: v for k, v in result.items() if k != "report_keys"}})
    summary = fig5_summary(rows)
    md = "# Fig. 5: throughput of NTM and two-stage LTM-n\n\n" + summary["markdown"]
    write_results("fig5", rows, {"params": params, "summary": summary["data"]}, md, args.out)
    plot_fig5(rows, os.path.join(args.out, "fig5.png"))
    print(md)
    return {"rows": rows, "summary": summary["data"]}


def fig5_summary(rows) -> dict:
    data = {}
    lines = []
    for engine in sorted({r["engine"] for r in rows}):
        metric = "throughput_tps"
        for tbox in sorted({r["tbox"] for r in rows}):
            sub = [r for r in rows if r["tbox"] == tbox and r["engine"] == engine]
            plans = list(dict.fromkeys(r["plan"] for r in sub))
            budgets = sorted({r["tasks"] for r in sub})
            table = []
            for plan in plans:
                row = [plan]
                for tasks in budgets:
                    r = next(r for r in sub if r["plan"] == plan and r["tasks"] == tasks)
                    row.append(r[metric] if engine == "spark" else r["model_tps"])
                table.append(row)
            best = {}
            for tasks in budgets:
                cand = [r for r in sub if r["tasks"] == tasks]
                key = metric if engine == "spark" else "model_tps"
                ntm = next(r for r in cand if r["plan"] == "ntm")[key]
                ltm = max((r for r in cand if r["plan"].startswith("ltm")), key=lambda r: r[key])
                ltm0 = next(r for r in cand if r["plan"] == "ltm-0")[key]
                best[tasks] = {"best_ltm": ltm["plan"], "best_ltm_tps": ltm[key], "ntm_tps": ntm,
                               "ratio": ltm[key] / ntm if ntm else None, "ltm0_over_ntm": ltm0 / ntm if ntm else None}
            data.setdefault(engine, {})[tbox] = best
            what = ("Spark, sustained tuples/s (micro-batches after the first)" if engine == "spark" else
                    "local reference runner, modelled pipeline tuples/s = tuples / max over stages of "
                    "(measured stage CPU time / stage tasks)")
            lines.append(f"## {tbox.upper()}: {what}\n")
            lines.append(md_table(["plan"] + [f"tasks {b}" for b in budgets], table))
            lines.append("")
            lines.append(md_table(["tasks", "best LTM", "best LTM / NTM", "LTM-0 / NTM"],
                                  [[t, v["best_ltm"], f"{v['ratio']:.2f}", f"{v['ltm0_over_ntm']:.2f}"]
                                   for t, v in best.items()]))
            lines.append("")
    return {"data": data, "markdown": "\n".join(lines)}


def plot_fig5(rows, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [(e, t) for e in sorted({r["engine"] for r in rows}, reverse=True) for t in sorted({r["tbox"] for r in rows})]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    for ax, (engine, tbox) in zip(axes[0], panels):
        sub = [r for r in rows if r["engine"] == engine and r["tbox"] == tbox]
        plans = list(dict.fromkeys(r["plan"] for r in sub))
        budgets = sorted({r["tasks"] for r in sub})
        width = 0.8 / len(budgets)
        key = "throughput_tps" if engine == "spark" else "model_tps"
        for i, tasks in enumerate(budgets):
            values = [next(r[key] for r in sub if r["plan"] == p and r["tasks"] == tasks) for p in plans]
            ax.bar([x + i * width for x in range(len(plans))], values, width, label=f"{tasks} tasks")
        ax.set_xticks([x + width * (len(budgets) - 1) / 2 for x in range(len(plans))])
        ax.set_xticklabels([p.upper() for p in plans], rotation=30)
        ax.set_ylabel("tuples/s" + (" (modelled pipeline)" if engine == "local" else " (sustained)"))
        ax.set_title(f"{tbox.upper()} - {engine}" + (" local[2]" if engine == "spark" else " reference"))
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- Fig. 6a/b ---------------------------------------------------------------------------------------------

def fig5_spark_rows(out_dir: str) -> list[dict]:
    """The Spark rows of an earlier fig5 run in out_dir (none if fig5 has not been run)."""
    path = os.path.join(out_dir, "fig5.json")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [r for r in json.load(handle)["rows"] if r["engine"] == "spark"]


def cmd_fig6(args) -> dict:
    rows = []
    spark_cache = {}
    for r in fig5_spark_rows(args.out):
        spark_cache.setdefault((r["tbox"], r["plan"]), r["cached_tuples"])
    for tbox in args.tboxes:
        stream = get_stream(tbox, args)
        a = analysis_for(tbox)
        for topo in progress(fig5_plans(a, 2), desc=f"fig6 {tbox}"):
            result = measure(topo, stream, "local", args, f"fig6 {tbox}")
            rows.append({"plan": topo.plan, "tbox": tbox, "tasks": 2, "engine": "local", **describe_plan(topo),
                         "throughput_tps": result["throughput_tps"], "latency_p50_s": result["latency_p50_s"],
                         "latency_p95_s": result["latency_p95_s"], "cached_tuples": result["cached_tuples"],
                         "cached_per_stage": result["cached_per_stage"], "ops_evaluated": result["ops_evaluated"],
                         "spark_state_rows_peak": spark_cache.get((tbox, topo.plan)), "reports": result["reports"]})
    lines = ["# Fig. 6a/6b: conjunction operations per stage and tuples cached, per plan\n"]
    for tbox in args.tboxes:
        sub = [r for r in rows if r["tbox"] == tbox]
        lines.append(f"## {tbox.upper()}\n")
        lines.append(md_table(
            ["plan", "conjunction ops per stage", "of which between named classes", "inference ops per stage",
             "conjunction ops evaluated per stage", "peak tuples cached (local, window)", "per stage",
             "Spark state rows (peak)"],
            [[r["plan"], " + ".join(map(str, r["conjunction_ops"])), " + ".join(map(str, r["conjunction_ops_named"])),
              " + ".join(map(str, r["inference_ops"])), " + ".join(f"{x:,}" for x in r["ops_evaluated"]),
              r["cached_tuples"], " + ".join(f"{x:,}" for x in r["cached_per_stage"]),
              r["spark_state_rows_peak"] if r["spark_state_rows_peak"] is not None else "-"] for r in sub]))
        lines.append("")
    md = "\n".join(lines)
    write_results("fig6", rows, {}, md, args.out)
    plot_fig6(rows, os.path.join(args.out, "fig6.png"))
    print(md)
    return {"rows": rows}


def plot_fig6(rows, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tboxes = list(dict.fromkeys(r["tbox"] for r in rows))
    fig, axes = plt.subplots(2, len(tboxes), figsize=(6 * len(tboxes), 7), squeeze=False)
    for j, tbox in enumerate(tboxes):
        sub = [r for r in rows if r["tbox"] == tbox]
        plans = [r["plan"].upper() for r in sub]
        ax = axes[0][j]
        b1 = [r["conjunction_ops"][0] for r in sub]
        b2 = [r["conjunction_ops"][1] if len(r["conjunction_ops"]) > 1 else 0 for r in sub]
        xs = range(len(sub))
        ax.bar([x - 0.2 for x in xs], b1, 0.4, color="tab:green", label="B1")
        ax.bar([x + 0.2 for x in xs], b2, 0.4, color="tab:red", label="B2")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(plans, rotation=30)
        ax.set_yscale("log" if max(b1 + b2) > 20 * max(1, sorted(b1 + b2)[len(b1 + b2) // 2]) else "linear")
        ax.set_title(f"(a) {tbox.upper()}: conjunction ops per stage")
        ax.legend(fontsize=8)
        ax = axes[1][j]
        ax.bar(list(xs), [r["cached_tuples"] for r in sub], color="tab:blue")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(plans, rotation=30)
        ax.set_title(f"(b) {tbox.upper()}: peak tuples cached (window)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- Fig. 6c ---------------------------------------------------------------------------------------------

def cmd_fig6c(args) -> dict:
    from srtopo.topology.balance import even
    from srtopo.topology.compile import compile_ltm, compile_ntm
    rows = []
    for tbox in args.tboxes:
        stream = get_stream(tbox, args)
        a = analysis_for(tbox)
        rates = {c: 1.0 for c in common_named(a)}
        jobs = []
        for n in args.stages:
            if n > len(a.groups):
                continue
            plan = even(a, tasks=1, stages=n, rates=rates)
            topo = compile_ltm(a, plan.split, parallelism=1)
            jobs.append((f"ltm-{n}stages", n, topo, plan.split))
            jobs.append(("ntm", n, compile_ntm(a, parallelism=n), None))
        for name, n, topo, split in progress(jobs, desc=f"fig6c {tbox}"):
            for engine in engines(args):
                result = measure(topo, stream, engine, args, f"fig6c {tbox}")
                if engine == "local":
                    result["model_tps"] = model_tps(result, topo, len(stream.tuples))
                rows.append({"plan": name, "tbox": tbox, "tasks": n, "engine": engine,
                             "split": list(split) if split else None, **describe_plan(topo),
                             **{k: v for k, v in result.items() if k != "report_keys"}})
    lines = ["# Fig. 6c: LTM with 3, 4, 5 stages (one task each, split by the even balancer) vs NTM with "
             "3, 4, 5 tasks\n"]
    for engine in engines(args):
        key = "throughput_tps" if engine == "spark" else "model_tps"
        for tbox in args.tboxes:
            sub = [r for r in rows if r["tbox"] == tbox and r["engine"] == engine]
            lines.append(f"## {tbox.upper()} ({engine}{', modelled pipeline' if engine == 'local' else ''})\n")
            lines.append(md_table(["tasks / stages", "LTM split", "LTM conj. ops", "LTM tuples/s", "NTM tuples/s",
                                   "LTM / NTM"],
                                  [[n, ",".join(map(str, l["split"])), " + ".join(map(str, l["conjunction_ops"])),
                                    l[key], m[key], f"{l[key] / m[key]:.2f}" if m[key] else "-"]
                                   for n in args.stages
                                   for l in [r for r in sub if r["tasks"] == n and r["plan"] != "ntm"]
                                   for m in [r for r in sub if r["tasks"] == n and r["plan"] == "ntm"]]))
            lines.append("")
    md = "\n".join(lines)
    write_results("fig6c", rows, {}, md, args.out)
    plot_fig6c(rows, os.path.join(args.out, "fig6c.png"))
    print(md)
    return {"rows": rows}


def common_named(a):
    from srtopo.experiments.streams import named_classes
    return named_classes(a)


def plot_fig6c(rows, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [(e, t) for e in sorted({r["engine"] for r in rows}, reverse=True) for t in dict.fromkeys(r["tbox"] for r in rows)]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.8), squeeze=False)
    for ax, (engine, tbox) in zip(axes[0], panels):
        key = "throughput_tps" if engine == "spark" else "model_tps"
        sub = [r for r in rows if r["engine"] == engine and r["tbox"] == tbox]
        ns = sorted({r["tasks"] for r in sub})
        for plan, color in (("ltm", "tab:red"), ("ntm", "tab:blue")):
            ys = [next(r[key] for r in sub if r["tasks"] == n and r["plan"].startswith(plan)) for n in ns]
            ax.plot(ns, ys, marker="o", color=color, label=plan.upper() + (" (n stages x 1 task)" if plan == "ltm"
                                                                                  else " (1 stage x n tasks)"))
        ax.set_xticks(ns)
        ax.set_xlabel("stages (LTM) / tasks (NTM)")
        ax.set_ylabel("tuples/s")
        ax.set_title(f"{tbox.upper()} - {engine}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- balancer ------------------------------------------------------------------------------------------------

def cmd_balancer(args) -> dict:
    from srtopo.topology.balance import even
    path = os.path.join(args.out, "fig5.json")
    if not os.path.exists(path):
        log("balancer: no fig5 results yet, running fig5 first")
        cmd_fig5(args)
    with open(path, encoding="utf-8") as handle:
        fig5 = json.load(handle)["rows"]
    rows = []
    for tbox in args.tboxes:
        a = analysis_for(tbox)
        rates = {c: 1.0 for c in common_named(a)}
        for tasks in args.tasks:
            plan = even(a, tasks=max(1, tasks // 2), stages=2, rates=rates)
            predicted = f"ltm-{plan.split[0]}"
            for engine in sorted({r["engine"] for r in fig5}):
                key = "throughput_tps" if engine == "spark" else "model_tps"
                cand = [r for r in fig5 if r["tbox"] == tbox and r["tasks"] == tasks and r["engine"] == engine]
                if not cand:
                    continue
                two_stage = [r for r in cand if r["plan"].startswith("ltm")]
                best = max(two_stage, key=lambda r: r[key])
                pred_row = next((r for r in cand if r["plan"] == predicted), None)
                ntm = next(r for r in cand if r["plan"] == "ntm")
                rows.append({"tbox": tbox, "tasks": tasks, "engine": engine, "predicted": predicted,
                             "predicted_split": list(plan.split), "predicted_costs": list(plan.costs),
                             "predicted_tps": pred_row[key] if pred_row else None,
                             "measured_best": best["plan"], "measured_best_tps": best[key],
                             "ntm_tps": ntm[key],
                             "predicted_over_best": (pred_row[key] / best[key]) if pred_row and best[key] else None})
    md = ("# The even balancer's predicted best two-stage split vs the measured best\n\n"
          "`even` (topology/balance.py) scores every contiguous two-stage split with its cost model (rate x "
          "(conjunction ops touched + forwarding), rate 1 per class stream) and picks the smallest maximum stage "
          "cost. Measured best = the fastest LTM-n in fig5 for the same budget.\n\n"
          + md_table(["TBox", "tasks", "engine", "predicted", "stage costs", "measured best", "predicted tuples/s",
                      "best tuples/s", "predicted / best"],
                     [[r["tbox"], r["tasks"], r["engine"], r["predicted"],
                       " / ".join(f"{c:.0f}" for c in r["predicted_costs"]), r["measured_best"],
                       r["predicted_tps"], r["measured_best_tps"],
                       f"{r['predicted_over_best']:.2f}" if r["predicted_over_best"] else "-"] for r in rows]))
    write_results("balancer", rows, {}, md, args.out)
    print(md)
    return {"rows": rows}


# --- rdflib baseline -----------------------------------------------------------------------------------------

def cmd_baseline(args) -> dict:
    from srtopo.experiments.rdflib_baseline import run_rdflib
    rows = []
    for tbox in args.tboxes:
        stream = get_stream(tbox, args)
        limit = args.baseline_time_points
        prefix = [t for t in stream.tuples if t.time < limit]
        planted = {k for k in stream.planted if k[1] < limit}
        result = run_rdflib(common.TBOXES[tbox], prefix, args.window, progress=progress,
                            budget_s=args.baseline_seconds)
        limit = result["time_points_done"]
        prefix = [t for t in prefix if t.time < limit]
        planted = {k for k in planted if k[1] < limit}
        check_same(f"baseline {tbox}", planted, result["report_keys"], "rdflib SPARQL per window")
        from srtopo.topology.compile import compile_ntm, ltm_n
        a = analysis_for(tbox)
        local = run_local(compile_ntm(a), prefix, args.window)
        check_same(f"baseline {tbox}", planted, local["report_keys"], "local ntm (prefix)")
        rows.append({"plan": "rdflib-sparql-per-window", "tbox": tbox, "tasks": 1, "engine": "rdflib",
                     "tuples": result["tuples"], "time_points": limit, "throughput_tps": result["throughput_tps"],
                     "latency_p50_s": result["latency_p50_s"], "latency_p95_s": result["latency_p95_s"],
                     "cached_tuples": result["cached_tuples"], "conjunction_ops": [], "reports": len(planted)})
        rows.append({"plan": "ntm", "tbox": tbox, "tasks": 1, "engine": "local", "tuples": len(prefix),
                     "time_points": limit, "throughput_tps": local["throughput_tps"],
                     "latency_p50_s": local["latency_p50_s"], "latency_p95_s": local["latency_p95_s"],
                     "cached_tuples": local["cached_tuples"], "conjunction_ops": compile_ntm(a).conjunction_counts,
                     "reports": len(planted)})
    fig5_best = {}
    for r in fig5_spark_rows(args.out):
        if r["throughput_tps"] > fig5_best.get(r["tbox"], {}).get("throughput_tps", 0):
            fig5_best[r["tbox"]] = r
    table = []
    for tbox in args.tboxes:
        rd = next(r for r in rows if r["tbox"] == tbox and r["engine"] == "rdflib")
        lo = next(r for r in rows if r["tbox"] == tbox and r["engine"] == "local")
        sp = fig5_best.get(tbox)
        rd["speedup_local_ntm"] = lo["throughput_tps"] / rd["throughput_tps"]
        if sp:
            rd["speedup_spark_best"] = sp["throughput_tps"] / rd["throughput_tps"]
            rd["spark_best_plan"] = f"{sp['plan']} ({sp['tasks']} tasks)"
        table.append([tbox, rd["tuples"], rd["throughput_tps"], lo["throughput_tps"], f"{rd['speedup_local_ntm']:.0f}x",
                      f"{sp['throughput_tps']:,.0f} ({sp['plan']}, {sp['tasks']} tasks)" if sp else "-",
                      f"{rd['speedup_spark_best']:.0f}x" if sp else "-"])
    md = ("# Baseline: re-check every window with rdflib (SPARQL over the window's graph plus the TBox)\n\n"
          f"Prefix of the fig5 stream: at most {args.baseline_time_points} time points or {args.baseline_seconds:.0f} s "
          f"of rdflib per TBox (whichever comes first), window {args.window}. "
          "The rdflib check gives exactly the planted reports (checked).\n\n"
          + md_table(["TBox", "tuples", "rdflib tuples/s", "local NTM tuples/s (same prefix)", "local / rdflib",
                      "best Spark (fig5, full stream)", "Spark / rdflib"], table))
    write_results("baseline", rows, {}, md, args.out)
    print(md)
    return {"rows": rows}


# --- all -------------------------------------------------------------------------------------------------------

def cmd_all(args) -> dict:
    timings = {}
    started = time.perf_counter()
    for name in ("tboxes", "uba", "fig5", "fig6", "fig6c", "balancer", "baseline"):
        t0 = time.perf_counter()
        log(f"=== {name}")
        COMMANDS[name](args)
        timings[name] = round(time.perf_counter() - t0, 1)
    total = round(time.perf_counter() - started, 1)
    md = ("# Full run\n\n" + md_table(["experiment", "seconds"], [[k, v] for k, v in timings.items()] +
                                      [["**total**", total]]) + "\n")
    write_results("run_all", [{"experiment": k, "seconds": v} for k, v in timings.items()] +
                  [{"experiment": "total", "seconds": total}], {"args": {k: v for k, v in vars(args).items()
                                                                         if k != "func"}}, md, args.out)
    print(md)
    return {"timings": timings, "total": total}


COMMANDS = {"tboxes": cmd_tboxes, "uba": cmd_uba, "fig5": cmd_fig5, "fig6": cmd_fig6, "fig6c": cmd_fig6c,
            "balancer": cmd_balancer, "baseline": cmd_baseline, "all": cmd_all}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.run_paper", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", choices=sorted(COMMANDS))
    parser.add_argument("--engine", choices=["local", "spark", "both"], default="both",
                        help="local reference runner, Spark, or both (default)")
    parser.add_argument("--spark-plan", default="staged", choices=["staged", "fused"],
                        help="Spark physical plan: one exchange per stage (staged, default) or fused")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--tboxes", default="lubm,npd", type=lambda s: [x for x in s.split(",") if x])
    parser.add_argument("--tasks", default="2,4,6", type=lambda s: [int(x) for x in s.split(",")],
                        help="task budgets (tasks in all; a two-stage plan gives half to each stage)")
    parser.add_argument("--stages", default="3,4,5", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--scale", type=float, default=1.0, help="stream length factor (1.0: ~100k tuples)")
    parser.add_argument("--violation", type=float, default=0.01, help="fraction of violating tuples")
    parser.add_argument("--window", type=int, default=10, help="window in time points")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--uba-per-time", type=int, default=100, help="UBA subjects per time point")
    parser.add_argument("--uba-violation", type=float, default=0.02, help="fraction of UBA subjects with a "
                        "planted disjoint type")
    parser.add_argument("--baseline-time-points", type=int, default=40,
                        help="prefix of the stream checked by the rdflib baseline")
    parser.add_argument("--baseline-seconds", type=float, default=90,
                        help="time budget of the rdflib baseline per TBox (stops at a time-point boundary)")
    parser.add_argument("--out", default=common.RESULTS, help="results directory")
    parser.add_argument("--work", default=None, help="scratch directory for stream files (default: a temp dir)")
    args = parser.parse_args(argv)
    own_work = args.work is None
    args.work = args.work or tempfile.mkdtemp(prefix="srtopo-exp-")
    os.makedirs(args.out, exist_ok=True)
    try:
        COMMANDS[args.experiment](args)
    except ExperimentError:
        raise
    finally:
        if own_work:
            shutil.rmtree(args.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
