"""Run every I-DLV-sr program of the third-party I-DLV-sr corpus with ``srtopo reason`` over its log (compile the
ones that have none): which programs of the corpus the local runner runs. experiments/README.md, "What each
benchmark measures", says how programs and logs are paired."""
from __future__ import annotations

import os
import re
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from experiments import common
from experiments.campaign import Run
from experiments.common import arguments, progress, write_json

DATA = Path(common.DATA, "idlvsr")
LOG_DIRS = ("Log", "Logs", "log", "logs")
SCRIPT_DIRS = ("Script", "Scripts", "external_definition")
# @now compared with Unix epoch seconds by the program or its script
NOW_SEC = re.compile(r"CityBench/Q[45]_")
BK_LITERAL = re.compile(r"""["']([^"'\s/][^"'\s]*/BK/[^"'\s/]+)["']""")


@dataclass
class Job:
    program: Path
    log: Path | None
    flags: list[str] = field(default_factory=list)
    links: dict[str, Path] = field(default_factory=dict)   # path in the working directory -> corpus folder


def by_name(stem: str, files: list[Path]) -> Path | None:
    exact = [f for f in files if f.stem == stem]
    if exact:
        return exact[0]
    prefix = [f for f in files if f.stem.startswith(stem) or stem.startswith(f.stem)]
    return prefix[0] if len(prefix) == 1 else None


def pair(programs: list[Path], files: list[Path]) -> dict[Path, list[Path]]:
    named = {p: by_name(p.stem, files) for p in programs}
    if any(named.values()):
        return {p: [f] if f else [] for p, f in named.items()}
    return {p: list(files) for p in programs}


def sibling_files(folder: Path, names: tuple[str, ...], pattern: str) -> list[Path]:
    return sorted(f for name in names if (folder.parent / name).is_dir() for f in (folder.parent / name).glob(pattern))


def bk_links(scripts: list[Path], data: Path) -> dict[str, Path]:
    links = {}
    for script in scripts:
        for literal in BK_LITERAL.findall(script.read_text(encoding="utf-8", errors="replace")):
            parts = literal.split("/")
            at = len(parts) - 2                                   # parts[at] == "BK"
            if at < 1:
                continue
            tail = "/".join(parts[at - 1:])
            found = [f for f in data.rglob(parts[-1]) if f.as_posix().endswith("/" + tail)]
            if found:
                links["/".join(parts[:at])] = found[0].parents[1]
    return links


def discover(data: Path) -> list[Job]:
    folders: dict[Path, list[Path]] = {}
    for program in sorted(data.rglob("*.idlvsr")):
        folders.setdefault(program.parent, []).append(program)
    jobs = []
    for folder, programs in folders.items():
        logs = pair(programs, sibling_files(folder, LOG_DIRS, "*.log"))
        scripts = pair(programs, sibling_files(folder, SCRIPT_DIRS, "*.py"))
        for program in programs:
            flags = []
            if scripts[program]:
                flags += ["--py-script", ",".join(str(s) for s in scripts[program])]
            if NOW_SEC.search(program.relative_to(data).as_posix()):
                flags += ["--now-format", "sec"]
            links = bk_links(scripts[program], data)
            for log in logs[program] or [None]:
                jobs.append(Job(program, log, flags, links))
    return jobs


def first_error(stderr: str, status: int) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return f"exit status {status}"
    return lines[-1] if lines[0].startswith(("Traceback", "usage:")) else lines[0]   # the message is last


def run(job: Job, timeout: float) -> dict:
    if job.log is None:
        args = ["compile", "--program", str(job.program)]
    else:
        args = ["reason", "--program", str(job.program), "--stream", str(job.log), "--out", "out.jsonl", *job.flags]
    with tempfile.TemporaryDirectory(prefix="idlvsr-corpus-") as tmp:
        for name, target in job.links.items():
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).symlink_to(target, target_is_directory=True)
        started = time.perf_counter()
        cli = Run(args, env=dict(os.environ), cwd=tmp)
        ended, stderr = cli.wait(timeout), cli.stderr()
        status = cli.proc.returncode
        outcome = "timeout" if not ended else "ok" if status == 0 else "error: " + first_error(stderr, status)
        seconds = time.perf_counter() - started
        out = Path(tmp) / "out.jsonl"
        outputs = None if job.log is None else (sum(1 for _ in out.open("rb")) if out.exists() else 0)
    row = {"kind": "compile" if job.log is None else "reason", "outcome": outcome, "status": status,
           "seconds": round(seconds, 3), "outputs": outputs,
           "command": shlex.join([sys.executable, "-m", "srtopo", *args])}
    if job.links:
        row["links"] = {name: str(target) for name, target in job.links.items()}
    return row


def main(argv=None) -> int:
    parser = arguments(__doc__, timeout=(600.0, "seconds per program"), out="idlvsr_corpus.json",
                       only=("", "only programs (or logs) whose path contains this"),
                       list=(False, "print the program/log pairing and stop"))
    parser.add_argument("--data", type=Path, default=DATA, help="the I-DLV-sr corpus")
    args = parser.parse_args(argv)
    data = args.data.resolve()
    if not data.is_dir():
        print(f"{data}: no such directory (the I-DLV-sr corpus)", file=sys.stderr)
        return 2
    jobs = [j for j in discover(data) if args.only in str(j.program.relative_to(data))
            or (j.log is not None and args.only in str(j.log.relative_to(data)))]
    if args.list:
        for j in jobs:
            log = j.log.relative_to(data) if j.log else "(no log: compile)"
            print(f"{j.program.relative_to(data)}  <-  {log}  {shlex.join(j.flags)}".rstrip())
            for name, target in j.links.items():
                print(f"    link {name} -> {target.relative_to(data)}")
        reason = sum(1 for j in jobs if j.log)
        print(f"{len(jobs)} jobs: {reason} reason, {len(jobs) - reason} compile")
        return 0
    rows = []
    bar = progress(jobs, desc="I-DLV-sr corpus")
    for job in bar:
        bar.set_postfix_str(job.program.name)
        rows.append({"program": str(job.program.relative_to(data)),
                     "log": str(job.log.relative_to(data)) if job.log else None, **run(job, args.timeout)})
    ok = sum(1 for r in rows if r["outcome"] == "ok")
    summary = {"ok": ok, "failed": len(rows) - ok, "total": len(rows)}
    write_json(args.out, {"date": time.strftime("%Y-%m-%d %H:%M"), "data": str(data), "timeout": args.timeout,
                          "results": rows, "summary": summary})
    print("| program | log | outcome | seconds | time points |\n|---|---|---|---:|---:|")
    for r in rows:
        cells = [r["program"], r["log"] or "-", r["outcome"], f"{r['seconds']:.2f}",
                 "-" if r["outputs"] is None else str(r["outputs"])]
        print("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    print(f"\n{ok} of {len(rows)} ran")
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
