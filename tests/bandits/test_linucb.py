"""Sequential LinUCB with the OFUL radius."""

import numpy as np
import pytest

from icml24.bandits import LinearBandit, LinUCB, run_batched


def test_linucb_learns_the_best_arm():
    bandit = LinearBandit(np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.5, 0]]), np.array([1.0, 0, 0]))
    run = run_batched(LinUCB(), bandit, 2000, random_state=0)
    assert run.num_batches == 2000
    assert run.pulls[0] > 0.7 * 2000


@pytest.mark.parametrize("kwargs,match", [({"noise_std": float("nan")}, "noise_std contains NaN"),
                                          ({"delta": 1.5}, "delta must lie in")])
def test_linucb_rejects_bad_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_batched(LinUCB(**kwargs), LinearBandit(np.eye(2), np.ones(2)), 10, random_state=0)
