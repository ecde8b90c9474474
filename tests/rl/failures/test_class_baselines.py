"""The official baselines as they run: random actions, an adaptive choice of the image's class."""

import numpy as np
import pytest

from icml24.rl.failures import ClassEpsilonGreedy, ClassThreshold, FailureEnv, RandomSearch


@pytest.fixture(scope="module")
def env(nut):
    model, _, _, x, y, grid = nut
    return FailureEnv(model, x, y, grid, precompute=True)


@pytest.mark.parametrize("cls", [ClassEpsilonGreedy, ClassThreshold])
def test_exactly_budget_queries_reproducible_and_actions_uniform(env, cls):
    first = cls().explore(env, 1500, random_state=3)
    assert first.num_queries == 1500
    assert (cls().explore(env, 1500, random_state=3).actions == first.actions).all()
    counts = np.bincount(first.actions, minlength=125)
    assert counts.min() > 0 and counts.max() < 3 * counts.mean()  # actions are not adapted


def test_epsilon_greedy_follows_the_official_weight_update(env):
    explorer = ClassEpsilonGreedy()
    explorer._start([np.arange(3), np.arange(2), np.array([], dtype=int)])
    explorer.observe(0, True)
    explorer.observe(1, False)
    np.testing.assert_allclose(explorer.weights_, [1.1, 0.9, 1.0])
    for _ in range(12):
        explorer.observe(1, False)
    assert explorer.weights_[1] == 0.01  # floored where it reaches 0 (float steps may leave 1e-16 above it)
    rng = np.random.default_rng(0)
    assert 2 not in {explorer.pick_class(rng) for _ in range(200)}  # a class absent from the pool is never drawn
    explorer.explore(env, 500, random_state=0)
    assert (explorer.weights_ > 0).all()


def test_threshold_switches_class_after_patience_correct_predictions(env):
    explorer = ClassThreshold(patience=5)
    result = explorer.explore(env, 400, random_state=1)
    assert abs(result.failures_per_query - RandomSearch().explore(env, 4000, random_state=1).failures_per_query) < 0.15
    with pytest.raises(ValueError, match="patience"):  # stored as given, checked by explore
        ClassThreshold(patience=0).explore(env, 10)
    with pytest.raises(ValueError, match="epsilon"):
        ClassEpsilonGreedy(epsilon=float("nan")).explore(env, 10)
