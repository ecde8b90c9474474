import numpy as np
import pytest

from icml24.bandits.lowrank import (
    LowRankBandit,
    ReducedFeatures,
    as_policy_matrix,
    ips_matrix,
    spectral_subspaces,
    two_to_infinity_distance,
)


def _random_low_rank(m=12, n=9, rank=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))


def test_collect_follows_the_behaviour_policy():
    env = LowRankBandit(np.zeros((3, 4)), context_probs=[0.5, 0.3, 0.2], noise_std=0.0)
    behaviour = np.array([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.5]])
    contexts, arms, rewards = env.collect(200_000, behaviour, rng=0)
    joint = np.bincount(contexts * 4 + arms, minlength=12).reshape(3, 4) / len(arms)
    np.testing.assert_allclose(joint, np.array([0.5, 0.3, 0.2])[:, None] * behaviour, atol=4e-3)
    assert np.all(rewards == 0.0)


def test_ips_matrix_is_unbiased():
    matrix = _random_low_rank(4, 3)
    env = LowRankBandit(matrix, noise_std=0.5)
    estimates = [ips_matrix(*env.collect(2000, rng=seed), env.uniform_behaviour) for seed in range(200)]
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


def test_values_and_validation():
    env = LowRankBandit(np.array([[1.0, 3.0], [2.0, 0.0]]), context_probs=[0.25, 0.75])
    assert env.optimal_value() == pytest.approx(0.25 * 3 + 0.75 * 2)
    assert env.value(np.array([[0.5, 0.5], [0.5, 0.5]])) == pytest.approx(0.25 * 2 + 0.75 * 1)
    with pytest.raises(ValueError, match="integer arms"):
        as_policy_matrix(np.array([0.5, 1.0]), (2, 2))
    with pytest.raises(ValueError, match="context_probs"):
        LowRankBandit(np.ones((2, 2)), context_probs=[1.0, 0.0])
    with pytest.raises(ValueError, match="rank"):
        LowRankBandit.official_instance(5, 5, rank=6)


def test_official_instance_is_rank_r_and_seeded():
    env = LowRankBandit.official_instance(20, 15, 2, rng=0)
    assert np.linalg.matrix_rank(env.reward_matrix) == 2
    np.testing.assert_array_equal(env.reward_matrix, LowRankBandit.official_instance(20, 15, 2, rng=0).reward_matrix)
