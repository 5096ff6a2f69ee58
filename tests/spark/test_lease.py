"""A run restarted on a checkpoint waits for the JVM of the killed run before it touches the checkpoint: that JVM
outlives its killed driver for a moment and goes on writing the query's logs (``runners.spark.lease``). A process
holding the lock stands for that JVM here; ``test_kill_streamlog`` freezes a real one."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from srtopo.errors import TopologyError
from srtopo.runners.spark.fs import HadoopFS
from srtopo.runners.spark.lease import (DRIVER_FILE, held, query_stopped, record_driver, release_driver,
                                       wait_for_earlier_driver)

_HOLD = "import time\ntime.sleep(600)\n"


@pytest.fixture
def lock():
    """A lock file where ``session`` makes them (a recorded path elsewhere is not trusted)."""
    fd, path = tempfile.mkstemp(prefix="srtopo-jvm-", suffix=".lock")
    os.close(fd)
    yield Path(path)
    Path(path).unlink(missing_ok=True)


def _holder(lock_path):
    """A process that holds ``lock_path``'s lock as a JVM holds the one it inherited, until it is killed."""
    import fcntl
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)      # taken here, held on by the child as it inherits it
        return subprocess.Popen([sys.executable, "-c", _HOLD], pass_fds=(fd,))
    finally:
        os.close(fd)


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


def test_a_restart_waits_for_the_killed_drivers_jvm_then_goes_on(spark, tmp_path, lock):
    jvm = _holder(lock)
    _record(tmp_path / "ck", pid=_exited(), jvm_lock=str(lock), jvm_pid=jvm.pid)
    waited = threading.Event()
    waiter = threading.Thread(target=lambda: (wait_for_earlier_driver(HadoopFS(spark), str(tmp_path / "ck"), None),
                                              waited.set()), daemon=True)
    try:
        waiter.start()
        time.sleep(0.5)
        assert not waited.is_set()      # the lock is held: the earlier run's JVM still runs
    finally:
        jvm.kill()
        jvm.wait()
    waiter.join(10)
    assert waited.is_set()
    assert not lock.exists()        # the killed run's lock file is gone with it


def test_a_jvm_that_does_not_exit_is_named_with_what_to_do(spark, tmp_path, lock):
    jvm = _holder(lock)
    try:
        _record(tmp_path / "ck", pid=_exited(), jvm_lock=str(lock), jvm_pid=jvm.pid)
        with pytest.raises(TopologyError) as caught:
            wait_for_earlier_driver(HadoopFS(spark), str(tmp_path / "ck"), None, timeout=0.3)
        assert f"process {jvm.pid}" in str(caught.value) and f"kill -9 {jvm.pid}" in caught.value.hint
    finally:
        jvm.kill()
        jvm.wait()


def test_a_checkpoint_whose_driver_still_runs_is_refused(spark, tmp_path, lock):
    jvm = _holder(lock)
    try:
        _record(tmp_path / "ck", pid=jvm.pid, jvm_lock=str(lock), jvm_pid=jvm.pid)
        with pytest.raises(TopologyError, match="in use by another run"):
            wait_for_earlier_driver(HadoopFS(spark), str(tmp_path / "ck"), None)
    finally:
        jvm.kill()
        jvm.wait()


def test_nothing_is_waited_for_when_the_earlier_run_ended_or_ran_elsewhere(spark, tmp_path, lock):
    fs = HadoopFS(spark)
    wait_for_earlier_driver(fs, str(tmp_path / "new"), None)                 # no record at all
    _record(tmp_path / "long-ago", pid=_exited(), jvm_lock=str(lock), jvm_pid=1)
    wait_for_earlier_driver(fs, str(tmp_path / "long-ago"), None, timeout=0.3)    # killed, its JVM long gone
    assert not lock.exists()        # the lock nobody holds is cleared away
    _record(tmp_path / "ended", pid=_exited(), jvm_lock=str(lock), jvm_pid=1)
    wait_for_earlier_driver(fs, str(tmp_path / "ended"), None, timeout=0.3)      # its lock file went at exit
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


def test_a_recorded_path_that_is_no_lock_of_ours_is_neither_waited_for_nor_removed(spark, tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me", encoding="utf-8")
    _record(tmp_path / "ck", pid=_exited(), jvm_lock=str(precious), jvm_pid=1)
    wait_for_earlier_driver(HadoopFS(spark), str(tmp_path / "ck"), None, timeout=0.3)
    assert precious.read_text(encoding="utf-8") == "keep me"


def test_a_run_holds_its_jvms_lock_past_exit_only_while_its_query_runs(spark, tmp_path, lock):
    """A process that exits with a query running keeps its JVM's lock file for the next run to wait on; one whose
    queries stopped, or whose runs ended, leaves nothing to wait for."""
    fs, ck = HadoopFS(spark), str(tmp_path / "ck")
    record_driver(fs, ck, str(lock), os.getpid())
    assert held() and json.loads((tmp_path / "ck" / DRIVER_FILE).read_text())["jvm_lock"] == str(lock)
    query_stopped(ck)
    assert not held() and (tmp_path / "ck" / DRIVER_FILE).exists()     # stopped: the run still owns its record
    release_driver(fs, ck)
    assert not held() and not (tmp_path / "ck" / DRIVER_FILE).exists()
