import numpy as np
import pytest

from icml24.bandits.lowrank import IPS, RSBPI, RSPE, SBPI, SIPS, IPSGreedy, LowRankBandit
from icml24.bandits.lowrank.regret import RSRMIN, LinUCBOneHot, PairUCB


@pytest.fixture(scope="module")
def instance():
    env = LowRankBandit.official_instance(30, 30, 2, rng=0)
    data = env.collect(20_000, rng=1) + (env.uniform_behaviour,)
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
    env = LowRankBandit.gaussian_instance(15, 12, 2, rng=0, noise_std=0.0)
    errors = []
    for horizon in (2_000, 50_000):
        data = env.collect(horizon, rng=0) + (env.uniform_behaviour,)
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
    with pytest.raises(ValueError, match="split"):
        RSPE(2, split=1.5)
    with pytest.raises(RuntimeError, match="not fitted"):
        RSPE(2).evaluate(np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="zero behaviour probability"):
        RSPE(1).fit([0], [1], [1.0], np.array([[1.0, 0.0]]))


def test_regret_learners_run_and_are_deterministic():
    env = LowRankBandit.gaussian_instance(10, 8, 1, rng=0)
    for learner in (RSRMIN(1), LinUCBOneHot(), PairUCB()):
        first = learner.run(env, 600, rng=3)
        assert first.shape == (600,) and np.all(first >= -1e-12)
        np.testing.assert_array_equal(first, learner.run(env, 600, rng=3))
    rsrmin = RSRMIN(1)
    rsrmin.run(env, 600, rng=3)
    assert rsrmin.exploration_rounds_ == int(np.ceil(0.5 * 18**0.75 * np.sqrt(600)))


def test_rsrmin_beats_uniform_play():
    env = LowRankBandit.gaussian_instance(20, 20, 1, rng=1, scale=2.0)
    regret = RSRMIN(1).run(env, 3000, rng=0)
    uniform = env.reward_matrix.max(axis=1).mean() - env.reward_matrix.mean()
    assert regret.sum() < 0.5 * uniform * 3000
