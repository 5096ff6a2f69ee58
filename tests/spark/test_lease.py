"""A run restarted on a checkpoint waits for the JVM of the killed run before it touches the checkpoint: that JVM
outlives its killed driver for a moment and goes on writing the query's logs (``runners.spark.lease``). A process
holding the lock stands for that JVM here; ``test_kill_streamlog`` freezes a real one."""
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from srtopo.errors import TopologyError
from srtopo.runners.spark.fs import HadoopFS
from srtopo.runners.spark.lease import DRIVER_FILE, wait_for_earlier_driver

_HOLD = "import fcntl, sys, time\nfcntl.flock(int(sys.argv[1]), fcntl.LOCK_EX | fcntl.LOCK_NB)\ntime.sleep(600)\n"


def _holder(lock_path):
    """A process that holds ``lock_path``'s lock as a JVM holds the one it inherited, until it is killed."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT)
    try:
        proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(fd)], pass_fds=(fd,))
    finally:
        os.close(fd)
    deadline = time.time() + 30
    while _free(lock_path):
        assert proc.poll() is None and time.time() < deadline
        time.sleep(0.01)
    return proc


def _free(lock_path) -> bool:
    import fcntl
    fd = os.open(lock_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _exited() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _record(ck, **fields):
    ck.mkdir(exist_ok=True)
    (ck / DRIVER_FILE).write_text(json.dumps({"host": socket.gethostname(), **fields}), encoding="utf-8")


def test_a_restart_waits_for_the_killed_drivers_jvm_then_goes_on(spark, tmp_path):
    lock = tmp_path / "jvm.lock"
    jvm = _holder(lock)
    _record(tmp_path / "ck", pid=_exited(), jvm_lock=str(lock), jvm_pid=jvm.pid)
    waited = threading.Event()
    waiter = threading.Thread(target=lambda: (wait_for_earlier_driver(HadoopFS(spark), str(tmp_path / "ck"), None),
                                              waited.set()), daemon=True)
    waiter.start()
    time.sleep(0.5)
    assert not waited.is_set()      # the lock is held: the earlier run's JVM still runs
    jvm.kill()
    jvm.wait()
    waiter.join(10)
    assert waited.is_set()
    assert not lock.exists()        # the killed run's lock file is gone with it


def test_a_jvm_that_does_not_exit_is_named_with_what_to_do(spark, tmp_path):
    lock = tmp_path / "jvm.lock"
    jvm = _holder(lock)
    try:
        _record(tmp_path / "ck", pid=_exited(), jvm_lock=str(lock), jvm_pid=jvm.pid)
        with pytest.raises(TopologyError) as caught:
            wait_for_earlier_driver(HadoopFS(spark), str(tmp_path / "ck"), None, timeout=0.3)
        assert f"process {jvm.pid}" in str(caught.value) and f"kill -9 {jvm.pid}" in caught.value.hint
    finally:
        jvm.kill()
        jvm.wait()


def test_a_checkpoint_whose_driver_still_runs_is_refused(spark, tmp_path):
    lock = tmp_path / "jvm.lock"
    jvm = _holder(lock)
    try:
        _record(tmp_path / "ck", pid=jvm.pid, jvm_lock=str(lock), jvm_pid=jvm.pid)
        with pytest.raises(TopologyError, match="in use by another run"):
            wait_for_earlier_driver(HadoopFS(spark), str(tmp_path / "ck"), None)
    finally:
        jvm.kill()
        jvm.wait()


def test_nothing_is_waited_for_when_the_earlier_run_ended_or_ran_elsewhere(spark, tmp_path):
    fs = HadoopFS(spark)
    wait_for_earlier_driver(fs, str(tmp_path / "new"), None)                 # no record at all
    _record(tmp_path / "ended", pid=_exited(), jvm_lock=str(tmp_path / "gone.lock"), jvm_pid=1)
    wait_for_earlier_driver(fs, str(tmp_path / "ended"), None)               # its lock file was removed at exit
    lock = tmp_path / "jvm.lock"
    jvm = _holder(lock)
    try:
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / DRIVER_FILE).write_text(json.dumps(
            {"host": "another-machine", "pid": jvm.pid, "jvm_lock": str(lock), "jvm_pid": jvm.pid}))
        wait_for_earlier_driver(fs, str(tmp_path / "elsewhere"), None, timeout=0.3)
        _record(tmp_path / "mine", pid=os.getpid(), jvm_lock=str(lock), jvm_pid=jvm.pid)
        wait_for_earlier_driver(fs, str(tmp_path / "mine"), str(lock), timeout=0.3)    # this process's own JVM
    finally:
        jvm.kill()
        jvm.wait()
