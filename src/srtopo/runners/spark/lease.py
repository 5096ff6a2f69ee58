"""Which driver last ran on a checkpoint, and waiting for its JVM to be gone before another run starts there.

A driver's JVM runs in a process group of its own (``session``) and exits when its standard input closes, so
a driver killed with SIGKILL leaves its JVM running for a moment (about 0.6 s on local[2]). Meanwhile that JVM's
micro-batch thread goes on: it commits the batch in flight and writes the next batch's offsets. A run restarted
on the same checkpoint within that moment met those writes half-way ("Multiple streaming queries are
concurrently using ..."). So each JVM this process launches inherits a file lock that the kernel releases only
when the last process holding it - this one or its JVM - is gone; a run records the lock's file in the
checkpoint, and the next run waits for the lock before it touches the checkpoint. A run that ends removes its
record (``release_driver``): a process that goes on with its JVM after its run is no run in progress."""
from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import stat
import sys
import tempfile
import time

from srtopo import interrupt
from srtopo.errors import TopologyError

#: the file in a checkpoint directory naming the driver (and its JVM's lock) that last ran there
DRIVER_FILE = "srtopo-driver.json"

#: how the lock files that ``session`` makes in the temporary directory are named: LOCK_PREFIX...LOCK_SUFFIX
LOCK_PREFIX, LOCK_SUFFIX = "srtopo-jvm-", ".lock"

#: how long a restart waits for the JVM of a killed driver to exit before it gives up
WAIT_SECONDS = 60.0

#: the checkpoints this process records itself as driving (their record is removed when the run ends), each
#: with whether its query still runs
_HELD: dict = {}


def held() -> bool:
    """Whether a query of this process still runs on a checkpoint (its JVM's lock must outlive this process)."""
    return any(_HELD.values())


def query_stopped(checkpoint: str) -> None:
    """The run's query stopped: its JVM writes no more query logs (the run keeps its record until it ends)."""
    if checkpoint in _HELD:
        _HELD[checkpoint] = False


def is_jvm_lock(path) -> bool:
    """A lock file as ``session`` makes them: a recorded path is opened (and removed) only if it looks like one,
    so a copied checkpoint cannot name some other file."""
    return (isinstance(path, str) and os.path.dirname(path) == tempfile.gettempdir()
            and os.path.basename(path).startswith(LOCK_PREFIX) and path.endswith(LOCK_SUFFIX))


def _alive(pid) -> bool:
    """Whether process ``pid`` runs (a zombie, killed and not yet reaped, does not)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # another user's process: alive
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def record_driver(fs, checkpoint: str, jvm_lock: str | None, jvm_pid: int | None) -> None:
    """Write which process drives the run on ``checkpoint`` now, and the lock its JVM holds."""
    fs.write_text(checkpoint.rstrip("/") + "/" + DRIVER_FILE,
                  json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "jvm_lock": jvm_lock,
                              "jvm_pid": jvm_pid}) + "\n")
    _HELD[checkpoint] = True


def release_driver(fs, checkpoint: str) -> None:
    """Remove the driver file this process wrote: its run ended (a run killed leaves it, for the next to read)."""
    _HELD.pop(checkpoint, None)
    path = checkpoint.rstrip("/") + "/" + DRIVER_FILE
    text = fs.read_text(path)
    try:
        mine = text is not None and json.loads(text).get("pid") == os.getpid()
    except (ValueError, AttributeError):
        mine = False
    if mine:
        fs.delete(path)


def wait_for_earlier_driver(fs, checkpoint: str, own_lock: str | None, timeout: float = WAIT_SECONDS) -> None:
    """Return once no process of an earlier run on ``checkpoint`` is left on this machine: at once when its
    driver ended with its JVM, after a moment when the driver was killed and its JVM is still exiting.
    Refuses a checkpoint whose driver still runs (two queries on one checkpoint would both write it)."""
    text = fs.read_text(checkpoint.rstrip("/") + "/" + DRIVER_FILE)
    try:
        earlier = json.loads(text) if text else {}
    except ValueError:
        earlier = {}
    path = earlier.get("jvm_lock") if isinstance(earlier, dict) else None
    if not is_jvm_lock(path) or path == own_lock or earlier.get("host") != socket.gethostname():
        return      # no lock recorded, our own JVM, or a driver on another machine: nothing to wait for here
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return      # its driver ended well and removed the lock
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        deadline = time.monotonic() + timeout
        said = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as error:
                if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    return
            jvm = earlier.get("jvm_pid") or "unknown"
            if earlier.get("pid") != os.getpid() and _alive(earlier.get("pid")):
                raise TopologyError(f"checkpoint {checkpoint} is in use by another run: process {earlier['pid']} "
                                    f"on this machine drives a query on it",
                                    hint="stop that run first, or give this one another --checkpoint directory; "
                                         "in Python, a run started with SparkRunner.start ends with finish() or "
                                         "cleanup()")
            if time.monotonic() > deadline:
                raise TopologyError(f"the Spark JVM (process {jvm}) of a killed run on checkpoint {checkpoint} "
                                    f"still runs after {timeout:.0f} s",
                                    hint=f"end it (kill -9 {jvm}) and run again")
            if not said:
                print(f"srtopo: waiting for the Spark JVM (process {jvm}) of a killed run on this checkpoint to "
                      f"exit", file=sys.stderr)
                said = True
            if interrupt.wait(0.05):
                interrupt.check("stopped before the query started: nothing was committed; run the same command "
                                "again")
        try:
            os.remove(path)     # nobody holds it any more: the killed run's lock file goes
        except OSError:
            pass
    finally:
        os.close(fd)
