"""Confounding-blind baselines: unbiased without confounding (IS, DR), biased with it."""

import numpy as np
import pytest

from icml24.rl import NaiveObservationMDP, deterministic_policies, doubly_robust, importance_sampling, tabular_toy


@pytest.fixture(scope="module")
def logs():
    out = {}
    for conf in (0.0, 1.0):
        pomdp = tabular_toy(confounding=conf)
        data = pomdp.sample(60000, np.random.default_rng(int(conf)))
        out[conf] = (pomdp, data, NaiveObservationMDP(3, 2).fit(data))
    return out


def _bias(pomdp, values):
    truth = np.array([pomdp.value(pi) for pi in deterministic_policies(3, 2, 3)])
    return np.abs(np.asarray(values) - truth).mean()


@pytest.mark.parametrize("method", [importance_sampling, doubly_robust])
def test_is_and_dr_are_consistent_without_confounding_and_biased_with_it(logs, method):
    pols = deterministic_policies(3, 2, 3)
    pomdp, data, model = logs[0.0]
    assert _bias(pomdp, [method(data, pi, model) for pi in pols]) < 0.03
    pomdp, data, model = logs[1.0]
    assert _bias(pomdp, [method(data, pi, model) for pi in pols]) > 0.15


def test_naive_mdp_is_biased_under_confounding(logs):
    pomdp, data, model = logs[1.0]
    assert _bias(pomdp, [model.value(pi) for pi in deterministic_policies(3, 2, 3)]) > 0.15


def test_naive_value_equals_the_mean_of_its_q_function(logs):
    _, data, model = logs[1.0]
    pi = deterministic_policies(3, 2, 3)[4]
    q, v = model.q_values(pi)
    assert model.value(pi) == pytest.approx(float(model.initial_ @ v[0]))


def test_behaviour_propensity_is_read_per_cell(logs):
    _, data, model = logs[1.0]
    mask = (data.obs[:, 0] == 2)
    assert model.behaviour_[0, 2, 1] == pytest.approx(data.actions[mask, 0].mean())


def test_not_fitted():
    from icml24._validation import NotFittedError

    with pytest.raises(NotFittedError):
        NaiveObservationMDP(3, 2).value(np.ones((3, 2)) / 2)


def test_population_fit_is_the_limit_of_the_sampled_fit(logs):
    pomdp, data, model = logs[1.0]
    population = NaiveObservationMDP(3, 2).fit_population(pomdp)
    pols = deterministic_policies(3, 2, 3)
    assert max(abs(population.value(pi) - model.value(pi)) for pi in pols) < 0.02
    np.testing.assert_allclose(population.behaviour_.sum(axis=2), 1.0)
    with pytest.raises(ValueError, match="cells"):
        NaiveObservationMDP(4, 2).fit_population(pomdp)


def test_naive_bias_without_confounding_is_partial_observability_only():
    blind = tabular_toy(confounding=0.0)
    model = NaiveObservationMDP(3, 2).fit_population(blind)
    bias = _bias(blind, [model.value(pi) for pi in deterministic_policies(3, 2, 3)])
    assert 0.03 < bias < 0.1  # o is not a state even when the behaviour ignores the latent one
    confounded = tabular_toy()
    model = NaiveObservationMDP(3, 2).fit_population(confounded)
    assert _bias(confounded, [model.value(pi) for pi in deterministic_policies(3, 2, 3)]) > 3 * bias
