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
