"""The bandit behind the choice part's ``auto`` strategy: one incumbent solves every time point, the others are
measured on the same time points now and then, a clearly faster one takes over, a far slower one is probed ever
more rarely."""
from srtopo.solving.bandit import ProbingBandit


def play(bandit: ProbingBandit, cost, steps: int) -> tuple[list, list]:
    """(incumbent per step, (step, challenger) of each probe); ``cost(arm, step)`` is an arm's time at a step."""
    incumbents, probes = [], []
    for step in range(steps):
        arm = bandit.incumbent
        challenger = bandit.challenger()
        bandit.record(cost(arm, step), challenger, None if challenger is None else cost(challenger, step),
                      bandit.warm)
        incumbents.append(arm)
        if challenger is not None:
            probes.append((step, challenger))
    return incumbents, probes


def test_the_first_arm_runs_until_another_is_measured_faster_on_the_same_steps():
    bandit = ProbingBandit(("a", "b", "c"), period=16, first=4, window=3, switch=1.5, block=3)
    costs = {"a": 10.0, "b": 1.0, "c": 5.0}
    incumbents, probes = play(bandit, lambda arm, step: costs[arm], 256)
    assert incumbents[0] == "a" and incumbents[-1] == "b"
    assert incumbents.index("b") <= 4 + 16 * 5         # three probes of b are enough
    assert incumbents[100:].count("b") == len(incumbents[100:])
    assert all(step >= 4 and (step - 4) % 16 < 3 for step, _arm in probes)      # blocks of 3 time points
    assert bandit.switches <= 2


def test_a_hard_stretch_of_the_stream_does_not_decide_for_the_arm_measured_there():
    """Paired probes compare arms on the same time points: a stream whose first 40 time points are 50 times
    harder for every arm keeps the arm that is faster on each of them."""
    bandit = ProbingBandit(("kept", "restart"), period=8, first=2)
    incumbents, _probes = play(bandit, lambda arm, step: (50.0 if step < 40 else 1.0) * {"kept": 1, "restart": 3}[arm],
                               200)
    assert set(incumbents) == {"kept"}


def test_a_change_in_the_stream_changes_the_incumbent():
    bandit = ProbingBandit(("a", "b"), period=8, first=2, window=3, switch=1.5)
    incumbents, _probes = play(bandit, lambda arm, step: {"a": 1.0 if step < 100 else 9.0, "b": 3.0}[arm], 300)
    assert set(incumbents[:100]) == {"a"}
    assert set(incumbents[150:]) == {"b"}


def test_a_far_slower_arm_is_probed_ever_more_rarely():
    """A strategy taking seconds where the incumbent takes milliseconds costs a few probes, each further apart
    (after 2, 4, 8... periods)."""
    bandit = ProbingBandit(("fast", "slow"), period=16, first=4)
    costs = {"fast": 0.002, "slow": 2.0}
    incumbents, probes = play(bandit, lambda arm, step: costs[arm], 2048)
    steps = [step for step, arm in probes if arm == "slow" and (step - 4) % 16 == 0]     # each block's start
    assert set(incumbents) == {"fast"}
    assert 3 <= len(steps) <= 8
    gaps = [b - a for a, b in zip(steps, steps[1:])]
    assert gaps == sorted(gaps) and gaps[-1] >= 4 * gaps[0]


def test_an_arm_faster_on_some_probes_only_does_not_take_over():
    """The default takes the median of a block's seven measured probes: lucky ones alone do not switch."""
    bandit = ProbingBandit(("a", "b"))
    incumbents, probes = play(bandit, lambda arm, step: {"a": 1.0, "b": 0.1 if step % 3 == 0 else 1.6}[arm], 400)
    assert set(incumbents) == {"a"} and len(probes) > 20


def test_one_slow_probe_does_not_switch():
    bandit = ProbingBandit(("a", "b"), period=4, first=0, window=3)
    incumbents, _probes = play(bandit, lambda arm, step: 0.01 if (arm, step) == ("b", 4) else {"a": 1.0, "b": 2.0}[arm],
                               64)
    assert set(incumbents) == {"a"}
