"""Experiments: the LUBM and NPD study of "Distributed Stream Consistency Checking" (section 5)."""
if __name__ != "srtopo.experiments":   # setup.cfg maps this folder to srtopo.experiments (package_dir)
    raise ImportError(f"{__name__!r} is the folder of the package srtopo.experiments: import srtopo.experiments")
