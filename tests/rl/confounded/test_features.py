"""Kernel feature maps: delta = one-hot, RBF Nystrom reproduces the kernel on its centres, closed-form embeddings."""

import numpy as np
import pytest

from icml24.rl import DeltaFeatures, GaussianEmission, HistoryInstrument, RBFFeatures, tabular_toy


def test_delta_features_are_one_hot_and_reject_out_of_range():
    f = DeltaFeatures(3)
    np.testing.assert_array_equal(f.transform(np.array([2, 0])), [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match="outside"):
        f.transform(np.array([3]))


def test_rbf_features_reproduce_the_kernel_on_the_centres():
    f = RBFFeatures(np.linspace(-2, 2, 5), 0.9)
    phi = f.transform(f.centers)
    diff = f.centers[:, None] - f.centers[None, :]
    np.testing.assert_allclose(phi @ phi.T, np.exp(-0.5 * (diff / 0.9) ** 2), atol=1e-6)


def test_rbf_mean_embedding_matches_monte_carlo():
    f = RBFFeatures(np.linspace(-2, 2, 5), 0.7)
    em = GaussianEmission([-1.0, 0.5], 0.6)
    rng = np.random.default_rng(0)
    for s in range(2):
        draws = em.sample(np.full(200000, s), rng)
        np.testing.assert_allclose(f.transform(draws).mean(axis=0), f.mean_embedding(em)[s], atol=0.02)


def test_history_instrument_is_one_hot_per_history_cell():
    data = tabular_toy().sample(500, np.random.default_rng(0))
    inst = HistoryInstrument(2, n_obs=3, n_o0=2)
    for t in range(3):
        x = inst.transform(data, t)
        assert x.shape == (500, 2 * 6**t * 2) and np.all(x.sum(axis=1) == 1)
    # two episodes share a cell iff they share (a_t, h_{t-1}, o_0)
    x = inst.transform(data, 1).argmax(axis=1)
    key = np.stack([data.actions[:, 1], data.obs[:, 0], data.actions[:, 0], data.o0], axis=1)
    assert len(np.unique(x)) == len(np.unique(key, axis=0))


def test_continuous_instrument_blocks_by_actions():
    from icml24.rl import continuous_toy

    data = continuous_toy().sample(300, np.random.default_rng(1))
    inst = HistoryInstrument(2, n_fourier=16, random_state=0)
    x = inst.transform(data, 2).reshape(300, 4, 16)
    cell = data.actions[:, 2] * 2 + data.actions[:, 1]
    nonzero = np.abs(x).sum(axis=2) > 0
    np.testing.assert_array_equal(nonzero.argmax(axis=1), cell)
    assert nonzero.sum(axis=1).max() == 1
