"""Choosing a consistency topology: the one place that turns a user's options into a topology.

The CLI (``srtopo compile`` / ``check``), the Python API and the experiments all call :func:`choose_topology`,
so they share one set of defaults: the ``cost`` balancer (``consistency.cost``) picks, for the runner that will run
the topology, NTM or the two-stage LTM split with the highest predicted throughput (``method="auto"``); with
``method="ltm"`` it picks among LTM splits into ``stages`` stages (default 2). A given ``split`` is taken as it is
(the ``paper`` balancer). The task budget is ``tasks`` per stage of a two-stage plan, shared evenly by the stages of
whichever plan is chosen (NTM gets all of it). ``method="ntm"`` is the whole NI closure in one stage; a TBox without
disjointness has no groups to split and also gets one stage.
"""
from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence

from srtopo.consistency.balance import DEFAULT_BALANCER, get_balancer
from srtopo.consistency.compile import as_analysis, compile_ltm, compile_ntm
from srtopo.consistency.cost import Target
from srtopo.consistency.nis import NIAnalysis
from srtopo.consistency.tbox import TBox
from srtopo.errors import TopologyError
from srtopo.ir.topology import Topology

METHODS = ("auto", "ntm", "ltm")
DEFAULT_METHOD = "auto"
DEFAULT_STAGES = 2


def default_balancer(split) -> str:
    return "paper" if split else DEFAULT_BALANCER


def choose_topology(tbox_or_analysis: TBox | NIAnalysis, *, method: str = DEFAULT_METHOD,
                    split: Sequence[int] | None = None, stages: int | None = None, balancer=None, tasks: int = 1,
                    rates: Mapping[str, float] | None = None, name: str | None = None,
                    target: Target | None = None) -> Topology:
    """The topology the options ask for (see the module docstring for the defaults).

    ``split``: NI groups per stage (LTM only); ``stages``: how many stages a balancer cuts; ``balancer``: a name
    (``cost``, ``paper``, ``even``) or a callable (``consistency.balance``); ``tasks``: the task budget per stage;
    ``target``: the runner and physical plan the cost balancer models (default: the local runner's)."""
    if method not in METHODS:
        raise TopologyError(f"unknown method {method!r}",
                            hint="use 'auto' (the cost model picks), 'ntm' (NI closure in one stage) or 'ltm'")
    analysis = as_analysis(tbox_or_analysis)
    if tasks < 1:
        raise TopologyError(f"the task budget must be >= 1 per stage, got {tasks}")
    if method == "ntm" or not analysis.groups:
        if split:
            raise TopologyError("a split applies to LTM", hint="drop --split or use --method ltm")
        return compile_ntm(analysis, parallelism=tasks, name=name)
    name_or_callable = balancer or default_balancer(split)
    if name_or_callable != "cost" and stages is None and split is None:
        stages = min(DEFAULT_STAGES, len(analysis.groups))
    function = get_balancer(name_or_callable)
    chosen = function(analysis, tasks=tasks, stages=stages, split=split, rates=rates,
                      **_accepted(function, target=target, single_stage=method == "auto"))
    if len(chosen.split) == 1 and method == "auto" and name_or_callable == "cost":
        return compile_ntm(analysis, parallelism=chosen.parallelism[0], name=name)
    return compile_ltm(analysis, chosen.split, chosen.parallelism, name=name)


def _accepted(function, **extras) -> dict:
    """The extra keyword arguments a balancer takes (one written before they existed takes none of them)."""
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return extras
    return {k: v for k, v in extras.items() if k in params}


def topology_from_tbox(path: str, **options) -> Topology:
    """Load an OWL TBox and choose its topology (options as for :func:`choose_topology`)."""
    from srtopo.consistency.owl import load_tbox
    return choose_topology(load_tbox(path), **options)


def parse_split(text: str) -> list[int]:
    """``1,2`` or ``1|2`` -> [1, 2] (NI groups per stage)."""
    try:
        return [int(x) for x in text.replace("|", ",").split(",") if x.strip() != ""]
    except ValueError:
        raise TopologyError(f"split {text!r} is not a list of integers",
                            hint="e.g. --split 1,2 for [G1 | G2+G3]") from None
