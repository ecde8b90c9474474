"""Ridge least squares on a fixed arm set, from per-arm sufficient statistics."""

import numpy as np

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
    assert batch.num_pulls == 30
