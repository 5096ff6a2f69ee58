"""Reproduce section 5 of "Distributed Stream Consistency Checking" on every runner: the experiments of
``experiments/figures`` in order (``all``) or one and what it depends on; every topology on every runner must give
the (subject, time) reports the generator planted. experiments/README.md, "Commands", lists them."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

from experiments.common import Row, arguments, log, md_table, splits, write_results
from experiments.context import ENGINES, Context
from experiments.figures import BY_NAME, FIGURES
from srtopo.errors import SrtopoError


#: what ``all`` runs after fig5 (cost_model and the rdflib baseline) takes ~1.2 min on two cores
AFTER_FIG5_SECONDS = 90.0


def run_one(module, ctx: Context) -> list[Row]:
    """Run an experiment (its dependencies first when neither this run nor the results directory has them)."""
    for name in module.DEPENDS:
        try:
            ctx.dependency(name)
        except KeyError:
            log(f"{module.NAME}: no {name} results yet, running {name} first")
            run_one(BY_NAME[name], ctx)
    log(f"=== {module.NAME}")
    rows = module.run(ctx)
    ctx.rows[module.NAME] = rows
    markdown = module.table(rows, ctx)
    meta = {"params": {k: v for k, v in vars(ctx.args).items() if k not in ("work",)}}
    write_results(module.NAME, rows, meta, markdown, ctx.out, plain=getattr(module, "rows_json", None))
    if module.plot is not None:
        module.plot(rows, os.path.join(ctx.out, module.NAME + ".png"))
    print(markdown)
    return rows


def run_all(ctx: Context) -> None:
    timings = {}
    started = time.perf_counter()
    for module in FIGURES:
        t0 = time.perf_counter()
        run_one(module, ctx)
        timings[module.NAME] = round(time.perf_counter() - t0, 1)
    total = round(time.perf_counter() - started, 1)
    rows = [Row("run_all", detail={"name": k, "seconds": v}) for k, v in timings.items()]
    rows.append(Row("run_all", detail={"name": "total", "seconds": total}))
    md = ("# Full run\n\n" + md_table(["experiment", "seconds"], [[k, v] for k, v in timings.items()]
                                      + [["**total**", total]]) + "\n")
    write_results("run_all", rows, {}, md, ctx.out)
    print(md)


def _engines(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in names if x not in ENGINES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown engine(s) {', '.join(unknown) or '(none)'}; use "
                                         + ", ".join(ENGINES))
    return names


def _ints(text: str) -> list[int]:
    return splits(text, int)


def _per_tbox(text: str) -> dict[str, int]:
    try:
        return {k.strip(): int(v) for k, v in (part.split("=") for part in text.split(",") if part.strip())}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give tbox=count pairs, e.g. lubm=50000,npd=10000") from None


def parser() -> argparse.ArgumentParser:
    p = arguments(
        __doc__, master="local[2]",
        spark_tuples=(2_000_000, "fig5's stream length on Spark, per TBox"),
        spark_batch_tuples=(500_000, "fig5's micro-batch size on Spark"),
        spark_file_tuples=(50_000, "tuples per stream file (one task reads a file)"),
        spark_rounds=(4, "fig5 on spark: rounds of runs at most; after the first, the --spark-contenders fastest plans "
                         "of each budget and the default balancer's pick run again, one after the other, and a plan's "
                         "figure at a budget is the median of its runs in that budget's turns"),
        minutes=(45.0, "the run's time budget: fig5's rounds after the first on spark (run last) are not started when "
                       "they would end after it, less a reserve for the experiments after fig5 (0: no budget)"),
        spark_contenders=(2, "plans per budget run again in each round"),
        scale=(1.0, "stream length factor (1.0: ~100k tuples)"), violation=(0.01, "fraction of violating tuples"),
        window=(10, "window in time points"), seed=1, uba_per_time=(100, "UBA subjects per time point"),
        uba_violation=(0.02, "fraction of UBA subjects with a planted disjoint type"),
        baseline_time_points=(40, "prefix of the stream checked by the rdflib baseline"),
        baseline_seconds=(15.0, "time budget of the rdflib baseline per TBox (stops at a time-point boundary)"),
        cost_calibration=(None, "cost_model: read the cost constants from this calibration file (default: calibrate "
                                "first)"),
        out=(".", "results directory"), work=(None, "scratch directory for stream files (default: a temp dir)"),
        engines=(",".join(ENGINES), "comma-separated, default all: local (the reference runner, indexed plan), "
                 "operators (the local runner evaluating every conjunction op, as the paper's bolts; fig5 only), spark "
                 "(on --master), standalone (Spark on a standalone cluster of two one-core workers started here; fig5 "
                 "only)", _engines),
        spark_plan=("staged", "Spark's physical plan: one exchange per stage (staged, default: honours each stage's "
                              "tasks) or fused", ["staged", "fused"]),
        operators_tuples=("lubm=50000,npd=10000", "fig5's stream length for the operators plan, per TBox", _per_tbox),
        tboxes=("lubm,npd", None, splits),
        tasks=("2,4,6", "task budgets (tasks in all; a two-stage plan gives half to each stage)", _ints),
        stages=("3,4,5", None, _ints))
    p.prog = "python -m experiments.run_paper"
    p.add_argument("experiment", choices=sorted(BY_NAME) + ["all"])
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    own_work = args.work is None
    work = args.work or tempfile.mkdtemp(prefix="srtopo-exp-")
    os.makedirs(args.out, exist_ok=True)
    ctx = Context(args, work)
    if args.minutes > 0:
        after = AFTER_FIG5_SECONDS if args.experiment == "all" else 0.0
        ctx.deadline = time.monotonic() + 60 * args.minutes - after
    try:
        if args.experiment == "all":
            run_all(ctx)
        else:
            run_one(BY_NAME[args.experiment], ctx)
    except SrtopoError as error:
        print(f"srtopo: error: {error}", file=sys.stderr)
        return 1
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
