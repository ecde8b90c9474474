import random

import numpy as np
import pytest
import torch

from icml24._validation import NotFittedError
from icml24.rl.failures import DQNExplorer, FailureEnv


def test_dqn_counts_every_training_query_keeps_global_rng_and_is_reproducible(nut):
    model, _, _, x, y, grid = nut
    env = FailureEnv(model, x, y, grid, precompute=True)
    states = random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state().clone()
    first = DQNExplorer(total_timesteps=200, learning_starts=50, random_state=4).fit(env)
    roll = first.rollout(env, 40)
    assert random.getstate() == states[0] and (np.random.get_state()[1] == states[1]).all()
    assert torch.equal(torch.get_rng_state(), states[2])
    assert first.training_.num_queries == 200 and roll.num_queries == 40 and roll.q_softmax.shape == (40, 125)
    np.testing.assert_allclose(roll.q_softmax.sum(1), 1, atol=1e-5)
    again = DQNExplorer(total_timesteps=200, learning_starts=50, random_state=4).fit(env)
    assert (again.training_.actions == first.training_.actions).all()
    assert (again.rollout(env, 40).actions == roll.actions).all()


def test_dqn_learns_to_prefer_failing_actions(nut):
    model, _, _, x, y, grid = nut
    env = FailureEnv(model, x, y, grid, precompute=True)
    explorer = DQNExplorer(total_timesteps=1500, random_state=0).fit(env)
    greedy = explorer.rollout(env, 200, deterministic=True).failures_per_query
    random_rate = explorer.training_.failures[:150].mean()  # epsilon ~1 at the start: random queries
    assert greedy > 1.5 * random_rate


def test_micro_mode_trains_too_and_bad_settings_are_refused(nut):
    model, _, _, x, y, grid = nut
    env = FailureEnv(model, x, y, grid, mode="micro", max_steps=10)
    roll = DQNExplorer(total_timesteps=100, learning_starts=20, random_state=0).fit(env).rollout(env, 3)
    assert roll.num_queries >= 3 and roll.q_softmax.shape == (3, 3)
    with pytest.raises(NotFittedError):
        DQNExplorer().rollout(env, 1)
    with pytest.raises(ValueError, match="exploration_final_eps"):
        DQNExplorer(exploration_final_eps=0.9, exploration_initial_eps=0.5).fit(env)


@pytest.mark.parametrize("kwargs, match", [
    ({"buffer_size": 0}, "buffer_size"), ({"learning_rate": float("nan")}, "learning_rate"),
    ({"learning_rate": 0.0}, "learning_rate"), ({"train_freq": 0}, "train_freq"), ({"batch_size": 0}, "batch_size"),
    ({"learning_starts": -1}, "learning_starts"), ({"exploration_fraction": 0.0}, "exploration_fraction"),
    ({"gamma": 1.5}, "gamma"), ({"net_arch": (64, 0)}, "net_arch"), ({"total_timesteps": 0}, "total_timesteps"),
])
def test_bad_dqn_settings_are_refused_before_training(kwargs, match, nut):
    model, _, _, x, y, grid = nut
    env = FailureEnv(model, x, y, grid, precompute=True)
    with pytest.raises(ValueError, match=match):
        DQNExplorer(**kwargs).fit(env)


def test_the_official_configuration_as_it_runs_never_updates_below_50k_steps(nut):
    from icml24.rl.failures import OFFICIAL_SB3_2_2_1

    model, _, _, x, y, grid = nut
    env = FailureEnv(model, x, y, grid, precompute=True)
    official = DQNExplorer.official(total_timesteps=300, random_state=0).fit(env)
    assert official.learning_starts == OFFICIAL_SB3_2_2_1["learning_starts"] == 50_000
    assert official.n_updates_ == 0 and official.model_.learning_rate == 1e-4
    ours = DQNExplorer(total_timesteps=300, random_state=0).fit(env)
    assert ours.n_updates_ == 200  # one update per step after learning_starts = 100
