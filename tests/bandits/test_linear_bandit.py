"""The linear-bandit environment and the E4 paper's instances."""

import numpy as np
import pytest

from icml24.bandits import LinearBandit, end_of_optimism_instance, random_instance


def test_end_of_optimism_instance_matches_the_paper():
    bandit = end_of_optimism_instance(3, 0.1)
    expected = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.9, 0.2, 0], [0.9, 0, 0.2]])
    np.testing.assert_allclose(bandit.arms, expected)
    assert bandit.best_arm == 0 and bandit.gaps[3] == pytest.approx(0.1)
    np.testing.assert_array_equal(bandit.optimal_arms, [0])


def test_random_instance_reproduces_the_official_draw():
    bandit = random_instance(5, 3, np.random.RandomState(1))
    legacy = np.random.RandomState(1).uniform(0, 1, (3, 5))
    np.testing.assert_allclose(bandit.arms[1:], legacy.T[1:])
    np.testing.assert_allclose(bandit.arms[0], [1, 0, 0])


def test_pull_draws_one_array_around_the_means():
    bandit = LinearBandit(np.eye(2), np.array([1.0, 0.5]), noise_std=0.0)
    np.testing.assert_array_equal(bandit.pull([0, 1, 1], np.random.default_rng(0)), [1.0, 0.5, 0.5])


def test_ties_for_the_best_arm_are_listed():
    bandit = LinearBandit(np.array([[1.0, 0.0], [0.9, 0.2], [0.0, 1.0]]), np.array([1.0, 0.5]))
    np.testing.assert_array_equal(bandit.optimal_arms, [0, 1])


@pytest.mark.parametrize("kwargs,match", [
    ({"noise_std": float("nan")}, "noise_std contains NaN"),
    ({"noise_std": -1.0}, "noise_std must be >= 0"),
    ({"arms": [[1.0, np.nan], [0.0, 1.0]]}, "arms contains NaN"),
    ({"theta": [np.inf, 0.0]}, "theta contains NaN"),
    ({"theta": [1.0, 0.0, 0.0]}, "theta must have shape"),
])
def test_bad_input_is_rejected_by_name(kwargs, match):
    args = {"arms": np.eye(2), "theta": np.array([1.0, 0.0]), **kwargs}
    with pytest.raises(ValueError, match=match):
        LinearBandit(**args)
