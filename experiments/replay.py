"""Replay a log over TCP to ``srtopo reason``, as the I-DLV-sr project's ``sender.py`` does, and time each answer.
experiments/README.md, "What each benchmark measures", says how."""
from __future__ import annotations

import bisect
import json
import signal
import socket
import subprocess
import sys
import threading
import time

from experiments.common import ROOT, arguments, cli_env, log_lines, models_digest, stats, write_json


def pace(lines: list[str], period: float, deliver, sent: dict, first_index: int = 0) -> None:
    """``deliver(i, line)`` for each line, a period apart (the schedule does not drift: line i leaves at start +
    i * period); ``sent[first_index + i]`` is when line i was handed over: taken before ``deliver``, since the
    answer can be read before this thread runs again after it."""
    start = time.perf_counter()
    for i, line in enumerate(lines):
        delay = start + i * period - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        sent[first_index + i] = time.perf_counter()
        deliver(i, line)


class Sender:
    """A one-connection TCP server writing lines at a period (``sender.py``), with the time each line left."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind((host, port))
        self.server.listen(1)
        self.port = self.server.getsockname()[1]
        self.conn = None
        self.connected = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        try:
            self.conn, _ = self.server.accept()
            self.conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            return
        self.connected.set()

    def send(self, lines: list[str], period: float, sent: dict, first_index: int = 0) -> None:
        """Write ``lines`` a period apart (``pace``); ``sent[first_index + i]`` is when line i left."""
        pace(lines, period, lambda _i, line: self.conn.sendall((line + "\n").encode("utf-8")), sent, first_index)

    def close(self) -> None:
        for s in (self.conn, self.server):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


def reason_command(program: str, port: int, engine: str, master: str | None, partitions: int | None,
                   extra: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "srtopo", "reason", "--program", program, "--hostname", "127.0.0.1",
           "--port-number", str(port), "--engine", engine]
    if engine == "spark":
        cmd += ["--master", master or "local[2]"]
        if partitions:
            cmd += ["--partitions", str(partitions)]
    return cmd + list(extra)


def replay(program: str, lines: list[str], period: float, engine: str = "local", master: str | None = None,
           partitions: int | None = None, warmup: int = 0, warmup_period: float = 0.5, events: int | None = None,
           timeout: float | None = None, extra: list[str] = ()) -> dict:
    """Serve ``lines`` to ``srtopo reason`` (warm-up lines first, then ``events`` measured lines a period apart)
    and return the timings. The log is assumed to have a line per time point, time points 0, 1, 2, ..."""
    warm = lines[:warmup]
    measured = lines[warmup:warmup + events] if events else lines[warmup:]
    sender = Sender()
    proc = subprocess.Popen(reason_command(program, sender.port, engine, master, partitions, list(extra)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=cli_env(PYTHONUNBUFFERED="1"))
    seen: dict[int, float] = {}
    atoms: dict[int, list] = {}
    got = threading.Condition()
    stderr: list[str] = []

    def read_out():
        for line in proc.stdout:
            at = time.perf_counter()
            try:
                model = json.loads(line)
                t = int(model["time"])
            except (ValueError, KeyError, TypeError):
                continue
            with got:
                seen.setdefault(t, at)
                atoms.setdefault(t, model.get("atoms"))
                got.notify_all()

    def read_err():
        for line in proc.stderr:
            stderr.append(line)
    threading.Thread(target=read_out, daemon=True).start()
    threading.Thread(target=read_err, daemon=True).start()

    def wait_for(last: int, limit: float) -> bool:
        deadline = time.monotonic() + limit
        with got:
            while not all(t in seen for t in range(last + 1)):
                if proc.poll() is not None or time.monotonic() > deadline:
                    return False
                got.wait(0.05)
        return True
    sent: dict[int, float] = {}
    limit = timeout or max(300.0, 20 * len(lines) * max(period, 0.2))
    try:
        deadline = time.monotonic() + 300
        while not sender.connected.wait(timeout=0.1):
            if proc.poll() is not None or time.monotonic() > deadline:
                time.sleep(0.2)         # the rest of its error output
                raise RuntimeError("the reasoner never connected:\n" + "".join(stderr[-20:]).rstrip())
        if warm:
            sender.send(warm, warmup_period, {})
            if not wait_for(len(warm) - 1, limit):
                raise RuntimeError("the warm-up time points were not all answered:\n" + "".join(stderr[-20:]))
        started = time.perf_counter()
        sender.send(measured, period, sent, first_index=len(warm))
        # with lateness 0 the last time point closes when its line is complete: nothing more needs to arrive
        wait_for(len(warm) + len(measured) - 1, limit)
        ended = max((seen[t] for t in sent if t in seen), default=time.perf_counter())
    finally:
        sender.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return {"engine": engine, "master": (master or "local[2]") if engine == "spark" else None, "period_s": period,
            "warmup": len(warm), "time_points": len(measured), **answers(sent, seen, period),
            "total_s": round(ended - started, 3), "digest": models_digest([atoms.get(t) for t in sorted(sent)]),
            "stderr_tail": "".join(stderr[-5:])}


def answers(sent: dict, seen: dict, period: float) -> dict:
    """What a paced feed measures from when each time point left (``sent``) and was first answered (``seen``):
    latencies, time points lost, accepted (answered within a period: the I-DLV-sr paper's measure) and the
    backlog (time points delivered and not yet answered, as each one arrived)."""
    latencies = [seen[t] - sent[t] for t in sorted(sent) if t in seen]
    answered_at = sorted(seen[t] for t in sent if t in seen)
    backlog = [i + 1 - bisect.bisect_right(answered_at, sent[t]) for i, t in enumerate(sorted(sent))]
    return {"answered": len(latencies), "lost": len(sent) - len(latencies),
            "accepted": sum(1 for x in latencies if x <= period) if period else None,
            **stats(latencies, "latency_{}_s", ("p50", "p95", "max"), digits=4), "backlog_max": max(backlog, default=0),
            "latencies": [round(x, 4) for x in latencies], "backlog": backlog}


def main(argv=None) -> int:
    parser = arguments(
        __doc__, program=(None, "the program (required)"),
        log=(None, "the log to send (required: a file, or a directory of .log files)"),
        period=(1.0, "seconds between lines (0: all at once)"),
        events=(None, "measured lines (default: the rest of the log)", int),
        engine=("local", None, ["local", "spark"]), master=(None, "Spark's master (default local[2])"),
        partitions=(None, None, int), warmup=(None, "lines sent first and not measured (Spark: 20)", int),
        warmup_period=0.5, out=(None, "write the result as JSON here"))
    args, extra = parser.parse_known_args(argv)
    if not args.program or not args.log:
        parser.error("--program and --log are required")
    warmup = args.warmup if args.warmup is not None else (20 if args.engine == "spark" else 0)
    try:
        try:
            lines = log_lines(args.log)
        except (OSError, UnicodeDecodeError) as error:
            raise RuntimeError(f"{args.log}: cannot read the log: {error}") from None
        if len(lines) <= warmup:
            raise RuntimeError(f"{args.log}: {len(lines)} time points, none left to measure after {warmup} of "
                               "warm-up (give --warmup 0 or a longer log)")
        result = replay(args.program, lines, args.period, args.engine, args.master, args.partitions,
                        warmup, args.warmup_period, args.events, extra=extra)
    except (OSError, UnicodeDecodeError, RuntimeError) as error:
        print(f"replay: {error}", file=sys.stderr)
        return 1
    if args.out:
        write_json(args.out, result)
    summary = {k: v for k, v in result.items() if k not in ("latencies", "backlog", "stderr_tail")}
    print(json.dumps(summary))
    return 0 if result["answered"] else 1


if __name__ == "__main__":
    sys.exit(main())
