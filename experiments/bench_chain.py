"""A chain against its two commands run apart (check, then reason over the withheld, saturated stream), local and
Spark. experiments/README.md, "What each benchmark measures", says how."""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from experiments.common import LUBM_TBOX, UBA, arguments, command, log, md_table, program, splits, timed, write_json
from experiments.streams import UB, uba_replay, uba_triples
from srtopo.concepts import RDF_TYPE

WINDOW = 10
PROGRAM = program("university.idlvsr", window=WINDOW)


def stream(folder: Path, copies: int, per_file: int) -> tuple[str, int]:
    """The replayed UBA stream, ``copies`` times with renamed individuals, as .tnt files; (directory, lines)."""
    from srtopo.consistency.nis import analyse
    from srtopo.consistency.owl import load_tbox
    from srtopo.io.tnt import write_tnt
    triples = uba_triples(UBA)
    renamed = []
    for copy in range(copies):
        def name(term: str) -> str:
            return term if term.startswith('"') or term.startswith(UB) or term == RDF_TYPE else f"{term}-c{copy}"
        renamed += [(name(s), p, name(o)) for s, p, o in triples]
    replay = uba_replay(analyse(load_tbox(LUBM_TBOX)), renamed, per_time=50, violation=0.02, seed=7)
    directory = folder / "stream"
    write_tnt(str(directory), replay.lines, per_file=per_file)
    return str(directory), len(replay.lines)


def topologies():
    from srtopo.chain import chain
    from srtopo.consistency import choose_topology, load_tbox
    from srtopo.rules.compile import compile_program
    from srtopo.rules.parse import parse_program
    tbox = load_tbox(LUBM_TBOX)
    consistency = choose_topology(tbox, method="ntm")
    rules = compile_program(parse_program(PROGRAM, "bench-chain"))
    return consistency, rules, chain(consistency, rules, tbox)


def saturate_apart(directory: str, reports, topology, out: Path) -> None:
    """The step between the two commands: read the stream, withhold the statements of reported individuals,
    add what the TBox entails, write a .tnt stream."""
    from srtopo.chain.entail import Entailment
    from srtopo.chain.local import statement_text
    from srtopo.io.sources import stream_files
    from srtopo.io.tnt import file_lines, tnt_statements
    from srtopo.ir.records import RejectedRecord, Statement
    entail = Entailment(topology.parts()[1])
    reported: dict = {}
    for report in reports:
        reported.setdefault(report.time, set()).add(report.subject)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        for path in stream_files(directory):
            for item in tnt_statements(file_lines(path), path):
                if isinstance(item, RejectedRecord):
                    continue
                statement = item[0]
                if entail.withheld(statement, reported.get(statement.time)):
                    continue
                for triple in dict.fromkeys(entail.saturate(statement)):
                    handle.write(statement_text(Statement(statement.time, *triple)) + "\n")


def non_empty(models) -> dict:
    return {m.time: m.atoms for m in models if m.atoms}


def run_engine(engine: str, directory: str, lines: int, folder: Path, files_per_batch: int | None, master: str,
               repeats: int) -> list:
    """The chain and the two commands apart, in turns, ``repeats`` times each: the best run of each way (a
    first run in a session also pays for warming the JVM and the Python workers)."""
    from srtopo.runners import LocalOptions, SparkOptions, get_runner
    runner = get_runner(engine)

    def options():
        return SparkOptions(master=master) if engine == "spark" else LocalOptions()
    if engine == "spark":
        runner.session(options())
    best: dict = {}
    for turn in range(repeats):
        for mode in ("chain", "apart"):
            run = run_chain if mode == "chain" else run_apart
            row, reports, models = run(runner, options(), engine, directory, lines,
                                       folder / f"{engine}-{mode}-{turn}", files_per_batch)
            row["turn"] = turn
            log(json.dumps({k: row[k] for k in ("engine", "mode", "turn", "seconds", "parts_s")}))
            if mode not in best or row["seconds"] < best[mode][0]["seconds"]:
                best[mode] = (row, reports, models)
    (chain_row, chain_reports, chain_models), (apart_row, apart_reports, apart_models) = best["chain"], best["apart"]
    same_reports = sorted(r.key for r in chain_reports) == sorted(r.key for r in apart_reports)
    same_models = non_empty(chain_models) == non_empty(apart_models)
    for row in (chain_row, apart_row):
        row["same_reports"], row["same_models"] = same_reports, same_models
    chain_row["apart_over_chain"] = round(apart_row["seconds"] / chain_row["seconds"], 3)
    return [chain_row, apart_row]


def run_chain(runner, options, engine, directory, lines, folder: Path, files_per_batch):
    from srtopo.io.sources import TntFiles
    from srtopo.runners import RunConfig
    _consistency, _rules, chained = topologies()
    result, seconds = timed(runner.run, chained, [TntFiles(directory, files_per_batch=files_per_batch)], RunConfig(
        window=WINDOW, lateness=0, print_empty=False, options=options, checkpoint=str(folder / "ck")))
    extra = result.counters.extra
    parts = {k: extra.get(f"{k}_s", 0.0) for k in ("consistency", "saturation", "program")}
    row = _row(engine, "chain", lines, seconds, parts, result.reports, result.models, extra.get("withheld", 0),
               result.physical_plan)
    if engine == "spark":
        row["batches"] = [{k: b.detail.get(k) for k in ("phases_s", "closed_on", "saturated_on", "evaluated_on",
                                                         "tuples")} for b in result.batches]
    return row, result.reports, result.models


def run_apart(runner, options, engine, directory, lines, folder: Path, files_per_batch):
    from srtopo.io.sources import AtomLog, TntFiles
    from srtopo.runners import RunConfig
    consistency, rules, chained = topologies()
    started = time.perf_counter()
    checked, check_s = timed(runner.run, consistency, [TntFiles(directory, files_per_batch=files_per_batch)],
                             RunConfig(window=WINDOW, lateness=0, options=options, checkpoint=str(folder / "ck-check")))
    saturated = folder / "saturated" / "stream.tnt"
    saturate_s = timed(saturate_apart, directory, checked.reports, chained, saturated)[1]
    reasoned, reason_s = timed(runner.run, rules, [AtomLog(str(saturated.parent), "tnt")], RunConfig(
        lateness=0, max_gap=None, print_empty=False, options=options, checkpoint=str(folder / "ck-reason")))
    seconds = time.perf_counter() - started
    row = _row(engine, "apart", lines, seconds, {"consistency": check_s, "saturation": saturate_s,
                                                 "program": reason_s},
               checked.reports, reasoned.models, None, f"{checked.physical_plan}; {reasoned.physical_plan}")
    return row, checked.reports, reasoned.models


def _row(engine, mode, lines, seconds, parts, reports, models, withheld, plan) -> dict:
    total = sum(parts.values()) or 1.0
    return {"engine": engine, "mode": mode, "statements": lines, "seconds": round(seconds, 3),
            "statements_per_s": round(lines / seconds, 1),
            "parts_s": {k: round(v, 3) for k, v in parts.items()},
            "shares": {k: round(v / total, 3) for k, v in parts.items()},
            "reports": len(reports), "models_non_empty": len(non_empty(models)), "withheld": withheld,
            "plan": plan}


def main(argv=None) -> int:
    args = arguments(
        __doc__, copies=(8, "copies of the two UBA universities"), engines="local,spark",
        per_file=(15_000, "statements per .tnt file"),
        files_per_batch=(None, "Spark: files per micro-batch (default: every file in one, as the saturated stream the "
                               "two commands run apart read is one file)", int),
        master="local[2]", repeats=(2, "runs of each way, in turns (the best is kept)"),
        out="bench_chain.json").parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    rows = []
    with tempfile.TemporaryDirectory(prefix="srtopo-bench-chain-") as tmp:
        folder = Path(tmp)
        directory, lines = stream(folder, args.copies, args.per_file)
        for engine in splits(args.engines):
            rows += run_engine(engine, directory, lines, folder, args.files_per_batch, args.master, args.repeats)
            for row in rows[-2:]:
                log(json.dumps(row))
    write_json(args.out, {"experiment": "bench_chain", "copies": args.copies, "window": WINDOW, "rows": rows})
    print(md_table(["engine", "mode", "statements", "s", "statements/s", "consistency", "withhold+saturate",
                    "program", "reports", "models"],
                   [[r["engine"], r["mode"], r["statements"], r["seconds"], r["statements_per_s"],
                     f"{r['shares']['consistency']:.0%}", f"{r['shares']['saturation']:.0%}",
                     f"{r['shares']['program']:.0%}", r["reports"], r["models_non_empty"]] for r in rows]))
    return 0 if all(r["same_reports"] and r["same_models"] for r in rows) else 1


if __name__ == "__main__":
    command(main)
