"""Every reliability figure in one table: writes RELIABILITY.md and results/reliability.json.
experiments/README.md, "What each benchmark measures", lists its sections."""
from __future__ import annotations

import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from experiments import full_disk, fuzz, hostile, interrupt_campaign, kill_campaign
from experiments.campaign import chosen
from experiments.common import RESULTS, ROOT, arguments, md_table, progress, read_json, write_json
from srtopo.consistency.compile import compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.consistency.tbox import TBox
from srtopo.errors import TopologyError
from srtopo.io.tnt import format_tnt
from srtopo.rules.compile import compile_program
from srtopo.rules.parse import parse_program
from srtopo.runners import LocalOptions, SparkOptions, get_runner
from srtopo.testing import lines, run_topology

SECTIONS = ("fuzz", "hostile", "checkpoint", "disk", "kill", "kill-choice", "interrupt", "overload", "memory")


def _row(area: str, test: str, tried: str, count, outcome: str, ok: bool) -> dict:
    return {"area": area, "test": test, "tried": tried, "count": count, "outcome": outcome, "ok": ok}


def fuzz_rows(examples: int) -> list[dict]:
    rows = []
    for target in progress(fuzz.TARGETS, desc="fuzz"):
        r = fuzz.fuzz(target, examples, seed=0, raise_failure=False)
        got = ", ".join(f"{r[k]:,} {k}" for k in ("records", "rejected", "values", "errors") if k in r)
        rows.append(_row("fuzz", target, "grammar pieces, arbitrary text and bytes, mutated real files",
                         r["examples"], r["failure"] or f"no unhandled exception, no hang ({got})",
                         r["failure"] is None))
    return rows


def _spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from srtopo.runners.spark.session import get_session
    return get_session(master="local[2]", app_name="srtopo-reliability", shuffle_partitions=2)


def _hostile_row(test: str, tried: str, got: dict, outputs: str) -> dict:
    """The row of one hostile case: ``outputs`` what the clean run gave, against which the hostile run is judged."""
    ok = got["identical"] and got["rejected"] == got["hostile"] and got["rejected_at_the_hostile_lines"]
    missed = "" if ok else f"; missed {got['missed']}"
    return _row("hostile lines", test, f"{tried} + {got['hostile']} hostile lines of {got['kinds']} kinds",
                got["hostile"], f"{got['what']} {'identical to' if got['identical'] else 'DIFFER from'} {outputs}; "
                f"{got['rejected']} rejected records, one per hostile line{missed}", ok)


#: hostile cases run on both runners, which must reject alike: (test, the case on one runner, its stream, what the
#: clean run gave, what the runners reject alike: (what, where))
HOSTILE_ON_BOTH = [
    ("rules (ICLP 2021 Content Caching log)", hostile.rules_case, "60 time points", "the clean log's",
     ("rules", "the same hostile log")),
    ("Streamlog (examples/sensors.sl)", partial(hostile.streamlog_case, facts=4000, count=400), "4,000 fact lines",
     "the clean stream's ({outputs:,})", ("Streamlog", "the same hostile stream"))]


def hostile_rows() -> list[dict]:
    _spark()
    rows = []
    engines = [("local", LocalOptions()), ("spark", SparkOptions(physical_plan="fused")),
               ("spark", SparkOptions(physical_plan="staged"))]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (engine, options) in enumerate(progress(engines, desc="hostile lines")):
            label = engine + (f" ({options.physical_plan})" if engine == "spark" else "")
            got = hostile.consistency_case(engine, options, Path(tmp) / f"c{i}")
            rows.append(_hostile_row(f"consistency, {label}", "4,000 statements", got,
                                     f"the clean stream's ({got['outputs']})"))
        for test, case, tried, outputs, (what, alike) in HOSTILE_ON_BOTH:
            reasons = {}
            for engine, options in (("local", None), ("spark", SparkOptions())):
                got = case(engine, options, Path(tmp) / f"{what}-{engine}")
                if got is not None:
                    reasons[engine] = got["reasons"]
                    rows.append(_hostile_row(f"{test}, {engine}", tried, got, outputs.format(**got)))
            if len(reasons) == 2:
                same = reasons["local"] == reasons["spark"]
                rows.append(_row("hostile lines", f"{what}: local and Spark reject alike", alike, len(reasons["local"]),
                                 "same lines, same reasons" if same else "DIFFERENT", same))
        far = {engine: hostile.far_ahead_case(engine, options, Path(tmp) / f"far-{engine}")
               for engine, options in (("local", None), ("spark", SparkOptions()))}
    got = far["local"]
    ok = got["rejected_itself"] and got["good_lines_rejected"] == 0 and got["identical"]
    taken = ("rejected" if got["rejected_itself"] else "taken") + (", on both runners alike" if far["spark"] == got
                                                                  else "; the runners DIFFER")
    rows.append(_row("hostile lines", "Streamlog: a timestamp mistyped 10^9 ahead, local and Spark",
                     f"`{got['text']}` at line {got['line']} of 400 fact lines", 1,
                     f"{taken}: {got['good_lines_rejected']} of the {got['good_lines_after']} good lines after it "
                     f"rejected as earlier than it, models {'identical' if got['identical'] else 'DIFFER'} "
                     "(--max-gap, default 86,400 timestamps)", ok and far["spark"] == got))
    return rows


def checkpoint_rows() -> list[dict]:
    _spark()
    ex, rdf_type = "http://ex.org/c#", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    topology = lambda nis: compile_ntm(analyse(TBox.build([], [(ex + a, ex + b) for a, b in nis])))   # noqa: E731
    stream = lines([format_tnt(t, ex + "x", rdf_type, ex + c) for t, c in ((1, "A"), (2, "B"), (3, "C"))])
    foreign = [("another TBox", topology([("A", "C")]), 5, stream), ("another window", topology([("A", "B")]), 7, stream),
               ("a rules topology", compile_program(parse_program("b(X) :- a(X).")), 5,
                lines(['{"time": 0, "atoms": ["a(1)"]}']))]
    refused = []
    with tempfile.TemporaryDirectory() as tmp:
        run = lambda t, window, source: run_topology(   # noqa: E731
            get_runner("spark"), t, [source], window=window, lateness=10, checkpoint=tmp + "/ck", options=SparkOptions())
        run(topology([("A", "B")]), 5, stream)
        for what, t, window, source in foreign:
            try:
                run(t, window, source)
            except TopologyError as error:
                refused.append((what, str(error).replace(tmp + "/ck", "DIR")))
        restarted = run(topology([("A", "B")]), 5, stream)
    ok = len(refused) == len(foreign) and not restarted.rejected
    example = refused[0][1] if refused else ""
    return [_row("checkpoints", "a checkpoint of another query", ", ".join(w for w, *_ in foreign), len(foreign),
                 f"{len(refused)} refused before starting (e.g. \"{example}\"); the same query restarts",
                 ok)]


def disk_rows() -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        reference = None
        for where in progress(("out", "checkpoint", "local-out"), desc="full disk"):
            got = full_disk.case(where, Path(tmp) / where, reference)
            if got is None:
                return [_row("full disk", "a tmpfs that fills up", "not run: mounting is not allowed here", 0,
                             "not measured", True)]
            reference = reference or got.get("reference")
            message = got["message"].replace(tmp + "/" + where, "DIR")
            if where == "local-out":
                rows.append(_row("full disk", "local runner, --out on a full disk", "20,000 tuples", 1,
                                 f"clear error: \"{message}\"", got["failed_clearly"]))
                continue
            ok = got["failed_clearly"] and got["restart_identical"]
            rows.append(_row("full disk", f"Spark, the {where} directory on a full disk", "20,000 tuples, 4 batches", 1,
                             f"clear error: \"{message}\"; after space was freed the restart "
                             f"{'gave' if got['restart_identical'] else 'did NOT give'} the uninterrupted output "
                             f"({got['reports']:,} reports)", ok))
    return rows


def campaign_rows(area: str, campaign, key: str, names, trials: int, seed: int, saved: str | None = None,
                  held: bool = False) -> list[dict]:
    """The rows of a campaign (``campaign``: its module) for ``names``: each read from the campaign's own results
    file (``saved``, by ``key``: kind or case) with the date it was measured, else run now, so one campaign gives
    both tables; ``held``: with ``saved``, only the names it holds."""
    results = read_json(saved) if saved else {}
    done = {r[key]: r for r in results.get("campaigns", [])}
    rows = []
    for name in names:
        if held and saved and name not in done:
            continue
        r = done.get(name) or campaign.campaign(name, trials, seed=seed)
        measured = r.get("date", results.get("date")) if name in done else None
        rows.append(dict(_row(area, *campaign.summary_row(r)), **({"date": measured} if measured else {})))
    return rows


def overload_rows() -> list[dict]:
    """What the paced benchmark measured at twice the sustainable rate (``bench_rules_paced --periods 0,2x``)."""
    path = Path(RESULTS, "bench_rules_overload.json")
    if not path.exists():
        return []
    rows = read_json(path)["rows"]
    out = []
    for r in rows:
        full = next((f for f in rows if f["input"] == r["input"] and f["engine"] == r["engine"] and not f["period_s"]),
                    None)
        if not r["period_s"] or full is None:
            continue
        ok = r["lost"] == 0 and r["same_models_as_local"]
        out.append(_row("overload", f"rules, {r['input']}, {r['engine']}, fed at 2x its sustainable rate",
                        f"{r['time_points']} time points every {r['period_s']:.3f} s (sustained {full['tps']:.2f} tp/s)",
                        r["time_points"], f"{r['lost']} lost, models {'identical to' if r['same_models_as_local'] else 'DIFFER from'} "
                        f"the local runner's; backlog up to {r['backlog_max']} time points; latency p50 "
                        f"{r['latency_p50_s']:.2f} s, p95 {r['latency_p95_s']:.2f} s, max {r['latency_max_s']:.2f} s",
                        ok))
    return out


def _spark_memory_rows() -> list[dict]:
    """What ``experiments.long_run_memory`` measured."""
    path = Path(RESULTS, "long_run_memory.json")
    if not path.exists():
        return []
    rows = []
    for r in read_json(path)["results"]:
        growth = {k.replace("_mb", ""): v for k, v in r["growth"].items() if v is not None}
        at10, at100 = r["at"]["10%"], r["at"]["100%"]
        shown = ", ".join(f"{k} {at10[k + '_mb']:.0f} -> {at100[k + '_mb']:.0f} MB ({v:+.1%})" for k, v in growth.items())
        # the JVM's resident memory holds heap it grew and never returned: what it keeps is its live heap, a
        # sawtooth whose teeth the two points may straddle: its peaks over each half of the run say more
        peaks, peak_growth = r.get("heap_peaks") or {}, r.get("heap_peak_growth")
        if peaks:
            shown += (f"; live heap peak {peaks['10-50%']:.0f} MB over 10-50% of the run, {peaks['50-100%']:.0f} MB "
                      f"over 50-100% ({peak_growth:+.1%})")
        ok = all(v <= 0.10 for k, v in growth.items() if k in ("driver", "workers")) and \
            (peak_growth if peak_growth is not None else growth.get("heap_live", 1)) <= 0.10
        rows.append(_row("long runs", f"Spark {r['kind']}, memory from 10% to 100% of a long run "
                                      "(experiments/long_run_memory.py)",
                         f"{r['batches']} micro-batches, {r['seconds']:.0f} s", r["batches"], shown, ok))
    return rows


def _reason_memory_rows() -> list[dict]:
    path = Path(RESULTS, "bench_choice.json")
    if not path.exists():
        return []
    long = read_json(path).get("long", [])
    growth = {r["strategy"]: r["rss_at"]["10000"] / r["rss_at"]["1000"] - 1 for r in long
              if "1000" in r.get("rss_at", {}) and "10000" in r.get("rss_at", {})}
    if not growth:
        return []
    worst = max(growth.values())
    return [_row("long runs", "`reason` RSS, step 1,000 vs 10,000 (experiments/bench_choice.py)",
                 "QC 14, every strategy in a process of its own", len(growth),
                 f"flat: at most +{100 * worst:.1f}% ({', '.join(sorted(growth))})", worst <= 0.10)]


def render(rows: list[dict]) -> str:
    table = md_table(["area", "test", "tried", "count", "outcome", "measured"],
                     [[r["area"], r["test"], r["tried"], r["count"], ("" if r["ok"] else "**FAILED** ") + r["outcome"],
                       r.get("date", "")] for r in rows])
    return "\n".join(["# Reliability", "",
                      "What was tried against srtopo, how often, and what happened. Regenerate with "
                      "`python -m experiments.reliability` (this file and `experiments/results/reliability.json`); "
                      "the fast parts of every row run in the test suite (`tests/reliability`, `tests/spark`).", "",
                      table, "", "Limits: the overload feeds are as long as their inputs (30 and 60 time points, "
                      "10-20 s); memory over long runs is measured on local[2] only, not on a cluster.", ""])


def main(argv=None) -> int:
    parser = arguments(
        __doc__, sections=",".join(SECTIONS), examples=(10_000, "fuzz examples per parser"),
        kills=(20, "kill -9 trials per kind"), interrupts=(20, "Ctrl-C / SIGTERM trials per command and runner"),
        kill_choice_results=(None, "build the kill-choice row from a saved kill_campaign --kinds choice run (JSON)"),
        interrupt_results=(None, "build the interrupt rows from a saved interrupt_campaign run instead of running it"),
        kill_results=(None, "build the kill rows of the kinds a saved kill_campaign run holds instead of running them "
                            "(the other kinds' rows are kept from the last run)"),
        quick=(False, "300 fuzz examples, 2 kills per kind"), markdown=str(Path(ROOT, "RELIABILITY.md")),
        out="reliability.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.examples, args.kills, args.interrupts = 300, 2, 2
    sections = chosen(parser, args.sections, SECTIONS, "section")
    # rows of the sections not run now are kept from the last run (each row says when it was measured)
    previous = read_json(args.out).get("rows", []) if Path(args.out).exists() else []
    rows: list[dict] = [r for r in previous if r.get("section") in SECTIONS and r["section"] not in sections]
    kill = partial(campaign_rows, "crashes", kill_campaign, "kind", trials=args.kills, seed=20)
    builders = {"fuzz": lambda: fuzz_rows(args.examples), "hostile": hostile_rows, "checkpoint": checkpoint_rows,
                "disk": disk_rows,
                # every kind but choice, which has a section of its own
                "kill": lambda: kill([k for k in kill_campaign.INPUTS if k != "choice"], saved=args.kill_results,
                                     held=True),
                "kill-choice": lambda: kill(["choice"], saved=args.kill_choice_results),
                "interrupt": lambda: campaign_rows("interrupts", interrupt_campaign, "case", interrupt_campaign.CASES,
                                                   args.interrupts, 130, args.interrupt_results),
                "overload": overload_rows, "memory": lambda: _spark_memory_rows() + _reason_memory_rows()}
    for section in sections:
        built = [dict(r, section=section, date=r.get("date") or time.strftime("%Y-%m-%d")) for r in builders[section]()]
        if section == "kill" and args.kill_results:      # the kinds the saved run does not hold
            rows += [r for r in previous if r.get("section") == section and r["test"] not in {b["test"] for b in built}]
        rows += built
    rows.sort(key=lambda r: SECTIONS.index(r["section"]))
    write_json(args.out, {"rows": rows})
    Path(args.markdown).write_text(render(rows), encoding="utf-8")
    for r in rows:
        print(("ok   " if r["ok"] else "FAIL ") + f"{r['area']}: {r['test']}: {r['outcome']}", file=sys.stderr)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
