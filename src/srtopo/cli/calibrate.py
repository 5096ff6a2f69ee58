"""``srtopo calibrate``: measure the cost model's constants on this machine (``srtopo.calibration``)."""
from __future__ import annotations

import sys

from srtopo import interrupt


def register(subparsers, parents=()) -> None:
    from srtopo.calibration import TARGET_KEYS, Settings
    from srtopo.consistency.cost import calibration_path
    defaults = Settings()
    parser = subparsers.add_parser(
        "calibrate", help="measure the cost balancer's constants on this machine (a short run per runner and plan)",
        description=__doc__.splitlines()[0] + f" Writes {calibration_path()} (or $SRTOPO_CALIBRATION); "
                    "compile and check then plan with it.", allow_abbrev=False, parents=list(parents))
    parser.add_argument("--engines", default="local",
                        help="the runners and plans to calibrate, comma-separated: local, spark, all, or any of "
                             + ", ".join(TARGET_KEYS)
                             + " (default local: ~10 s; spark: ~3 min for both plans on 2 cores)")
    parser.add_argument("--tbox", default=None, help="calibrate on this TBox (default: the bundled LUBM DL-Lite TBox)")
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    parser.add_argument("--local-tuples", type=int, default=defaults.local_tuples)
    parser.add_argument("--operators-tuples", type=int, default=defaults.operators_tuples)
    parser.add_argument("--spark-tuples", type=int, default=defaults.spark_tuples)
    parser.add_argument("--out", default=None, help="the calibration file (default: where the balancer reads)")
    parser.add_argument("--dry-run", action="store_true", help="measure and print, write nothing")
    parser.set_defaults(handler=run)


def target_keys(text: str) -> tuple[str, ...]:
    from srtopo.calibration import TARGET_KEYS
    from srtopo.errors import UsageError
    keys: list[str] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part == "all":
            keys += TARGET_KEYS
        elif part in ("local", "spark"):
            keys += [k for k in TARGET_KEYS if k.startswith(part + "/")]
        elif part in TARGET_KEYS:
            keys.append(part)
        else:
            raise UsageError(f"--engines: no cost model named {part!r}",
                             hint="use local, spark, all or " + ", ".join(TARGET_KEYS))
    return tuple(dict.fromkeys(keys))


def run(args) -> int:
    from srtopo.calibration import Settings, calibrate, save
    settings = Settings(targets=target_keys(args.engines), tbox=args.tbox, master=args.master,
                        local_tuples=args.local_tuples, operators_tuples=args.operators_tuples,
                        spark_tuples=args.spark_tuples, progress=lambda line: print(line, file=sys.stderr, flush=True))
    try:
        result = calibrate(settings)
    except interrupt.Interrupted as stop:
        stop.note = "the calibration was not written (it is written whole at the end); run srtopo calibrate again"
        raise
    print(f"{'runner':16} {'plan':12} {'measured tuples/s':>18} {'predicted':>12}")
    for row in result.runs:
        print(f"{row['engine']:16} {row['plan']:12} {row['measured_tuples_s'] or 0:>18,.0f} "
              f"{row.get('predicted_tuples_s') or 0:>12,.0f}")
    from srtopo.consistency.cost import Target, batched
    for key, c in result.coefficients.items():
        loads = ", ".join(f"{k} {v:.3g} s" for k, v in c.per_load.items())
        extra = "" if not batched(Target(*key.split("/"))) else (
            f"; per tuple {c.per_tuple:.3g} s, per batch {c.per_batch:.3g} s, per exchange {c.per_exchange:.3g} s, "
            f"per task {c.per_task:.3g} s")
        print(f"{key}: {loads}{extra}")
    if not args.dry_run:
        print(f"srtopo: wrote {save(result, args.out)} ({result.seconds:.0f} s)", file=sys.stderr)
    return 0
