"""Phase 1: the IPS matrix and its singular subspaces, measured in the two-to-infinity norm."""

import numpy as np
import pytest

from icml24.bandits.lowrank import LowRankBandit, ips_matrix, spectral_subspaces, two_to_infinity_distance


def _random_low_rank(m=12, n=9, rank=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))


def test_ips_matrix_is_unbiased():
    matrix = _random_low_rank(4, 3)
    env = LowRankBandit(matrix, noise_std=0.5)
    estimates = [ips_matrix(*env.collect(2000, random_state=seed), env.uniform_behaviour) for seed in range(200)]
    np.testing.assert_allclose(np.mean(estimates, axis=0), matrix, atol=0.15)


def test_svd_recovers_noiseless_subspaces_exactly():
    matrix = _random_low_rank()
    subspaces = spectral_subspaces(matrix, 2)
    np.testing.assert_allclose(subspaces.low_rank(), matrix, atol=1e-10)
    left, right = np.linalg.qr(matrix)[0][:, :2], np.linalg.qr(matrix.T)[0][:, :2]
    assert two_to_infinity_distance(subspaces.left, left) < 1e-10
    assert two_to_infinity_distance(subspaces.right, right) < 1e-10
    full_left = np.hstack([subspaces.left, subspaces.left_perp])
    np.testing.assert_allclose(full_left.T @ full_left, np.eye(12), atol=1e-10)


def test_non_finite_input_is_rejected_by_name():
    with pytest.raises(ValueError, match="matrix contains NaN"):
        spectral_subspaces(np.array([[1.0, np.nan], [0.0, 1.0]]), 1)
    with pytest.raises(ValueError, match="rewards contains NaN"):
        ips_matrix([0], [0], [np.nan], np.full((1, 2), 0.5))
