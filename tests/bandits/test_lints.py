"""Sequential linear Thompson sampling."""

import numpy as np
import pytest

from icml24.bandits import LinearBandit, LinTS, run_batched


def test_lints_learns_the_best_arm_and_is_seeded():
    bandit = LinearBandit(np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.5, 0]]), np.array([1.0, 0, 0]))
    run = run_batched(LinTS(), bandit, 2000, random_state=0)
    assert run.num_batches == 2000
    assert run.pulls[0] > 0.7 * 2000
    np.testing.assert_array_equal(run.pulls, run_batched(LinTS(), bandit, 2000, random_state=0).pulls)


def test_lints_rejects_bad_hyperparameters():
    with pytest.raises(ValueError, match="scale contains NaN"):
        run_batched(LinTS(scale=float("nan")), LinearBandit(np.eye(2), np.ones(2)), 10, random_state=0)
