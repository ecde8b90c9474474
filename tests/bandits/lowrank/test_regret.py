"""Regret minimization: RS-RMIN (our reconstruction) and its LinUCB one-hot and per-pair UCB baselines."""

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.bandits.lowrank import RSRMIN, ExploreSubspaceRefine, LinUCBOneHot, LowRankBandit, PairUCB


def test_regret_learners_run_and_are_deterministic():
    env = LowRankBandit.gaussian_instance(10, 8, 1, random_state=0)
    for learner in (RSRMIN(1), LinUCBOneHot(), PairUCB()):
        first = learner.run(env, 600, random_state=3)
        assert first.shape == (600,) and np.all(first >= -1e-12)
        np.testing.assert_array_equal(first, learner.run(env, 600, random_state=3))
    rsrmin = RSRMIN(1)
    rsrmin.run(env, 600, random_state=3)
    assert rsrmin.exploration_rounds_ == int(np.ceil(0.5 * 18**0.75 * np.sqrt(600)))


def test_rsrmin_beats_uniform_play():
    env = LowRankBandit.gaussian_instance(20, 20, 1, random_state=1, scale=2.0)
    regret = RSRMIN(1).run(env, 3000, random_state=0)
    uniform = env.reward_matrix.max(axis=1).mean() - env.reward_matrix.mean()
    assert regret.sum() < 0.5 * uniform * 3000


@pytest.mark.parametrize("learner", [RSRMIN(1), LinUCBOneHot(), PairUCB()], ids=repr)
def test_learners_before_run_raise_not_fitted(learner):
    with pytest.raises(NotFittedError, match="call run"):
        _ = learner.regret_


@pytest.mark.parametrize("make,match", [(lambda: RSRMIN(1, noise_std=float("nan")), "noise_std contains NaN"),
                                        (lambda: LinUCBOneHot(delta=2.0), "delta must lie in"),
                                        (lambda: PairUCB(noise_std=-1.0), "noise_std must be >= 0")])
def test_bad_hyperparameters_are_rejected_by_name(make, match):
    learner = make()  # stored as given (scikit-learn's contract), checked when run starts
    with pytest.raises(ValueError, match=match):
        learner.run(LowRankBandit.gaussian_instance(3, 3, 1, random_state=0), 10, random_state=0)


def test_estr_is_rsrmin_with_the_sqrt_r_m_plus_n_t_exploration():
    env = LowRankBandit.gaussian_instance(10, 8, 1, random_state=0)
    estr = ExploreSubspaceRefine(1)
    regret = estr.run(env, 600, random_state=3)
    assert estr.exploration_rounds_ == int(np.ceil(np.sqrt(1 * 18 * 600)))
    same = RSRMIN(1, exploration_rounds=estr.exploration_rounds_).run(env, 600, random_state=3)
    np.testing.assert_array_equal(regret, same)
    assert "ExploreSubspaceRefine(rank=1" in repr(estr)
