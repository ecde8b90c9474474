import numpy as np
import pytest

from icml24.rl.failures import (
    BayesianOptimization,
    EpsilonGreedy,
    FailureEnv,
    RandomSearch,
    Threshold,
    exhaustive_failure_rates,
)


@pytest.fixture(scope="module")
def env_truth(nut):
    model, _, _, x, y, grid = nut
    return FailureEnv(model, x, y, grid, precompute=True), exhaustive_failure_rates(model, x, y, grid)


@pytest.mark.parametrize("cls", [RandomSearch, EpsilonGreedy, Threshold, BayesianOptimization])
def test_each_baseline_spends_exactly_its_budget_and_is_reproducible(env_truth, cls):
    env, _ = env_truth
    first = cls().explore(env, 150, random_state=3)
    again = cls().explore(env, 150, random_state=3)
    assert first.num_queries == 150
    assert (first.actions == again.actions).all() and (first.failures == again.failures).all()


def test_random_search_finds_failures_at_the_global_rate(env_truth):
    env, truth = env_truth
    result = RandomSearch().explore(env, 2000, random_state=0)
    assert abs(result.failures_per_query - truth.global_rate) < 0.04
    assert len(np.unique(result.actions)) == 125


@pytest.mark.parametrize("cls", [EpsilonGreedy, BayesianOptimization])
def test_adaptive_baselines_beat_random_where_failures_concentrate(env_truth, cls):
    env, truth = env_truth
    adaptive = cls().explore(env, 1500, random_state=1).failures_per_query
    random = RandomSearch().explore(env, 1500, random_state=1).failures_per_query
    assert adaptive > 1.3 * random, (adaptive, random, truth.global_rate)


def test_threshold_stays_on_a_failing_action_and_leaves_after_patience_misses(env_truth):
    env, _ = env_truth
    result = Threshold(patience=2).explore(env, 300, random_state=0)
    switches = np.flatnonzero(np.diff(result.actions) != 0) + 1
    for s in switches[:20]:  # before each switch, the last run of the action had 2 correct predictions
        start = switches[switches < s].max() if (switches < s).any() else 0
        assert (~result.failures[start:s]).sum() == 2


def test_bayes_opt_posterior_interpolates_observed_rates(env_truth):
    env, _ = env_truth
    bo = BayesianOptimization(noise=1e-4)
    bo._start(env)
    bo.observe(0, True)
    bo.observe(124, False)
    mean, std = bo.posterior()
    assert mean[0] > 0.9 and mean[124] < 0.1 and std[62] > std[0]


def test_baselines_refuse_micro_mode_and_zero_budget(nut):
    model, _, _, x, y, grid = nut
    with pytest.raises(ValueError, match="macro"):
        RandomSearch().explore(FailureEnv(model, x, y, grid, mode="micro"), 10)
    with pytest.raises(ValueError, match="budget"):
        RandomSearch().explore(FailureEnv(model, x, y, grid), 0)
    with pytest.raises(ValueError, match="epsilon"):  # stored as given, checked by explore
        EpsilonGreedy(1.5).explore(FailureEnv(model, x, y, grid), 10)
