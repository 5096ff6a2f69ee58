"""The bandit behind the choice part's ``auto`` strategy: it tries every arm, then runs the fastest, and
re-tries the others so that a change in the stream changes its choice."""
from srtopo.rules.bandit import StepBandit


def play(bandit: StepBandit, cost, steps: int) -> list:
    chosen = []
    for step in range(steps):
        arm = bandit.choose()
        bandit.record(arm, cost(arm, step))
        chosen.append(arm)
    return chosen


def test_explores_every_arm_then_exploits_the_fastest():
    bandit = StepBandit(("a", "b", "c"), explore=8, block=4, period=64)
    costs = {"a": 10.0, "b": 1.0, "c": 5.0}
    chosen = play(bandit, lambda arm, step: costs[arm], 256)
    assert chosen[:24].count("a") == chosen[:24].count("b") == chosen[:24].count("c") == 8
    assert chosen[24:].count("b") / len(chosen[24:]) > 0.85
    assert {"a", "c"} <= set(chosen[64:])                 # re-tried later
    assert bandit.best() == "b"


def test_a_change_in_the_stream_changes_the_choice():
    bandit = StepBandit(("a", "b", "c"), explore=4, block=2, window=8, period=16)
    chosen = play(bandit, lambda arm, step: {"a": 3.0, "b": 1.0 if step < 100 else 9.0, "c": 2.0}[arm], 300)
    assert chosen[60:100].count("b") > 30
    assert chosen[200:].count("c") > 80 and bandit.best() == "c"


def test_one_slow_step_does_not_decide():
    bandit = StepBandit(("a", "b"), explore=8, block=4)
    chosen = play(bandit, lambda arm, step: 50.0 if (arm, step) == ("b", 4) else {"a": 2.0, "b": 1.0}[arm], 64)
    assert chosen[16:].count("b") > 40
