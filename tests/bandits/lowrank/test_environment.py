"""The low-rank contextual bandit: sampling under a behaviour policy, values, instances, input checks."""

import numpy as np
import pytest

from icml24.bandits.lowrank import LowRankBandit, as_policy_matrix


def test_collect_follows_the_behaviour_policy():
    env = LowRankBandit(np.zeros((3, 4)), context_probs=[0.5, 0.3, 0.2], noise_std=0.0)
    behaviour = np.array([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.5]])
    contexts, arms, rewards = env.collect(200_000, behaviour, random_state=0)
    joint = np.bincount(contexts * 4 + arms, minlength=12).reshape(3, 4) / len(arms)
    np.testing.assert_allclose(joint, np.array([0.5, 0.3, 0.2])[:, None] * behaviour, atol=4e-3)
    assert np.all(rewards == 0.0)


def test_values_and_validation():
    env = LowRankBandit(np.array([[1.0, 3.0], [2.0, 0.0]]), context_probs=[0.25, 0.75])
    assert env.optimal_value() == pytest.approx(0.25 * 3 + 0.75 * 2)
    assert env.value(np.array([[0.5, 0.5], [0.5, 0.5]])) == pytest.approx(0.25 * 2 + 0.75 * 1)
    with pytest.raises(ValueError, match="integer arms"):
        as_policy_matrix(np.array([0.5, 1.0]), (2, 2))
    with pytest.raises(ValueError, match="context_probs"):
        LowRankBandit(np.ones((2, 2)), context_probs=[1.0, 0.0])
    with pytest.raises(ValueError, match="rank"):
        LowRankBandit.official_instance(5, 5, rank=6)


def test_official_instance_is_rank_r_and_seeded():
    env = LowRankBandit.official_instance(20, 15, 2, random_state=0)
    assert np.linalg.matrix_rank(env.reward_matrix) == 2
    again = LowRankBandit.official_instance(20, 15, 2, random_state=0)
    np.testing.assert_array_equal(env.reward_matrix, again.reward_matrix)


@pytest.mark.parametrize("kwargs,match", [
    ({"reward_matrix": [[1.0, np.nan], [0.0, 1.0]]}, "reward_matrix contains NaN"),
    ({"noise_std": float("nan")}, "noise_std contains NaN"),
    ({"context_probs": [np.nan, 1.0]}, "context_probs contains NaN"),
])
def test_bad_input_is_rejected_by_name(kwargs, match):
    args = {"reward_matrix": np.ones((2, 2)), **kwargs}
    with pytest.raises(ValueError, match=match):
        LowRankBandit(**args)
