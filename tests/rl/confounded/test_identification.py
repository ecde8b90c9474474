"""Identification: the bridge chain with the true bridges equals exact DP, on many random instances."""

import itertools

import numpy as np
import pytest

from icml24.rl import (
    DeltaFeatures,
    RBFFeatures,
    chain_gradients,
    chain_value,
    continuous_toy,
    deterministic_policies,
    random_continuous,
    random_tabular,
    tabular_toy,
    true_bridges,
)


def _policies(pomdp, rng, n_random=5):
    pols = list(deterministic_policies(pomdp.n_cells, pomdp.n_actions, pomdp.horizon))
    return pols + list(rng.dirichlet(np.ones(pomdp.n_actions), size=(n_random, pomdp.horizon, pomdp.n_cells)))


@pytest.mark.parametrize("seed", range(6))
def test_chain_equals_dp_on_random_tabular_instances(seed):
    rng = np.random.default_rng(seed)
    s = 2 + seed % 3
    pomdp = random_tabular(rng, n_states=s, n_actions=2 + seed % 2, n_obs=s + seed % 3, n_o0=s + seed % 2,
                           horizon=2 + seed % 3)
    bridges = true_bridges(pomdp, DeltaFeatures(pomdp.n_cells))
    assert max(bridges.residuals.values()) < 1e-10
    for pi in _policies(pomdp, rng):
        assert abs(chain_value(bridges, pi) - pomdp.value(pi)) < 1e-10


@pytest.mark.parametrize("seed", range(4))
def test_chain_equals_dp_on_random_continuous_instances(seed):
    rng = np.random.default_rng(100 + seed)
    pomdp = random_continuous(rng, n_states=2 + seed % 3)
    bridges = true_bridges(pomdp, RBFFeatures(np.linspace(-3, 3, 9), 0.9))
    for pi in _policies(pomdp, rng):
        assert abs(chain_value(bridges, pi) - pomdp.value(pi)) < 1e-10


def test_toys_identify_every_deterministic_policy():
    cases = [(tabular_toy(), DeltaFeatures(3)), (continuous_toy(), RBFFeatures(np.linspace(-2.5, 2.5, 7), 0.8))]
    for pomdp, f in cases:
        bridges = true_bridges(pomdp, f)
        for pi in deterministic_policies(pomdp.n_cells, 2, 3):
            assert abs(chain_value(bridges, pi) - pomdp.value(pi)) < 1e-10


def test_factorised_chain_equals_the_papers_sum_over_histories():
    """The paper's chain enumerates h_t = (o_1, a_1, ..., o_t, a_t); ours factorises it. Same numbers."""
    rng = np.random.default_rng(7)
    pomdp = random_tabular(rng, n_states=2, n_obs=3, n_o0=2, horizon=3)
    b = true_bridges(pomdp, DeltaFeatures(3))
    pi = rng.dirichlet(np.ones(2), size=(3, 3))
    g1 = b.initial  # p(O_1 = o~) with delta features
    total = 0.0
    for t in range(3):
        for hist in itertools.product(range(3), range(2), repeat=t + 1):
            obs, acts = hist[0::2], hist[1::2]
            weight = np.prod([pi[j, obs[j], acts[j]] for j in range(t + 1)])
            g = g1
            for j in range(t):
                g = g @ b.dynamic[j][acts[j], :, :, obs[j]]  # g_{j+1}(o~') = sum_o~ b_D g_j(o~)
            total += weight * g @ b.reward[t][acts[t], :, obs[t]]  # sum_r r f_t
    assert abs(total - pomdp.value(pi)) < 1e-10


def test_wrong_bridges_give_wrong_values():
    """Adversarial: a perturbation inside the identified directions must move the chain off DP."""
    pomdp = tabular_toy()
    b = true_bridges(pomdp, DeltaFeatures(3))
    pi = deterministic_policies(3, 2, 3)[3]
    b.reward[1] = b.reward[1] + 0.05 * pomdp.emission.probs[0][None, :, None]
    assert abs(chain_value(b, pi) - pomdp.value(pi)) > 1e-3


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    pomdp = random_tabular(rng, n_states=2, n_obs=3, n_o0=2)
    b = true_bridges(pomdp, DeltaFeatures(3))
    blocks = [x + 0.1 * rng.standard_normal(x.shape) for x in b.blocks()]
    b = b.with_blocks(blocks)
    pi = rng.dirichlet(np.ones(2), size=(3, 3))
    value, grads = chain_gradients(b, pi)
    assert value == pytest.approx(chain_value(b, pi))
    for k, block in enumerate(blocks):
        direction = rng.standard_normal(block.shape)
        shifted = [x.copy() for x in blocks]
        shifted[k] = block + 1e-6 * direction
        fd = (chain_value(b.with_blocks(shifted), pi) - value) / 1e-6
        assert fd == pytest.approx((grads[k] * direction).sum(), rel=1e-4, abs=1e-7)
