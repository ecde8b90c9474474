"""EndOA (Lattimore & Szepesvari 2017): the success phase checked in blocks equals the per-pull check."""

import numpy as np
import pytest

from icml24.bandits import EndOfOptimism, end_of_optimism_instance, run_batched


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
    run = run_batched(EndOfOptimism(), end_of_optimism_instance(2, 0.2), 3000, random_state=0)
    assert run.num_batches == 3000 and run.regret.shape == (3000,)


def test_endoa_rejects_bad_hyperparameters():
    with pytest.raises(ValueError, match="block must be >= 1"):
        run_batched(EndOfOptimism(block=0), end_of_optimism_instance(), 100, random_state=0)
    with pytest.raises(ValueError, match="c contains NaN"):
        run_batched(EndOfOptimism(c=float("nan")), end_of_optimism_instance(), 100, random_state=0)
