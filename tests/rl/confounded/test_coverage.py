"""The stage distribution d_t(x) and the coverage ratio C(pi) = max_t max_x d_t^pi(x) / d_t^b(x)."""

import numpy as np
import pytest

from icml24.rl import (
    HistoryInstrument,
    continuous_toy,
    coverage_ratio,
    deterministic_policies,
    partial_coverage_toy,
    stage_distribution,
    tabular_toy,
)


@pytest.mark.parametrize("make,n_actions", [(tabular_toy, 2), (partial_coverage_toy, 3)])
def test_stage_distribution_matches_the_empirical_cells(make, n_actions):
    pomdp = make()
    instrument = HistoryInstrument(n_actions, n_obs=3, n_o0=2)
    pi = deterministic_policies(3, n_actions, 3)[1]
    for policy, seed in ((None, 0), (pi, 1)):
        data = pomdp.sample(100000, np.random.default_rng(seed), policy=policy)
        for t, d in enumerate(stage_distribution(pomdp, policy)):
            assert d.shape == (instrument.dim(t),) and d.sum() == pytest.approx(1.0)
            empirical = np.bincount(instrument.index(data, t), minlength=d.size) / data.n
            assert np.abs(empirical - d).max() < 5e-3


def test_coverage_ratio_is_one_for_the_behaviour_law_and_large_for_the_rare_action():
    pomdp = partial_coverage_toy()
    pols = deterministic_policies(3, 3, 3)
    ratios = np.array([coverage_ratio(pomdp, pi) for pi in pols])
    assert np.all(ratios >= 1.0)
    uses_rare = np.array([(pi[0].argmax(axis=1) == 2).any() for pi in pols])
    rare_in_cell0 = np.array([pi[0, 0].argmax() == 2 for pi in pols])  # where the latent state is mostly 0
    best = int(np.argmax([pomdp.value(pi) for pi in pols]))
    assert not uses_rare[best] and ratios[best] < 50  # the optimal policy is covered
    assert ratios[rare_in_cell0].min() > 3 * ratios[~uses_rare].max()  # the rare action where it is rarely logged


def test_a_policy_the_behaviour_never_reaches_has_infinite_coverage_ratio():
    pomdp = tabular_toy()
    pomdp.behaviour = np.array([[1.0, 0.0], [1.0, 0.0]])  # action 1 never logged
    assert coverage_ratio(pomdp, deterministic_policies(3, 2, 3)[-1]) == np.inf


def test_stage_distribution_refuses_continuous_observations():
    with pytest.raises(ValueError, match="discrete"):
        stage_distribution(continuous_toy())
