"""Choosing a consistency topology: the one place that turns a user's options into a topology.

The CLI (``srtopo compile`` / ``check``), the Python API and the experiments all call :func:`choose_topology`,
so they share one set of defaults: LTM, split by a balancer into ``DEFAULT_STAGES`` stages (``even`` when no
split is given, ``paper`` when one is), one task per stage. NTM is the whole NI closure in one stage; a TBox
without disjointness has no groups to split and also gets one stage.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from srtopo.errors import TopologyError
from srtopo.ontology.model import TBox
from srtopo.ontology.nis import NIAnalysis
from srtopo.topology.balance import get_balancer
from srtopo.topology.compile import as_analysis, compile_ltm, compile_ntm
from srtopo.topology.ir import Topology

METHODS = ("ntm", "ltm")
DEFAULT_METHOD = "ltm"
DEFAULT_STAGES = 2


def default_balancer(split) -> str:
    return "paper" if split else "even"


def choose_topology(tbox_or_analysis: TBox | NIAnalysis, *, method: str = DEFAULT_METHOD,
                    split: Sequence[int] | None = None, stages: int | None = None, balancer=None, tasks: int = 1,
                    rates: Mapping[str, float] | None = None, name: str | None = None) -> Topology:
    """The topology the options ask for (see the module docstring for the defaults).

    ``split``: NI groups per stage (LTM only); ``stages``: how many stages a balancer cuts; ``balancer``: a name
    (``paper``, ``even``) or a callable (``topology.balance``); ``tasks``: the task budget per stage."""
    if method not in METHODS:
        raise TopologyError(f"unknown method {method!r}", hint="use 'ntm' (NI closure in one stage) or 'ltm'")
    analysis = as_analysis(tbox_or_analysis)
    if tasks < 1:
        raise TopologyError(f"the task budget must be >= 1 per stage, got {tasks}")
    if method == "ntm" or not analysis.groups:
        if split:
            raise TopologyError("a split applies to LTM", hint="drop --split or use --method ltm")
        return compile_ntm(analysis, parallelism=tasks, name=name)
    chosen = get_balancer(balancer or default_balancer(split))(
        analysis, tasks=tasks, stages=stages or min(DEFAULT_STAGES, len(analysis.groups)), split=split, rates=rates)
    return compile_ltm(analysis, chosen.split, chosen.parallelism, name=name)


def topology_from_tbox(path: str, **options) -> Topology:
    """Load an OWL TBox and choose its topology (options as for :func:`choose_topology`)."""
    from srtopo.ontology.owl import load_tbox
    return choose_topology(load_tbox(path), **options)


def parse_split(text: str) -> list[int]:
    """``1,2`` or ``1|2`` -> [1, 2] (NI groups per stage)."""
    try:
        return [int(x) for x in text.replace("|", ",").split(",") if x.strip() != ""]
    except ValueError:
        raise TopologyError(f"split {text!r} is not a list of integers",
                            hint="e.g. --split 1,2 for [G1 | G2+G3]") from None
