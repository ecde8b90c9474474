"""Batched and sequential baselines of the E4 paper: PhaElimD, rs-OFUL, EndOA, LinUCB, LinTS."""

import numpy as np
import pytest

from icml24.bandits import (
    EndOfOptimism,
    LinearBandit,
    LinTS,
    LinUCB,
    PhasedElimination,
    RarelySwitchingOFUL,
    end_of_optimism_instance,
    run_batched,
)
from icml24.bandits.least_squares import ArmLeastSquares


def test_least_squares_batch_and_single_updates_agree():
    rng = np.random.default_rng(0)
    arms = rng.normal(size=(4, 3))
    seq = rng.integers(0, 4, 30)
    rewards = rng.normal(size=30)
    batch, single = ArmLeastSquares(arms), ArmLeastSquares(arms)
    batch.add(seq, rewards)
    _ = single.gram_inverse
    for a, r in zip(seq, rewards):
        single.add(np.array([a]), np.array([r]))
    x = arms[seq]
    np.testing.assert_allclose(batch.theta, np.linalg.solve(np.eye(3) + x.T @ x, x.T @ rewards))
    np.testing.assert_allclose(single.gram_inverse, batch.gram_inverse, atol=1e-10)


def test_phased_elimination_batches_and_best_arm():
    policy = PhasedElimination()
    run = run_batched(policy, end_of_optimism_instance(2, 0.2), 10_000, seed=0)
    assert run.num_batches <= 5
    assert 0 in policy.active_ and 1 not in policy.active_  # the gap-1 arm e_2 is eliminated, the best kept
    assert run.pulls[1] < 0.15 * 10_000 < run.pulls[0]


def test_rs_oful_batch_is_det_doubling_length():
    bandit = end_of_optimism_instance(2, 0.2)
    policy = RarelySwitchingOFUL(switch_factor=0.5)
    policy.reset(bandit.arms, 1000, np.random.default_rng(0))
    policy.update(np.array([0, 1, 2, 2]), np.zeros(4))
    counts = policy.next_batch(1000)
    arm = int(np.argmax(counts))
    before = np.linalg.det(policy.stats_.gram)
    x = bandit.arms[arm]
    after_n = np.linalg.det(policy.stats_.gram + counts[arm] * np.outer(x, x))
    after_short = np.linalg.det(policy.stats_.gram + (counts[arm] - 1) * np.outer(x, x))
    assert after_short <= 1.5 * before < after_n


def test_rs_oful_switches_rarely():
    run = run_batched(RarelySwitchingOFUL(), end_of_optimism_instance(2, 0.2), 10_000, seed=0)
    assert 5 < run.num_batches < 200


@pytest.mark.parametrize("policy", [LinUCB(), LinTS()])
def test_sequential_policies_learn(policy):
    bandit = LinearBandit(np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.5, 0]]), np.array([1.0, 0, 0]))
    run = run_batched(policy, bandit, 2000, seed=0)
    assert run.num_batches == 2000
    assert run.pulls[0] > 0.7 * 2000


def test_endoa_block_check_equals_sequential_check():
    """The vectorised per-pull jump test gives the same first jump as a plain loop."""
    bandit = end_of_optimism_instance(2, 0.2)
    policy = EndOfOptimism()
    policy.reset(bandit.arms, 1000, np.random.default_rng(0))
    policy.update(np.repeat(np.arange(3), 3), np.random.default_rng(1).normal(size=9))
    seq = policy.sequence_[:200]
    rewards = bandit.means[seq] + 3.0 * np.random.default_rng(2).normal(size=200)
    used, jumped = policy._first_jump(seq, rewards)
    gram, target = policy.stats_.gram.copy(), policy.stats_.target.copy()
    theta = np.linalg.solve(gram, target)
    log_t = np.log(1000)
    g_t = 2 * (1 + 1 / log_t) * np.log(log_t) + 2 * np.log(2 * log_t)
    expected = 200
    for i, (a, r) in enumerate(zip(seq, rewards)):
        x = bandit.arms[a]
        gram += np.outer(x, x)
        target += r * x
        new = np.linalg.solve(gram, target)
        eps = np.max(np.einsum("kd,de,ke->k", bandit.arms, np.linalg.inv(gram), bandit.arms)) * np.sqrt(g_t)
        if np.abs(new - theta).max() > 2 * eps:
            expected = i + 1
            break
        theta = new
    assert used == expected
    assert jumped == (expected < 200 or used < 200)


def test_endoa_is_fully_sequential_in_batch_count():
    run = run_batched(EndOfOptimism(), end_of_optimism_instance(2, 0.2), 3000, seed=0)
    assert run.num_batches == 3000 and run.regret.shape == (3000,)
