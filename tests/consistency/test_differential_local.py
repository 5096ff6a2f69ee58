"""Local runner == brute-force oracle on random TBoxes and streams, for NTM and every LTM split."""
import random

import pytest

from srtopo.consistency.compile import compile_ltm, compile_ntm
from srtopo.consistency.nis import analyse
from srtopo.runners import LocalRunner
from srtopo.testing import run_topology, tuples
from tests.oracle import oracle_reports
from tests.randomgen import compositions, random_stream, random_tbox


def _keys(result):
    keys = [r.key for r in result.reports]
    assert len(keys) == len(set(keys)), "reports must be unique per (subject, time)"
    return set(keys)


@pytest.mark.parametrize("seed", range(220))
def test_random_tbox_all_plans_match_oracle(seed):
    rng = random.Random(seed)
    tbox = random_tbox(rng)
    window = rng.choice([None, 0, 1, 3, 7, 15])
    stream = random_stream(rng, tbox, n=rng.randint(20, 80), n_subjects=rng.randint(1, 6),
                           disorder=rng.choice([0.0, 0.0, 0.2]))
    expected = oracle_reports(tbox.pis, [n.pair for n in tbox.nis], stream, window)
    analysis = analyse(tbox)
    plans = [compile_ntm(analysis)] + [compile_ltm(analysis, s)
                                       for s in compositions(len(analysis.groups), allow_zero=True)]
    for topo in plans:
        got = _keys(run_topology(LocalRunner(), topo, [tuples(stream)], window=window))
        assert got == expected, f"topology {topo.label} (seed {seed}, window {window})"


@pytest.mark.parametrize("seed", range(30))
def test_bounded_lateness_matches_oracle_on_in_order_streams(seed):
    """Eviction and report pruning under a watermark lose nothing when input is in order."""
    rng = random.Random(1000 + seed)
    tbox = random_tbox(rng)
    window = rng.choice([0, 2, 5])
    stream = random_stream(rng, tbox, n=300, n_subjects=4, horizon=400)
    expected = oracle_reports(tbox.pis, [n.pair for n in tbox.nis], stream, window)
    analysis = analyse(tbox)
    for topo in [compile_ntm(analysis), compile_ltm(analysis, [1] * len(analysis.groups) or [0])]:
        result = run_topology(LocalRunner(), topo, [tuples(stream)], window=window, lateness=0)
        assert _keys(result) == expected
        assert result.counters.late == 0
