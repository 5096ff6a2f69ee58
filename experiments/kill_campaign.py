"""Exactly-once under kill -9: the Spark CLI killed at seeded random points and restarted, many times.
experiments/README.md, "What each benchmark measures", says how."""
from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from experiments.campaign import (
    SPARK_ONCE, Run, canonical, chosen, output_lines, reports_dir, times_in_batch_order, wait_until)
from experiments.common import (
    EXAMPLES, LUBM_TBOX, arguments, log, out_batches, program, progress, srtopo, write_json, write_parts)
from experiments.reconfig import queens
from experiments.reconfig.validate import committed, validate
from experiments.streams import UB
from srtopo.concepts import RDF_TYPE
from srtopo.io.tnt import format_tnt, write_tnt

FILES = 6
TEX_TBOX = EXAMPLES / "tex.ttl"
PROGRAM = program("sensors-window.idlvsr")
#: readings of sensors and each sensor's limit, on streams of their own
STREAMLOG = program("sensors-limits.sl")
#: the chain's program: students taking two courses within 5 time points, professors advising two students
CHAIN_PROGRAM = program("university.idlvsr", window=5)
#: the choice kind's n-Queens Completion stream: board size, time points, the strategies trials alternate
CHOICE_N, CHOICE_POINTS, CHOICE_STRATEGIES = 10, 48, ("incremental", "rl")


def _consistency_input(folder: Path, rng: random.Random) -> list[str]:
    from srtopo.consistency.owl import load_tbox
    classes = sorted(load_tbox(str(TEX_TBOX)).concepts)
    n = 60_000
    write_tnt(str(folder / "in"), ((i // 50, f"http://ex.org/data/s{rng.randrange(3000)}", RDF_TYPE,
                                    rng.choice(classes)) for i in range(n)), per_file=n // FILES)
    return ["check", "--tbox", str(TEX_TBOX), "--stream", str(folder / "in"), "--window", "10", "--lateness", "0",
            "--shuffle-partitions", "2"]


def _reason_input(folder: Path, name: str, text: str, lines: list[str], *flags: str) -> list[str]:
    """``reason`` of the program ``text`` (written to ``name``) over ``lines`` in FILES files."""
    (folder / name).write_text(text, encoding="utf-8")
    write_tnt(str(folder / "in"), lines, per_file=-(-len(lines) // FILES))
    return ["reason", "--program", str(folder / name), "--stream", str(folder / "in"), "--partitions", "2", *flags]


def sensor_lines(rng: random.Random, points: int) -> list[str]:
    """Log lines for PROGRAM: 12 sensors, each read at a time point with probability 0.7; a time point with no
    reading has no line half of the time (an empty time point)."""
    lines = []
    for t in range(points):
        atoms = [f"temp(s{s},{rng.randint(15, 32)})" for s in range(12) if rng.random() < 0.7]
        if atoms or rng.random() < 0.5:
            lines.append(f"{1000 + t} " + "; ".join(atoms))
    return lines


def _streamlog_input(folder: Path, rng: random.Random) -> list[str]:
    """Both streams cut at the same timestamps, so that each micro-batch completes a sixth of the timeline."""
    (folder / "p.sl").write_text(STREAMLOG, encoding="utf-8")
    points = 240
    readings, limits = [[] for _ in range(FILES)], [[] for _ in range(FILES)]
    limits[0] = [f"limit(0,s{s},{rng.randint(40, 70)})." for s in range(10)]
    for t in range(1, points + 1):
        k = (t - 1) * FILES // points
        readings[k] += [f"reading({t},s{s},{t // 4 + rng.randint(0, 60)})." for s in range(10) if rng.random() < 0.4]
        if rng.random() < 0.2:
            limits[k].append(f"limit({t},s{rng.randrange(10)},{t // 4 + rng.randint(30, 70)}).")
    write_parts(folder / "readings", readings)
    write_parts(folder / "limits", limits)
    return ["streamlog", "--program", str(folder / "p.sl"), "--stream", str(folder / "readings"),
            "--also-stream", str(folder / "limits")]


def choice_lines(rng: random.Random) -> list[str]:
    """A QC stream's log lines with 4 time points replaced by two given queens on a diagonal (no completion)."""
    lines = queens.log_lines(queens.qc_stream(CHOICE_N, steps=CHOICE_POINTS, seed=rng.randrange(1000)))
    for t in rng.sample(range(1, CHOICE_POINTS), 4):
        lines[t] = f"{t} given(1,1); given(2,2)"
    return lines


def _choice_input(folder: Path, rng: random.Random) -> list[str]:
    lines = choice_lines(rng)
    (folder / "stream.log").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return _reason_input(folder, "qc.lp", queens.program(CHOICE_N), lines)


def university_lines(rng: random.Random, points: int) -> list[str]:
    """.tnt lines of students (typed by their subclass), their courses and advisors (typed only by the advisor
    statement's range), teachers of courses; now and then an individual typed into a class disjoint with
    another of its classes at that time point (a report: its statements there are withheld)."""
    data = "http://ex.org/u/"
    lines = []
    for t in range(points):
        for _ in range(8):
            s = f"{data}student{rng.randrange(150)}"
            lines.append(format_tnt(t, s, RDF_TYPE, UB + rng.choice(["UndergraduateStudent", "GraduateStudent"])))
            for _ in range(rng.randint(0, 2)):
                lines.append(format_tnt(t, s, UB + "takesCourse", f"{data}course{rng.randrange(20)}"))
            if rng.random() < 0.5:
                lines.append(format_tnt(t, s, UB + "advisor", f"{data}prof{rng.randrange(10)}"))
            if rng.random() < 0.01:
                lines.append(format_tnt(t, s, RDF_TYPE, UB + rng.choice(["Course", "Publication"])))
        if rng.random() < 0.3:
            lines.append(format_tnt(t, f"{data}prof{rng.randrange(10)}", UB + "teacherOf",
                                    f"{data}course{rng.randrange(20)}"))
    return lines


def _chain_input(folder: Path, rng: random.Random, points: int = 240) -> list[str]:
    return _reason_input(folder, "p.idlvsr", CHAIN_PROGRAM, university_lines(rng, points),
                         "--tbox", LUBM_TBOX, "--window", "5", "--lateness", "0")


INPUTS = {"consistency": _consistency_input,
          # the consistency input on the columnar plan, every micro-batch read and closed in executor tasks
          "consistency-executors": lambda folder, rng: [*_consistency_input(folder, rng), "--physical-plan",
                                                        "columnar", "--driver-tuples", "0"],
          "rules": lambda folder, rng: _reason_input(folder, "p.idlvsr", PROGRAM, sensor_lines(rng, 210)),
          "streamlog": _streamlog_input, "choice": _choice_input, "chain": _chain_input}


def _command(base: list[str], checkpoint: Path, out: Path) -> list[str]:
    """The arguments of ``srtopo`` for a run of ``base`` on Spark, a file per micro-batch, with a checkpoint (a
    chain's reports to ``reports_dir(out)``)."""
    extra = ["--reports-out", str(reports_dir(out))] if "--tbox" in base and base[0] == "reason" else []
    return [*base, *SPARK_ONCE, "--checkpoint", str(checkpoint), "--out", str(out), *extra]


def _store_entries(checkpoint: Path) -> int:
    store = checkpoint / "store"
    return max((int(x) for x in os.listdir(store) if x.isdigit()), default=-1) if store.is_dir() else -1


def _sorted_rows(rows):
    return None if rows is None else sorted(json.dumps(r, sort_keys=True) for r in rows)


def trial(base: list[str], folder: Path, rng: random.Random) -> dict:
    """One kill at a random point, a restart to the end; what was killed when, the final output (compared by
    the caller) and the answers of the batches committed before the restart, then and after it."""
    checkpoint, out = folder / "ck", folder / "out"
    for directory in (checkpoint, out, reports_dir(out)):
        shutil.rmtree(directory, ignore_errors=True)
    after, delay = rng.randint(0, FILES - 2), round(rng.uniform(0.0, 1.0), 2)
    run = Run(_command(base, checkpoint, out))
    try:
        wait_until(lambda: _store_entries(checkpoint) >= after, 600, every=0.02, proc=run.proc)
        time.sleep(delay)
        finished_first = run.proc.poll() is not None
    finally:
        run.kill()
    killed_at = _store_entries(checkpoint)
    before_batches = committed(str(checkpoint))
    written = out_batches(str(out))
    before = {b: _sorted_rows(written.get(b)) for b in before_batches}
    srtopo(_command(base, checkpoint, out))
    written = out_batches(str(out))
    changed = [b for b in before_batches if before[b] is None or _sorted_rows(written.get(b)) != before[b]]
    return {"after_batches": after, "delay_s": delay, "store_entry_at_kill": killed_at,
            "ended_before_kill": finished_first, "committed_at_kill": len(before_batches),
            "committed_changed": changed, "output": output_lines(out),
            "answers": [row for rows in written.values() for row in rows]}


def _against_reference(kind: str, base: list[str], folder: Path) -> tuple[dict, object, object]:
    """What every kind but choice is judged by: one uninterrupted run's output (for streamlog and chain, also
    compared with the local runner's). (summary fields, judge(row, i) of a trial, its tally over the rows)."""
    srtopo(_command(base, folder / "ref-ck", folder / "ref"))
    reference = output_lines(folder / "ref")
    extra = {"reference_lines": sum(reference.values())}
    if kind == "streamlog":
        ordered = times_in_batch_order(folder / "ref")
        extra["reference_in_time_order"] = ordered == sorted(set(ordered))
        extra["reference_equals_local"] = canonical(srtopo(base).stdout.splitlines()) == canonical(reference.elements())
    if kind == "chain":     # the models and the reports of the local runner, with the same flags
        local = folder / "local-reports.jsonl"
        at = base.index("--partitions")     # a Spark flag
        models = canonical(srtopo([*base[:at], *base[at + 2:], "--reports-out", str(local)]).stdout.splitlines())
        # a report's NI and evidence may differ between runners: reports compared by (subject, time)
        by_subject = lambda lines: Counter((r["subject"], r["time"]) for r in map(json.loads, lines))  # noqa: E731
        reports = by_subject(local.read_text(encoding="utf-8").splitlines())
        spark_models = canonical(x for x in reference.elements() if not x.startswith("report "))
        spark_reports = by_subject(x[len("report "):] for x in reference.elements() if x.startswith("report "))
        extra["reference_equals_local"] = spark_models == models and spark_reports == reports
        extra["reference_reports"] = sum(spark_reports.values())

    def judge(row: dict, _i: int) -> None:
        row.pop("answers")
        row["identical"] = row.pop("output") == reference
        if kind == "streamlog":       # each model once, in time order, over the batches of both runs
            times = times_in_batch_order(folder / "out")
            row["in_time_order"] = times == sorted(set(times))
            row["identical"] = row["identical"] and row["in_time_order"]
    return extra, judge, lambda rows: {"identical": sum(r["identical"] for r in rows)}


def _validated(_kind: str, base: list[str], folder: Path) -> tuple[dict, object, object]:
    """The choice kind: no reference run (a restarted solver may pick other valid answers); each trial's final
    output validated, and the batches committed before the kill compared across the restart."""
    lines = (folder / "stream.log").read_text(encoding="utf-8").splitlines()
    extra = {"time_points": len(lines), "unsatisfiable_points": sum(1 for x in lines if "given(1,1); given(2,2)" in x),
             "reference_lines": len(lines)}

    def judge(row: dict, i: int) -> None:
        row.pop("output")
        problems = validate("qc", CHOICE_N, lines, row.pop("answers"))
        row.update(problems=problems[:10], passed=not problems and not row["committed_changed"],
                   load=list(os.getloadavg()))
        log(f"trial {i} ({row['strategy']}): killed at store entry {row['store_entry_at_kill']}, "
            f"{row['committed_at_kill']} batches committed, changed {row['committed_changed']}, "
            f"{len(problems)} problems {problems[:3]}")

    def tally(rows: list[dict]) -> dict:
        passed = sum(r["passed"] for r in rows)
        return {"passed": passed, "identical": passed,
                "committed_batches_compared": sum(r["committed_at_kill"] for r in rows)}
    return extra, judge, tally


def campaign(kind: str, trials: int, seed: int, save=None) -> dict:
    """``trials`` kills and restarts of ``kind`` (choice: ``CHOICE_STRATEGIES`` in turn); ``save``, if given,
    receives the campaign so far after each trial (a long campaign's results survive its own interruption)."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix=f"srtopo-kill-{kind}-") as tmp:
        folder = Path(tmp)
        base = INPUTS[kind](folder, random.Random(seed + 1))
        started = time.perf_counter()
        extra, judge, tally = (_validated if kind == "choice" else _against_reference)(kind, base, folder)
        rows: list[dict] = []

        def summary() -> dict:
            return {"kind": kind, "trials": len(rows), "planned": trials, **tally(rows), **extra,
                    "seconds": round(time.perf_counter() - started, 1), "rows": rows}
        for i in progress(range(trials), desc=f"kill -9 ({kind})"):
            strategy = CHOICE_STRATEGIES[i % len(CHOICE_STRATEGIES)] if kind == "choice" else None
            row = trial([*base, "--strategy", strategy] if strategy else base, folder, rng)
            if strategy:
                row["strategy"] = strategy
            judge(row, i)
            rows.append(row)
            if save is not None:
                save(summary())
        return summary()


def summary_row(r: dict) -> tuple[str, str, int, str, bool]:
    """A campaign's line of RELIABILITY.md: (test, what was tried, trials, outcome, whether it passed)."""
    n, kind = r["trials"], r["kind"]
    within = sum(1 for x in r["rows"] if not x["ended_before_kill"])
    tried = f"seeded random points ({within} of {n} before the run ended"
    tried += f"; {n} of {r['planned']} planned trials run)" if r.get("planned", n) != n else ")"
    if kind == "choice":
        k = r["committed_batches_compared"]
        return (f"kill -9 and restart, a choice part on Spark (n-Queens Completion, "
                f"{' and '.join(CHOICE_STRATEGIES)} in turn)", tried, n,
                f"{r['passed']}/{n} final outputs answer each of the {r['time_points']} time points once, every "
                f"answer valid by queens.check and the {r['unsatisfiable_points']} without one confirmed by a "
                f"fresh clingo; the answers of the {k} batch{'es' if k != 1 else ''} committed before the kills "
                f"unchanged after the restarts", r["passed"] == n and n > 0)
    outcome = (f"{r['identical']}/{n} final outputs identical to the uninterrupted run's "
               f"({r['reference_lines']:,} lines)")
    ok = r["identical"] == n
    local = "equals" if r.get("reference_equals_local") else "DIFFERS from"
    if kind == "chain":
        tried += ", the LUBM DL-Lite TBox and a program over students, courses and advisors"
        outcome = (f"{r['identical']}/{n} final outputs, models and reports, identical to the uninterrupted "
                   f"run's ({r['reference_lines']:,} lines, {r['reference_reports']:,} of them reports); the "
                   f"uninterrupted run {local} the local runner's (reports by subject and time)")
        ok = ok and r["reference_equals_local"]
    elif "reference_equals_local" in r:
        tried += ", a per-sensor program over two streams"
        outcome += (f", each model once and in time order over the batches; the uninterrupted run {local} the "
                    "local runner's")
        ok = ok and r["reference_equals_local"] and r["reference_in_time_order"]
    return f"kill -9 and restart, {kind} on Spark", tried, n, outcome, ok


def main(argv=None) -> int:
    parser = arguments(__doc__, trials=20, kinds=",".join(INPUTS), seed=20, out="kill_campaign.json")
    args = parser.parse_args(argv)
    results: list[dict] = []
    for kind in chosen(parser, args.kinds, INPUTS, "kind"):
        results.append(campaign(kind, args.trials, args.seed, save=lambda partial: write_json(
            args.out, {"seed": args.seed, "campaigns": results + [partial]})))
    write_json(args.out, {"seed": args.seed, "campaigns": results})
    rows = [summary_row(r) for r in results]
    for r, (test, _tried, _n, outcome, ok) in zip(results, rows):
        log(f"{'ok  ' if ok else 'FAIL'} {test}: {outcome} ({r['seconds']} s)")
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
