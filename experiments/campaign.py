"""What the campaigns share: the srtopo command in a process group of its own, signalled, killed or waited on; a
wait for a condition; the outputs a run wrote, read back to be compared; the names a flag lists, checked against
those a campaign knows."""
from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from experiments.common import cli_env, out_batches, splits

#: a campaign's command on Spark: local[2], a file per micro-batch, ending once every file is read
SPARK_ONCE = ["--engine", "spark", "--master", "local[2]", "--once", "--files-per-batch", "1"]


class Run:
    """``srtopo ARGS`` in a process group of its own (a signal to the group reaches its JVM and Python workers);
    its standard error goes to a file, read once it has exited (a pipe nobody reads could block it)."""

    def __init__(self, args: list[str], env: dict | None = None, **popen):
        self._errors = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "srtopo", *args], env=env or cli_env(),
                                     stdout=subprocess.DEVNULL, stderr=self._errors, start_new_session=True, **popen)

    def send(self, sig, group: bool = True) -> None:
        """``sig`` to the run's process group, or to the run alone; nothing once they are gone."""
        try:
            os.killpg(self.proc.pid, sig) if group else self.proc.send_signal(sig)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILL to the group, whether or not the run itself has ended (its JVM may not have), and wait for it."""
        self.send(signal.SIGKILL)
        self.proc.wait()

    def wait(self, timeout: float) -> bool:
        """Whether the run exited within ``timeout`` seconds; if it did not, its group is killed."""
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            self.kill()
            return False

    def stderr(self) -> str:
        """What the run wrote to its standard error (read once, after it exited)."""
        self._errors.seek(0)
        text = self._errors.read().decode("utf-8", "replace")
        self._errors.close()
        return text


def wait_until(condition, timeout: float, every: float = 0.05, proc=None) -> bool:
    """Whether ``condition()`` came to hold within ``timeout`` seconds, polled every ``every``; the wait ends early
    once ``proc`` (if given) has exited."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline or (proc is not None and proc.poll() is not None):
            return False
        time.sleep(every)
    return True


# --- what a run wrote ------------------------------------------------------------------------------------------

def reports_dir(out: Path) -> Path:
    """Where a chain's run that writes its models to ``out`` writes its reports (``--reports-out``)."""
    return Path(str(out) + "-reports")


def output_lines(out: Path) -> Counter:
    """The lines of every batch's outputs under ``out`` (and, for a chain, of its reports beside it)."""
    lines: Counter = Counter()
    for directory, mark in ((str(out), ""), (str(reports_dir(Path(out))), "report ")):
        for path in glob.glob(os.path.join(directory, "batch=*", "*.json")):
            with open(path, encoding="utf-8") as handle:
                lines.update(mark + line.strip() for line in handle if line.strip())
    return lines


def times_in_batch_order(out: Path) -> list[int]:
    """The time of every model written under ``out``, reading batch=0, 1, ... and batch=final in that order."""
    batches = out_batches(str(out))         # batch=final is -1
    return [row["time"] for b in sorted(batches, key=lambda b: (b < 0, b)) for row in batches[b]]


def canonical(lines) -> Counter:
    """JSON lines as a multiset of values, their keys sorted (two writers of one value write it alike)."""
    return Counter(json.dumps(json.loads(x), sort_keys=True) for x in lines if x.strip())


# --- a campaign ---------------------------------------------------------------------------------------------------

def chosen(parser, names, known, what: str) -> list[str]:
    """The names a flag lists (comma-separated, or a list already); one that ``known`` lacks is a usage error."""
    names = splits(names) if isinstance(names, str) else list(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown {what} {unknown[0]!r} (use {', '.join(known)})")
    return names
