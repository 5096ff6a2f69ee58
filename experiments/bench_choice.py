"""What the solver keeps between time points, measured as in "Managing caching strategies for stream reasoning
with reinforcement learning" (section 4): every strategy of the choice part on the same n-Queens Completion and
Partner Units streams, in one run. experiments/README.md, "What each benchmark measures", says how."""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from experiments.common import (
    arguments, chart, in_own_process, percentile, progress, splits, stats, write_csv, write_json)
from srtopo.measure import rss_mb

STRATEGIES = ("restart", "incremental", "forget", "forget-lemmas", "forget-signs", "forget-scores", "progress",
              "auto", "rl", "rl:lambda=1")


def stream_of(problem: str, size: int, steps: int, seed: int, alpha: float | None):
    """(program text, log lines, per step a function that lists what is wrong with an answer's atoms)."""
    from experiments.reconfig import pup, queens
    if problem == "qc":
        given = queens.qc_stream(size, steps=steps, seed=seed, alpha=alpha or 1.35)
        checks = [lambda atoms, g=g: queens.check(size, g, _pairs(atoms, "queen")) for g in given]
        return queens.program(size), queens.log_lines(given), checks
    instance = pup.double_instance(size)
    off = pup.pup_stream(size, steps=steps, seed=seed, alpha=alpha or 2.2)
    checks = [lambda atoms, o=o: pup.check(instance, o, _pairs(atoms, "zone2unit"), _pairs(atoms, "sensor2unit"))
              for o in off]
    return pup.program(size), pup.log_lines(off), checks


def _pairs(atoms, name: str) -> set:
    return {tuple(a.arguments[i].number for i in range(len(a.arguments))) for a in atoms if a.name == name}


def run_strategy(program: str, lines: list[str], checks, strategy: str, budget: float | None = None) -> dict:
    """One strategy over the stream in this process: per-step seconds, validity, satisfiability."""
    from srtopo.rules.evaluate import Reasoner
    from srtopo.rules.parse import parse_program
    from srtopo.rules.log import line_kind, parse_line
    reasoner = Reasoner(parse_program(program, "bench.lp"), strategy=strategy)
    points = [parse_line(line, line_kind(line, "log"))[3] for line in lines]
    seconds, verdicts, invalid = [], [], 0
    rss_at: dict = {}
    started = time.perf_counter()
    solver = reasoner.subprograms[-1].solver
    for step, atoms in enumerate(points):
        t0 = time.perf_counter()
        result = reasoner.step(atoms)
        seconds.append(time.perf_counter() - t0)
        verdicts.append(result.satisfiable)
        if result.satisfiable and checks is not None and checks[step](result.atoms):
            invalid += 1
        if step + 1 in (1000, len(points)):
            rss_at[step + 1] = _rss(solver)
        if budget is not None and time.perf_counter() - started > budget:
            break
    stats = solver.stats
    row = {"strategy": strategy, "steps": len(seconds), "seconds": seconds, "satisfiable": verdicts,
           "invalid": invalid, "ground_s": round(stats.get("ground_s", 0.0), 4),
           "search_s": round(stats.get("search_s", 0.0), 4), "groundings": stats.get("groundings", 0),
           "rss_mb": _rss(solver), "rss_at": rss_at}
    if "incumbent" in stats:
        row["incumbent"], row["pulls"] = stats["incumbent"], stats["pulls"]
    if hasattr(solver, "close"):
        solver.close()
    return row


def _rss(solver) -> float | None:
    """This process's RSS, plus the probe process's for ``auto`` (part of what it costs)."""
    own, pid = rss_mb(), getattr(solver, "probe_pid", None)
    probe = rss_mb(pid) if pid else None
    return own if own is None or probe is None else round(own + probe, 1)


def summary(row: dict) -> dict:
    return stats(row["seconds"], "{}_ms", ("median", "p95", "max", "mean"), scale=1000, digits=3)


def families(rows: list[dict]) -> list[dict]:
    """Per problem, the best fixed strategy over the family's sizes, and ``auto`` against it: each strategy's
    geometric mean over the sizes of its median step time (every size counts alike, however slow), over the
    sizes where every strategy ran."""
    out = []
    for problem in sorted({r["problem"] for r in rows}):
        mine = [r for r in rows if r["problem"] == problem]
        strategies = sorted({r["strategy"] for r in mine})
        sizes = [n for n in sorted({r["size"] for r in mine})
                 if all(any(r["size"] == n and r["strategy"] == s for r in mine) for s in strategies)]
        if "auto" not in strategies or len(strategies) < 2 or not sizes:
            continue
        mean = {s: math.exp(sum(math.log(max(r["median_ms"], 1e-6)) for r in mine
                                if r["strategy"] == s and r["size"] in sizes) / len(sizes)) for s in strategies}
        best = min((s for s in strategies if s != "auto"), key=mean.get)
        out.append({"problem": problem, "sizes": sizes, "best": best, "best_geomean_ms": round(mean[best], 3),
                    "auto_geomean_ms": round(mean["auto"], 3),
                    "auto_over_best": round(mean["auto"] / mean[best], 3),
                    "geomean_ms": {s: round(v, 3) for s, v in mean.items()}})
    return out


def long_stream(problem: str, size: int, steps: int, seed: int, strategy: str) -> dict:
    """A long stream in a process of its own: its RSS is the strategy's alone."""
    program, lines, _checks = stream_of(problem, size, steps, seed, None)
    row = run_strategy(program, lines, None, strategy)
    return {k: v for k, v in row.items() if k not in ("seconds", "satisfiable")} | summary(row)


def main(argv=None) -> int:
    args = arguments(
        __doc__, qc=("14,18,22,26,30", "board sizes ('' for none)"), pup=("6,8,10,12", "row lengths ('' for none)"),
        steps=256, seed=1, strategies=",".join(STRATEGIES),
        budget=(120.0, "seconds per strategy and instance at most"),
        long_steps=(0, "also RSS over a stream this long (QC n=14)"),
        quick=(False, "QC 8 and 12, PUP 4, 32 steps"), out="bench_choice.json").parse_args(argv)
    if args.quick:
        args.qc, args.pup, args.steps = "8,12", "4", 32
    strategies = splits(args.strategies)
    jobs = [("qc", n) for n in splits(args.qc, int)] + [("pup", n) for n in splits(args.pup, int)]
    rows, failures = [], []
    for problem, size in progress(jobs, desc="instances"):
        program, lines, checks = stream_of(problem, size, args.steps, args.seed, None)
        results = [run_strategy(program, lines, checks, s, args.budget) for s in strategies]
        common = min(r["steps"] for r in results)
        base = next((r for r in results if r["strategy"] == "restart"), None)
        for r in results:
            if r["invalid"]:
                failures.append(f"{problem} {size} {r['strategy']}: {r['invalid']} invalid answers")
            if r["satisfiable"][:common] != results[0]["satisfiable"][:common]:
                failures.append(f"{problem} {size} {r['strategy']}: satisfiability differs from "
                                f"{results[0]['strategy']}")
            row = {"problem": problem, "size": size, **{k: v for k, v in r.items() if k != "satisfiable"},
                   **summary(r), "unsatisfiable_steps": r["satisfiable"].count(False)}
            if base is not None:
                b, mine = base["seconds"][:common], r["seconds"][:common]
                row["restart_over_this_median"] = round(percentile(b, 0.5) / max(percentile(mine, 0.5), 1e-9), 2)
            rows.append(row)
            print(f"{problem} {size:3} {r['strategy']:14} median {row['median_ms']:8.2f} ms  p95 "
                  f"{row['p95_ms']:8.2f} ms  x{row.get('restart_over_this_median', 0):7.2f}  steps {r['steps']}",
                  file=sys.stderr)
    family_rows = families(rows)
    for f in family_rows:
        print(f"{f['problem']}: best fixed strategy {f['best']} (geometric mean of medians "
              f"{f['best_geomean_ms']} ms), auto {f['auto_geomean_ms']} ms: auto / best {f['auto_over_best']}",
              file=sys.stderr)
    long_rows = [in_own_process(long_stream, problem="qc", size=14, steps=args.long_steps, seed=args.seed,
                                strategy=strategy)
                 for strategy in (progress(strategies, desc=f"{args.long_steps} steps") if args.long_steps else [])]
    out = Path(args.out)
    write_json(out, {"args": vars(args), "families": family_rows, "long": long_rows, "failures": failures,
                     "rows": [r | {"seconds": [round(x, 5) for x in r["seconds"]]} for r in rows]})
    write_csv(out.with_suffix(".csv"), rows, ["problem", "size", "strategy", "steps", "median_ms", "p95_ms", "max_ms",
                                              "mean_ms", "restart_over_this_median", "ground_s", "search_s",
                                              "groundings", "unsatisfiable_steps", "rss_mb"])
    _plot(rows, out.with_suffix(".png"))
    for line in failures:
        print("FAILED: " + line, file=sys.stderr)
    return 1 if failures else 0


def _plot(rows: list[dict], path: Path) -> None:
    groups = sorted({(r["problem"], r["size"]) for r in rows})
    if not groups:
        return
    with chart(path, 1, len(groups), size=(3.2 * len(groups), 4), dpi=110) as (_fig, axes):
        for ax, (problem, size) in zip(axes[0], groups):
            mine = [r for r in rows if (r["problem"], r["size"]) == (problem, size)]
            ax.boxplot([[1000 * s for s in r["seconds"]] for r in mine], showfliers=True)
            ax.set_xticks(range(1, len(mine) + 1), [r["strategy"] for r in mine], rotation=60, fontsize=7)
            ax.set(yscale="log", ylabel="step latency (ms)")
            ax.set_title(f"{problem.upper()} {size}", fontsize=9)


if __name__ == "__main__":
    raise SystemExit(main())
