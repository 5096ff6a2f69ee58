"""A command over a live stream, as a pipe that stays open: what it writes before its input ends."""
from __future__ import annotations

import os
import subprocess
import sys
import threading


def first_line_before_the_end(args: list[str], lines: list[str]) -> tuple[str, int, str]:
    """Run ``srtopo ARGS --stream -``, write ``lines`` to its standard input and keep it open until the first line
    of output comes (at most 120 s; an empty line if none came); then close the input. Returns that line, the exit
    status and the standard error."""
    proc = subprocess.Popen([sys.executable, "-m", "srtopo", *args, "--stream", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    got = []
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(120)                      # the stream is still open: the output must come before its end
    finally:
        proc.stdin.close()
        proc.wait(60)
    return (got[0] if got else ""), proc.returncode, proc.stderr.read()
