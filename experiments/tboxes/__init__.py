"""The script that derives the LUBM DL-Lite_core adaptation; the TBox it writes is package data of
srtopo.consistency (``srtopo calibrate`` measures on it), which the experiments read from there."""
