"""Small measuring helpers shared by the runners' metrics, the benchmarks and the experiments."""
from __future__ import annotations

import os


def percentile(values, q: float) -> float:
    """The q-quantile (0 <= q <= 1) by nearest rank on the sorted values; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))]


def rss_mb(pid: int | None = None) -> float | None:
    """Resident memory of a process (this one by default) in MB, from /proc (None where there is no /proc)."""
    try:
        with open(f"/proc/{pid or os.getpid()}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (all cores; /proc/stat, None without it): the
    difference over a run, divided by its wall time, is the number of cores the run kept busy on an otherwise
    quiet machine (a Spark run's JVM and Python workers included, which no per-process counter sees together)."""
    try:
        with open("/proc/stat") as handle:
            fields = handle.readline().split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int | None = None) -> float | None:
    """CPU seconds (user + system) a process (this one by default) has used (/proc, None without it): on a machine
    shared with other work, a run's CPU time moves far less with the others' load than its wall time."""
    try:
        with open(f"/proc/{pid or os.getpid()}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
