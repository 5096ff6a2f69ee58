"""Calibration of the cost model: it runs topologies of every kind it measures on the runners at hand, so it sits
above the kinds and the runners (``srtopo calibrate``; the ``cost`` balancer only reads the file it writes)."""
from srtopo.calibration.measure import TARGET_KEYS, Settings, calibrate, save  # noqa: F401
