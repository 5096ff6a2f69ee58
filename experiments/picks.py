"""The default balancer's pick for the engines of the study, with the run's own calibration: fig5 runs the pick (in
every round of its Spark race), and cost_model compares the pick with the measured plans."""
from __future__ import annotations

import os

from experiments.common import analysis_for, log
from srtopo.consistency.balance import cost, even_tasks
from srtopo.consistency.compile import compile_ntm, compile_split, split_label
from srtopo.consistency.cost import coefficients_for
from srtopo.consistency.generate import uniform_rates
from srtopo.ir.topology import Topology


def calibration(ctx) -> str:
    """The calibration file the predictions use: the one given, else a calibration of the run's engines made once
    per run (fig5 asks for it first, to re-run the default balancer's pick)."""
    given = getattr(ctx.args, "cost_calibration", None)
    if given:
        return given
    if ctx.calibration is None:
        from srtopo.calibration import Settings, calibrate, save
        path = os.path.join(ctx.work, "calibration.json")
        keys = sorted({ctx.cost_target(e).key for e in ctx.engines(every=True) if e != "standalone"})
        log(f"calibrating the cost model: {', '.join(keys)}")
        result = calibrate(Settings(targets=tuple(keys), master=ctx.args.master, progress=log))
        save(result, path)
        save(result, os.path.join(ctx.out, "calibration.json"))
        ctx.calibration = path
    return ctx.calibration


def default_picks(ctx, tbox: str, engine: str) -> dict[int, Topology]:
    """Budget -> the plan the default balancer picks for an engine of the study, with the run's calibration."""
    a = analysis_for(tbox)
    target = ctx.cost_target(engine)
    coefficients = coefficients_for(target, calibration(ctx))
    out = {}
    for budget in ctx.args.tasks:
        chosen = cost(a, tasks=max(1, budget // 2), rates=uniform_rates(a), target=target,
                      coefficients=coefficients)
        if len(chosen.split) == 1:          # as choose_topology compiles it
            out[budget] = compile_ntm(a, parallelism=chosen.parallelism[0])
        else:
            out[budget] = compile_split(a, chosen.split, chosen.parallelism, label=split_label(chosen.split))
    return out


def plan_name(topology: Topology, budget: int) -> str:
    """A plan of the study by its split (ntm, ltm-n, ...), with ``@`` and its tasks per stage when they are not the
    budget shared evenly (the cost balancer gives no stage more tasks than Spark's cores): ``ntm@2`` at budget 4."""
    even = even_tasks(max(budget, len(topology.stages)), len(topology.stages))
    tasks = tuple(s.parallelism for s in topology.stages)
    return topology.label if tasks == even else f"{topology.label}@{'+'.join(map(str, tasks))}"
