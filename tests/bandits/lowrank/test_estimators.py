"""Offline estimators: IPS, SIPS and RS-PE for policy evaluation; greedy IPS, SBPI and RS-BPI for BPI."""

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.bandits.lowrank import IPS, RSBPI, RSPE, SBPI, SIPS, IPSGreedy, LowRankBandit


@pytest.fixture(scope="module")
def instance():
    env = LowRankBandit.official_instance(30, 30, 2, random_state=0)
    data = env.collect(20_000, random_state=1) + (env.uniform_behaviour,)
    return env, data


def test_ips_matches_its_definition(instance):
    env, data = instance
    contexts, arms, rewards, behaviour = data
    target = env.optimal_arms
    expected = np.mean([(a == target[c]) * 30.0 * r for c, a, r in zip(contexts, arms, rewards, strict=True)])
    assert IPS().fit(*data).evaluate(target) == pytest.approx(expected)


def test_rspe_beats_ips_and_sips(instance):
    env, data = instance
    target = env.optimal_arms
    truth = env.value(target)
    rspe = abs(RSPE(2).fit(*data).evaluate(target) - truth)
    assert rspe < abs(IPS().fit(*data).evaluate(target) - truth)
    assert rspe < abs(SIPS(2).fit(*data).evaluate(target) - truth)
    assert rspe < 0.5


def test_rspe_noiseless_error_is_only_misspecification():
    # without reward noise only the phase-1 subspace error remains; it shrinks as T grows
    env = LowRankBandit.gaussian_instance(15, 12, 2, random_state=0, noise_std=0.0)
    errors = []
    for horizon in (2_000, 50_000):
        data = env.collect(horizon, random_state=0) + (env.uniform_behaviour,)
        fit = RSPE(2, tau=1e-10).fit(*data)
        errors.append(np.abs(fit.reward_matrix_ - env.reward_matrix).max())
    assert errors[1] < errors[0] and errors[1] < 0.01


def test_split_uses_disjoint_phases(instance):
    env, data = instance
    fit = RSPE(2, split=0.5).fit(*data)
    half = len(data[0]) // 2
    phase1 = SIPS(2).fit(*(array[:half] for array in data[:3]), data[3])
    np.testing.assert_allclose(fit.ips_matrix_, phase1.ips_matrix_)


def test_bpi_policies(instance):
    env, data = instance
    best = env.optimal_value()
    rsbpi = env.value(RSBPI(2).fit(*data).policy_)
    assert best - rsbpi < 0.5
    assert rsbpi >= env.value(SBPI(2).fit(*data).policy_) - 1e-9
    assert env.value(IPSGreedy().fit(*data).policy_) <= best


def test_estimator_validation():
    """Parameters are checked at fit (the estimator contract: __init__ stores them verbatim)."""
    tiny = ([0], [0], [1.0], np.array([[1.0]]))
    with pytest.raises(ValueError, match="split"):
        RSPE(2, split=1.5).fit(*tiny)
    with pytest.raises(ValueError, match="tau contains NaN"):
        RSPE(2, tau=float("nan")).fit(*tiny)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="rank must be an integer"):
            SIPS(bad).fit(*tiny)
    with pytest.raises(ValueError, match="zero behaviour probability"):
        RSPE(1).fit([0], [1], [1.0], np.array([[1.0, 0.0]]))


@pytest.mark.parametrize("estimator", [IPS(), IPSGreedy(), SIPS(2), SBPI(2), RSPE(2), RSBPI(2)], ids=repr)
def test_every_estimator_used_before_fit_raises_not_fitted(estimator):
    with pytest.raises(NotFittedError, match="fit"):
        estimator.evaluate(np.zeros(3, dtype=int))
    with pytest.raises(NotFittedError, match="fit"):
        _ = estimator.policy_
    with pytest.raises(NotFittedError):
        _ = estimator.reward_matrix_


@pytest.mark.parametrize("estimator", [IPS(), SIPS(2), RSPE(2)], ids=repr)
def test_a_nan_reward_is_rejected_by_name(instance, estimator):
    _, (contexts, arms, rewards, behaviour) = instance
    rewards = rewards.copy()
    rewards[5] = np.nan
    with pytest.raises(ValueError, match="rewards contains NaN or infinite values"):
        estimator.fit(contexts, arms, rewards, behaviour)


def test_rspe_on_too_few_samples_warns_instead_of_returning_zero_silently():
    env = LowRankBandit.official_instance(10, 10, 2, random_state=0)
    data = env.collect(1, random_state=0) + (env.uniform_behaviour,)
    with pytest.warns(UserWarning, match=r"phase 2 saw 1 distinct \(context, arm\) pairs, fewer than the 36"):
        estimate = RSPE(2).fit(*data).evaluate(env.optimal_arms)
    assert abs(estimate) < 1e-3 < env.optimal_value()  # what the warning is about: shrunk to ~0


def test_phase1_samples_is_the_official_protocol(instance):
    """Phase 1 sees the first T samples, phase 2 all of them: equal to our RS-PE only when T is all samples."""
    env, data = instance
    contexts, arms, rewards, behaviour = data
    leaky = RSPE(2, phase1_samples=2000).fit(*data)
    np.testing.assert_allclose(leaky.ips_matrix_, SIPS(2).fit(contexts[:2000], arms[:2000], rewards[:2000],
                                                              behaviour).ips_matrix_)
    subspace_only = RSPE(2).fit(contexts[:2000], arms[:2000], rewards[:2000], behaviour)
    assert not np.allclose(leaky.theta_, subspace_only.theta_)  # the regression used the other 18k samples
    everything = RSPE(2, phase1_samples=len(rewards)).fit(*data)
    np.testing.assert_allclose(everything.theta_, RSPE(2).fit(*data).theta_)
    with pytest.raises(ValueError, match="phase1_samples must be a positive int and cannot be combined with split"):
        RSPE(2, split=0.5, phase1_samples=100).fit(*data)
