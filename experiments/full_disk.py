"""A disk that fills up during a run: a clear error, and after space is freed, a restart completes with the
output of a run that never failed. experiments/README.md, "What each benchmark measures", says how."""
from __future__ import annotations

import subprocess
from collections import Counter
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from experiments.campaign import SPARK_ONCE, output_lines
from experiments.common import EXAMPLES, srtopo
from experiments.hostile import clean_tnt

FREE_KB = {"out": 48, "checkpoint": 200}       # left free: less than the run writes there
DISK_KB = 12288     # the whole disk: room for a complete run once the ballast is gone (its checkpoint is ~4 MB)


@contextmanager
def tmpfs(path: Path, size_kb: int):
    """A tmpfs of ``size_kb`` at ``path``; yields False (and mounts nothing) where mounting is not allowed."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path)], capture_output=True)
    try:
        yield done.returncode == 0
    finally:
        if done.returncode == 0:
            subprocess.run(["umount", str(path)], capture_output=True)


_cli = partial(srtopo, timeout=600, check=False, cwd=None)


def stream(folder: Path) -> Path:
    lines = clean_tnt(20_000, 1)
    (folder / "in").mkdir(parents=True, exist_ok=True)
    for f in range(4):
        (folder / "in" / f"part-{f}.tnt").write_bytes(b"\n".join(lines[f * 5000:(f + 1) * 5000]) + b"\n")
    return folder / "in"


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1] if text.strip() else ""


def case(where: str, folder: Path, reference: Counter | None = None, restart=_cli) -> dict | None:
    """``where``: "out" or "checkpoint" on the full disk (Spark), or "local-out" (the local runner's --out).
    ``restart(args)`` runs the command again once space is freed (a new process unless told otherwise: the
    tests run it in their own process, on the SparkSession they already have)."""
    source = stream(folder)
    base = ["check", "--tbox", str(EXAMPLES / "tex.ttl"), "--stream", str(source), "--window", "5"]
    disk = folder / "disk"
    with tmpfs(disk, DISK_KB) as mounted:
        if not mounted:
            return None
        ballast = disk / "ballast"
        ballast.write_bytes(b"\0" * ((DISK_KB - FREE_KB.get(where, 48)) * 1024))
        if where == "local-out":
            failed = _cli(base + ["--out", str(disk / "reports.jsonl")])
            return {"where": where, "failed_clearly": failed.returncode == 2 and
                    _last_line(failed.stderr).startswith(f"srtopo: error: {disk / 'reports.jsonl'}: No space left"),
                    "message": _last_line(failed.stderr), "restart_identical": None}
        spark = base + SPARK_ONCE
        checkpoint = disk / "ck" if where == "checkpoint" else folder / "ck"
        out = disk / "out" if where == "out" else folder / "out"
        args = spark + ["--checkpoint", str(checkpoint), "--out", str(out)]
        failed = _cli(args)
        message = _last_line(failed.stderr)
        ballast.unlink()
        restarted = restart(args)
        got = output_lines(out)
    if reference is None:
        ok = _cli(spark + ["--checkpoint", str(folder / "ref-ck"), "--out", str(folder / "ref")])
        reference = output_lines(folder / "ref") if ok.returncode == 0 else Counter()
    return {"where": where, "message": message, "reports": sum(reference.values()), "reference": reference,
            "failed_clearly": failed.returncode == 2 and message.startswith(f"srtopo: error: {disk}")
            and "No space left on device" in message,
            "restart_ok": restarted.returncode == 0, "restart_identical": restarted.returncode == 0 and got == reference
            and sum(reference.values()) > 0}
