"""Phase 2: reduced features by structured products, and their ridge fit."""

import numpy as np

from icml24.bandits.lowrank import ReducedFeatures, spectral_subspaces


def _random_low_rank(m=12, n=9, rank=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))


def test_features_reproduce_matrices_in_the_span():
    m, n, rank = 7, 5, 2
    subspaces = spectral_subspaces(_random_low_rank(m, n, rank, seed=1), rank)
    features = ReducedFeatures(subspaces)
    assert features.dim == rank * (m + n) - rank**2
    rng = np.random.default_rng(2)
    # a matrix with zero perp-perp block lies in the span
    target = rng.standard_normal((m, n))
    target -= subspaces.left_perp @ (subspaces.left_perp.T @ target @ subspaces.right_perp) @ subspaces.right_perp.T
    theta = features.project(target)
    np.testing.assert_allclose(features.to_matrix(theta), target, atol=1e-10)
    # the structured products agree with the explicit design matrix
    contexts, arms = np.divmod(np.arange(m * n), n)
    design = features(contexts, arms)
    np.testing.assert_allclose(design.T @ design, np.eye(features.dim), atol=1e-10)
    weights = rng.random((m, n))
    np.testing.assert_allclose(features.gram(weights), design.T @ (weights.ravel()[:, None] * design), atol=1e-10)
    np.testing.assert_allclose(features.adjoint(weights), design.T @ weights.ravel(), atol=1e-10)
    np.testing.assert_allclose(features.to_matrix(theta).ravel(), design @ theta, atol=1e-10)


def test_ridge_fit_is_exact_on_noiseless_full_data():
    matrix = _random_low_rank(8, 6, 2, seed=3)
    features = ReducedFeatures(spectral_subspaces(matrix, 2))
    counts = np.full(matrix.shape, 3.0)
    theta = features.ridge(counts, 3.0 * matrix, tau=1e-10)
    np.testing.assert_allclose(features.to_matrix(theta), matrix, atol=1e-6)
