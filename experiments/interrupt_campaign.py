"""Ctrl-C and SIGTERM at random moments, on every command and runner: a clean stop every time.
experiments/README.md, "What each benchmark measures", says what a clean stop is."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from experiments.campaign import Run, chosen, output_lines, wait_until
from experiments.common import EXAMPLES, arguments, cli_env, log, program, progress, read_json, srtopo, write_json

TEX_TBOX, SHORTEST_PATHS, SENSORS = (EXAMPLES / name for name in ("tex.ttl", "shortest-paths.sl", "sensors.sl"))
PROGRAM = program("sensors-alert.idlvsr")
TAG = "SRTOPO_INTERRUPT_TRIAL"


# --- what a run reads ---------------------------------------------------------------------------------------

def tnt_lines(rng: random.Random, start: int, n: int) -> list[str]:
    from srtopo.concepts import RDF_TYPE
    from srtopo.io.tnt import format_tnt
    classes = ["Student", "Employee", "Faculty", "Admin", "Person", "Article", "Book", "Publication",
               "Organization", "Work"]
    return [format_tnt((start + i) // 20, f"http://ex.org/data/s{rng.randrange(300)}", RDF_TYPE,
                       "http://example.org/tex#" + rng.choice(classes)) for i in range(n)]


def log_lines(rng: random.Random, start: int, n: int) -> list[str]:
    return [f"{t} " + "; ".join(f"temp(s{s},{rng.randint(15, 32)})" for s in range(8) if rng.random() < 0.7)
            for t in range(start, start + n)]


def reading_lines(rng: random.Random, start: int, n: int) -> list[str]:
    return [f"reading({t},s{rng.randrange(6)},{t // 4 + rng.randint(0, 40)})." for t in range(start, start + n)]


def arc_lines(rng: random.Random, start: int, n: int) -> list[str]:
    return [f"arc({t},n{rng.randrange(30)},n{rng.randrange(30)},{rng.randint(1, 9)})." for t in range(start, start + n)]


@dataclass
class Case:
    """One command on one runner: its arguments (given the trial folder), what feeds it, when to stop it."""
    command: str
    engine: str
    lines: object                        # (rng, start, n) -> stream lines
    args: object                         # the trial's folder -> the command's arguments
    per_feed: int = 20                   # lines per write to stdin / per file
    moments: tuple[float, float] = (0.3, 3.0)

    @property
    def name(self) -> str:
        return f"{self.command}-{self.engine}"


def _check_args(_folder: Path) -> list[str]:
    return ["check", "--tbox", str(TEX_TBOX), "--window", "10", "--lateness", "0"]


def _reason_args(folder: Path) -> list[str]:
    (folder / "p.idlvsr").write_text(PROGRAM, encoding="utf-8")
    return ["reason", "--program", str(folder / "p.idlvsr"), "--t-format", "sec"]


def _streamlog_args(program: Path):
    return lambda _folder: ["streamlog", "--program", str(program)]


CASES = {c.name: c for c in [
    Case("check", "local", tnt_lines, _check_args),
    Case("reason", "local", log_lines, _reason_args, per_feed=1),
    Case("streamlog", "local", arc_lines, _streamlog_args(SHORTEST_PATHS), per_feed=1),
    Case("check", "spark", tnt_lines, _check_args, per_feed=2000, moments=(0.5, 16.0)),
    Case("reason", "spark", log_lines, _reason_args, per_feed=3, moments=(0.5, 16.0)),
    # a Spark query on this machine starts 10-20 s after the command: later moments reach its micro-batches; a
    # per-sensor program: the cost of its records does not grow with the stream, unlike paths over a graph that
    # fills up (which a restart and the reference would evaluate over the whole of a long trial's input)
    Case("streamlog", "spark", reading_lines, _streamlog_args(SENSORS), per_feed=3, moments=(0.5, 40.0)),
]}


# --- one trial ----------------------------------------------------------------------------------------------

def tagged_processes(tag: str) -> list[int]:
    """Processes whose environment carries the trial's tag: the run, its JVM, the JVM's Python workers."""
    found = []
    needle = f"{TAG}={tag}".encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with suppress(OSError), open(f"/proc/{pid}/environ", "rb") as handle:
            if needle in handle.read().split(b"\0"):
                found.append(int(pid))
    return found


def command_line(case: Case, folder: Path, once: bool = False) -> list[str]:
    base = case.args(folder)
    if case.engine == "local":
        return [*base, "--stream", "-", "--out", str(folder / "out.jsonl")]
    # a live run takes a file per micro-batch; the restart takes what is left in one
    pace = ["--once"] if once else ["--files-per-batch", "1"]
    return [*base, "--engine", "spark", "--master", "local[2]", "--stream", str(folder / "in"), "--checkpoint",
            str(folder / "ck"), "--out", str(folder / "out"), "--metrics-out", str(folder / "metrics.jsonl"), *pace]


def feed(case: Case, folder: Path, proc, rng: random.Random, stop: threading.Event) -> None:
    """Writes the stream until ``stop`` is set: to the run's standard input, or a new file in its folder every
    second (written under a hidden name and renamed, so a reader never sees half a file)."""
    sent = 0
    try:
        while not stop.is_set():
            lines = case.lines(rng, sent, case.per_feed)
            if case.engine == "local":
                proc.stdin.write(("\n".join(lines) + "\n").encode())
                proc.stdin.flush()
                stop.wait(0.02)
            else:
                name = f"part-{sent:09d}.txt"
                (folder / "in" / f".{name}").write_text("\n".join(lines) + "\n", encoding="utf-8")
                os.rename(folder / "in" / f".{name}", folder / "in" / name)
                stop.wait(1.0)
            sent += len(lines)
    except (BrokenPipeError, OSError, ValueError):
        return


def whole_outputs(case: Case, folder: Path) -> tuple[bool, int]:
    """(every output line is a whole JSON record, how many there are)."""
    files = [folder / "out.jsonl"] if case.engine == "local" else sorted((folder / "out").glob("batch=*/*.json"))
    count = 0
    for path in files:
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            return False, count
        for line in text.splitlines():
            try:
                json.loads(line)
            except ValueError:
                return False, count
            count += 1
    return True, count


_NOISE = ("Traceback", "Exception", "py4j", "Py4J", "java.", "WARN", "ERROR", "Fatal Python error")


def trial(case: Case, folder: Path, rng: random.Random, use_sigterm: bool, restart: bool, after=None) -> dict:
    """``after(folder, pid)``: when given, the moment counts from when it first holds (the run reached a stage of
    its progress: its JVM started, a batch committed), not from the start, which a loaded machine reaches later."""
    moment = round(rng.uniform(*case.moments), 2)
    tag = uuid.uuid4().hex
    if case.engine == "spark":
        (folder / "in").mkdir(parents=True, exist_ok=True)
    run = Run(command_line(case, folder), env=cli_env(**{TAG: tag}), cwd=str(folder),
              stdin=subprocess.PIPE if case.engine == "local" else subprocess.DEVNULL)
    stop = threading.Event()
    feeder = threading.Thread(target=feed, args=(case, folder, run.proc, random.Random(rng.random()), stop),
                              daemon=True)
    feeder.start()
    if after is not None:
        wait_until(lambda: after(folder, run.proc.pid), 180, proc=run.proc)
    time.sleep(moment)
    ended_before = run.proc.poll() is not None
    sent = signal.SIGTERM if use_sigterm else signal.SIGINT
    if not ended_before:        # a terminal's Ctrl-C reaches the whole foreground group
        run.send(sent, group=not use_sigterm)
    signalled = time.perf_counter()
    run.wait(180)       # the feeder goes on until the run exits: it must stop on the signal, not at its input's end
    stop_s = round(time.perf_counter() - signalled, 1)
    stop.set()
    feeder.join(5)
    err = run.stderr()
    if run.proc.stdin is not None:
        with suppress(OSError):
            run.proc.stdin.close()
    lines = [x for x in err.splitlines() if x.strip()]
    wait_until(lambda: not tagged_processes(tag), 15, every=0.25)
    left = tagged_processes(tag)
    whole, outputs = whole_outputs(case, folder)
    litter = sorted(p.name for p in folder.iterdir()
                    if p.name not in ("in", "ck", "out", "out.jsonl", "p.idlvsr", "metrics.jsonl"))
    metrics = folder / "metrics.jsonl"      # a Spark run's per-batch metrics, written when it is stopped too
    metrics_lines = len(metrics.read_text(encoding="utf-8").splitlines()) if metrics.exists() else 0
    stopped_line = bool(lines) and lines[-1].startswith(f"srtopo: stopped by {sent.name}")
    quiet = all(x.startswith("srtopo: ") for x in lines) and not any(n in err for n in _NOISE)
    row = {"moment_s": moment, "signal": sent.name, "exit": run.proc.returncode, "stop_s": stop_s, "outputs": outputs,
           "ended_before_signal": ended_before, "left_processes": len(left), "whole_outputs": whole,
           "one_line": stopped_line and sum("stopped by" in x for x in lines) == 1, "quiet": quiet, "litter": litter,
           "last_line": lines[-1] if lines else "", "metrics_lines": metrics_lines}
    for pid in left:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    row["clean"] = (run.proc.returncode == 128 + sent.value and row["one_line"] and quiet and not left and whole
                    and not litter)
    if restart and case.engine == "spark":
        row.update(_restart(case, folder))
        row["clean"] = row["clean"] and row["restart_ok"]
    if not row["clean"]:
        row["stderr"] = err[-3000:]
    return row


def _restart(case: Case, folder: Path) -> dict:
    """The same command with --once on the same folders: it goes on from the checkpoint, and all the outputs
    are those of one uninterrupted local run over the files the feeder wrote."""
    done = srtopo(command_line(case, folder, once=True), timeout=600, check=False, cwd=str(folder),
                  env=cli_env(**{TAG: uuid.uuid4().hex}))
    if done.returncode != 0:
        return {"restart_ok": False, "restart_stderr": done.stderr[-2000:]}
    reference = srtopo([*case.args(folder), "--stream", str(folder / "in")], timeout=600, check=False,
                       env=cli_env(**{TAG: uuid.uuid4().hex}))
    expected = {_key(case, json.loads(x)) for x in reference.stdout.splitlines() if x.strip()}
    have = {_key(case, json.loads(x)) for x in output_lines(folder / "out")}
    return {"restart_ok": reference.returncode == 0 and have == expected, "restart_outputs": len(have)}


def _key(case: Case, record: dict):
    if case.command == "check":
        return record["subject"], record["time"]
    return record["time"], tuple(record["atoms"])


def campaign(name: str, trials: int, seed: int, restart: bool = True) -> dict:
    """``trials`` trials of the case ``name``, SIGINT and SIGTERM in turn."""
    case, rng, rows = CASES[name], random.Random(seed), []
    started = time.perf_counter()
    for i in progress(range(trials), desc=f"interrupt {case.name}"):
        with tempfile.TemporaryDirectory(prefix=f"srtopo-int-{case.name}-") as tmp:
            rows.append(trial(case, Path(tmp), rng, use_sigterm=bool(i % 2), restart=restart))
    return {"case": case.name, "trials": trials, "clean": sum(r["clean"] for r in rows),
            "seconds": round(time.perf_counter() - started, 1), "rows": rows}


def summary_row(r: dict) -> tuple[str, str, int, str, bool]:
    """A case's line of RELIABILITY.md: (test, what was tried, trials, outcome, whether every stop was clean)."""
    case, n = CASES[r["case"]], r["trials"]
    left = sum(x["left_processes"] for x in r["rows"])
    outcome = f"{r['clean']}/{n} clean: exit 130/143, one line, whole outputs, {left} processes left"
    if case.engine == "spark":
        started = sum("before the query started" not in x["last_line"] for x in r["rows"])
        outcome += f", the --once restart goes on from the checkpoint; {started} of {n} stopped a running query"
        stops = [x["stop_s"] for x in r["rows"] if "stop_s" in x and not x["ended_before_signal"]]
        if stops:       # a signal while Spark starts is acted on once it has started
            outcome += f"; exit {max(stops):.0f} s after the signal at most"
    return (f"Ctrl-C / SIGTERM, `{case.command}` on the {case.engine} runner", f"seeded random moments in "
            f"{case.moments[0]}-{case.moments[1]} s, SIGINT to the group and SIGTERM to the process in turn", n,
            outcome, r["clean"] == n)


def main(argv=None) -> int:
    parser = arguments(__doc__, trials=20, cases=(",".join(CASES), "comma-separated: " + ", ".join(CASES)), seed=130,
                       no_restart=(False, "skip the --once restart of Spark trials"), out="interrupt_campaign.json")
    args = parser.parse_args(argv)
    results = [dict(campaign(c, args.trials, args.seed, not args.no_restart), seed=args.seed,
                    date=time.strftime("%Y-%m-%d")) for c in chosen(parser, args.cases, CASES, "case")]
    for r in results:
        log(f"{r['case']}: {summary_row(r)[3]} ({r['seconds']} s)")
    # the results of the cases not run now are kept from the last run, each with the date it was run
    last = read_json(args.out) if Path(args.out).exists() else {}
    kept = [dict(r, seed=r.get("seed", last.get("seed")), date=r.get("date", last.get("date")))
            for r in last.get("campaigns", []) if r["case"] in CASES]
    done = {r["case"]: r for r in kept + results}
    write_json(args.out, {"campaigns": [done[c] for c in CASES if c in done]})
    return 0 if all(r["clean"] == r["trials"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
