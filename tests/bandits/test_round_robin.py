"""RoundRobin: the non-adaptive uniform policy (the null of E4's log T regret claims)."""

import numpy as np

from icml24.bandits import RoundRobin, end_of_optimism_instance, run_batched


def test_every_arm_is_pulled_equally_in_one_batch_and_regret_is_linear():
    bandit = end_of_optimism_instance(2, 0.01)
    runs = {horizon: run_batched(RoundRobin(), bandit, horizon, random_state=0) for horizon in (3000, 30_001)}
    assert runs[3000].num_batches == 1 and runs[3000].pulls.tolist() == [1000, 1000, 1000]
    assert sorted(runs[30_001].pulls.tolist()) == [10_000, 10_000, 10_001]
    mean_gap = bandit.gaps.mean()
    assert np.isclose(runs[3000].final_regret, 3000 * mean_gap)
    assert runs[30_001].final_regret > 9.9 * runs[3000].final_regret  # linear in T, not log T


def test_pulls_alternate_between_arms():
    policy = RoundRobin()
    assert policy.pull_order(np.array([2, 3, 1])).tolist() == [0, 1, 2, 0, 1, 1]
