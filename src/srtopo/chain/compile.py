"""The chain's compiler in the registry of kinds (``srtopo.kinds``): a TBox and a program into a chain."""
from __future__ import annotations

from srtopo.chain import chain
from srtopo.ir.topology import Topology


def topology_from_files(tbox_path: str, *, program: str, inconsistent: str = "drop", strategy: str = "auto",
                        options=None, **choosing) -> Topology:
    """The chain of the TBox's consistency topology (chosen by ``consistency.choose.choose_topology`` from
    ``choosing``: method, split, stages, balancer, tasks, target) and the program's rules topology (compiled
    for ``strategy`` with the time ``options``, ``rules.compile.Options``)."""
    from srtopo.consistency.choose import choose_topology
    from srtopo.consistency.owl import load_tbox
    from srtopo.rules.compile import topology_from_file
    tbox = load_tbox(tbox_path)
    consistency = choose_topology(tbox, **choosing)
    rules = topology_from_file(program, strategy=strategy, options=options)
    return chain(consistency, rules, tbox, inconsistent)
