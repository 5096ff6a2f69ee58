"""I-DLV-sr stream reasoning programs: parse, analyse, rewrite, evaluate with clingo."""
if __name__ != "srtopo.rules":   # setup.cfg maps this folder to srtopo.rules (package_dir)
    raise ImportError(f"{__name__!r} is the folder of the package srtopo.rules: import srtopo.rules")
