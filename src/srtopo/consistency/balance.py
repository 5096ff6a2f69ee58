"""Pluggable balancing: how NI groups become stages and how many tasks each stage gets.

A balancer is any callable ``(analysis, tasks=..., stages=..., split=..., rates=...) -> Balance``.
``tasks`` is the task budget *per stage* (the paper's experiments give every bolt the same number of
tasks); a balancer may redistribute the total ``tasks * stages`` between stages.

  * ``paper``: the user's split (or groups dealt out as evenly as possible by count), equal tasks.
  * ``even``: the paper's cost unit. A stage's cost is the sum over the concepts it receives of
    rate(concept) x (conjunction ops touching that concept + forwarding cost); the split minimising
    the largest stage cost wins, and tasks are given in proportion to cost (at least one each).
  * ``cost`` (the default): the runner-aware cost model of ``consistency.cost``, with the constants of the runner
    that will run the topology (``srtopo calibrate``). Without ``stages`` it weighs NTM (one stage) against every
    two-stage split; with ``stages`` every split into that many stages. The task budget, ``tasks`` per stage of
    a two-stage plan (or of ``stages``), is the same for every candidate and shared evenly by its stages, as the
    paper's experiments share it. On Spark with known cores (``local[N]``) the budget is a ceiling: each plan is
    also weighed with no stage above the cores, since tasks beyond them run one after the other and each costs
    its scheduling and state files every micro-batch. The plan with the highest predicted throughput wins (on a
    tie: fewer stages, then fewer tasks).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

from srtopo.consistency.compile import compile_split, normalise_split
from srtopo.consistency.cost import Coefficients, Target, coefficients_for, predict_tps
from srtopo.consistency.nis import NIAnalysis
from srtopo.errors import TopologyError
from srtopo.ir.topology import Topology


@dataclass(frozen=True)
class Balance:
    """NI groups per stage (``split``) and tasks per stage (``parallelism``), with the costs that chose them."""
    split: tuple[int, ...]
    parallelism: tuple[int, ...]
    costs: tuple[float, ...] = ()
    balancer: str = ""
    predicted_tps: float | None = None      # the cost balancer's prediction for the chosen plan


class Balancer(Protocol):
    def __call__(self, analysis: NIAnalysis, *, tasks: int, stages: int | None = None,
                 split: Sequence[int] | None = None,
                 rates: Mapping[str, float] | None = None, target: Target | None = None) -> Balance: ...


def contiguous_splits(n_groups: int, n_stages: int):
    """Every way to cut n_groups consecutive groups into n_stages non-empty stages."""
    if n_stages == 1:
        yield (n_groups,)
        return
    for first in range(1, n_groups - n_stages + 2):
        for rest in contiguous_splits(n_groups - first, n_stages - 1):
            yield (first,) + rest


def stage_costs(topology: Topology, rates: Mapping[str, float] | None = None,
                forward_cost: float = 1.0) -> tuple[float, ...]:
    """Per-stage cost: over the tuples a stage receives (routed by ``Topology.route``), their rate x
    (conjunction ops touching the concept + forward_cost). Rates are per asserted concept (default 1 for every
    concept the source accepts)."""
    if rates is None:
        rates = {c: 1.0 for c in topology.source.concepts}
    touch: list[dict[str, int]] = []
    for stage in topology.stages:
        counts: dict[str, int] = defaultdict(int)
        for op in stage.conjunction_ops:
            counts[op.left] += 1
            if op.right != op.left:
                counts[op.right] += 1
        touch.append(counts)
    costs = [0.0] * len(topology.stages)
    for asserted, rate in rates.items():
        for index, frontier in enumerate(topology.route(asserted)):
            costs[index] += float(rate) * sum(touch[index].get(c, 0) + forward_cost for c in frontier)
    return tuple(costs)


def proportional_tasks(costs: Sequence[float], total: int) -> tuple[int, ...]:
    """Apportion ``total`` tasks by cost (largest remainder), at least one task per stage."""
    n = len(costs)
    total = max(total, n)
    weight = sum(costs)
    ideal = [total * c / weight if weight else total / n for c in costs]
    base = [max(1, int(x)) for x in ideal]
    while sum(base) > total:   # the minimum of one task each may overshoot
        i = max((i for i in range(n) if base[i] > 1), key=lambda i: base[i] - ideal[i])
        base[i] -= 1
    while sum(base) < total:
        i = max(range(n), key=lambda i: ideal[i] - base[i])
        base[i] += 1
    return tuple(base)


def stage_count(k: int, stages: int | None, hint: str | None = None) -> int:
    """The stages a balancer cuts ``k`` NI groups into: ``stages``, default 2 (one when there is a single
    group); more stages than groups is an error."""
    n = stages or min(2, max(k, 1))
    if n > max(k, 1):
        raise TopologyError(f"{n} stages requested but the TBox has only {k} NI groups",
                            hint=hint or f"use --stages <= {k}")
    return n


def paper(analysis: NIAnalysis, *, tasks: int, stages: int | None = None, split=None, rates=None,
          target=None) -> Balance:
    k = len(analysis.groups)
    if split is None:
        n = stage_count(k, stages, hint=f"use --stages <= {k} or an explicit --split")
        size, extra = divmod(k, n)
        split = tuple(size + (1 if i < extra else 0) for i in range(n))
    split = normalise_split(split, k)
    return Balance(split, (max(1, tasks),) * len(split), balancer="paper")


def even(analysis: NIAnalysis, *, tasks: int, stages: int | None = None, split=None, rates=None,
         target=None, forward_cost: float = 1.0) -> Balance:
    k = len(analysis.groups)
    if split is not None:
        candidates = [normalise_split(split, k)]
    else:
        candidates = list(contiguous_splits(k, stage_count(k, stages))) if k else [(0,)]
    best = None
    for candidate in candidates:
        costs = stage_costs(compile_split(analysis, candidate), rates, forward_cost)
        score = (max(costs), sum(costs))
        if best is None or score < best[0]:
            best = (score, candidate, costs)
    _, chosen, costs = best
    parallelism = proportional_tasks(costs, max(1, tasks) * len(chosen))
    return Balance(tuple(chosen), parallelism, tuple(costs), balancer="even")


def even_tasks(total: int, stages: int) -> tuple[int, ...]:
    """``total`` tasks shared evenly by ``stages`` stages (at least one each), the earlier stages taking the rest."""
    base, extra = divmod(max(total, stages), stages)
    return tuple(base + (1 if i < extra else 0) for i in range(stages))


def cost_candidates(analysis: NIAnalysis, *, tasks: int, stages: int | None = None, split=None,
                    single_stage: bool = True, cap: int | None = None) -> list[tuple[tuple[int, ...], Topology]]:
    """The plans the ``cost`` balancer weighs (see the module docstring) with their splits, each with its share
    of the budget and, where a stage's share is above ``cap`` tasks, first with the share capped."""
    k = len(analysis.groups)
    if split is not None:
        splits = [normalise_split(split, k)]
        n = len(splits[0])
    else:
        n = stage_count(k, stages)
        splits = list(contiguous_splits(k, n)) if k else [(0,)]
        if single_stage and stages is None and k and n > 1:
            splits.insert(0, (k,))
    total = max(1, tasks) * n
    out = []
    for s in splits:
        shares = [even_tasks(total, len(s))]
        if cap is not None and max(shares[0]) > cap:
            shares.insert(0, tuple(min(t, max(1, cap)) for t in shares[0]))
        out += [(s, compile_split(analysis, s, share, label="ntm" if len(s) == 1 else "")) for share in shares]
    return out


def cost(analysis: NIAnalysis, *, tasks: int, stages: int | None = None, split=None, rates=None,
         target: Target | None = None, coefficients: Coefficients | None = None,
         single_stage: bool = True) -> Balance:
    target = target or Target()
    coefficients = coefficients or coefficients_for(target)
    cap = target.cores if target.runner == "spark" and target.cores_known else None
    best = None
    for candidate, topology in cost_candidates(analysis, tasks=tasks, stages=stages, split=split,
                                               single_stage=single_stage, cap=cap):
        tps = predict_tps(topology, target, coefficients, rates)
        if best is None or tps > best[0] * (1 + 1e-9):
            best = (tps, candidate, topology)
    tps, chosen, topology = best
    return Balance(chosen, tuple(s.parallelism for s in topology.stages), balancer="cost", predicted_tps=tps)


BALANCERS: dict[str, Callable[..., Balance]] = {"paper": paper, "even": even, "cost": cost}
DEFAULT_BALANCER = "cost"


def get_balancer(name_or_callable) -> Callable[..., Balance]:
    if callable(name_or_callable):
        return name_or_callable
    try:
        return BALANCERS[name_or_callable]
    except KeyError:
        raise TopologyError(f"unknown balancer '{name_or_callable}'",
                            hint=f"choose one of {', '.join(sorted(BALANCERS))} or pass a callable") from None
