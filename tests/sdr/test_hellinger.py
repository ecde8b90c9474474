"""The nearest-neighbour Hellinger correlation: exact searches agree, rank invariance, independence, dependence."""

import math

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.sdr.hellinger import (
    HellingerCorrelation,
    ProjectionObjective,
    bhattacharyya,
    copula_ranks,
    hellinger_correlation,
    hellinger_from_bhattacharyya,
    nn_distances,
)


def loop_nn(u, v):
    """The plain O(n^2) reference: one point at a time."""
    out = np.empty(len(u))
    for i in range(len(u)):
        d = np.sqrt((u - u[i]) ** 2 + (v - v[i]) ** 2)
        d[i] = np.inf
        out[i] = d.min()
    return out


@pytest.mark.parametrize("window", [1, 3, 24, 500])
@pytest.mark.parametrize("ties", [False, True])
def test_sweep_and_kdtree_equal_the_loop(window, ties):
    rng = np.random.default_rng(window)
    x = rng.integers(0, 15, 300).astype(float) if ties else rng.standard_normal(300)
    y = x ** 2 + rng.standard_normal(300) if not ties else rng.integers(0, 9, 300).astype(float)
    u, v = copula_ranks(x), copula_ranks(y)
    reference = loop_nn(u, v)
    np.testing.assert_allclose(nn_distances(u, v, "kdtree"), reference, rtol=0, atol=1e-12)
    np.testing.assert_allclose(nn_distances(u, v, "sweep", window), reference, rtol=0, atol=1e-12)


def test_copula_ranks_are_average_ranks_over_n_plus_one():
    np.testing.assert_allclose(copula_ranks([3.0, 1.0, 3.0, 2.0]), np.array([3.5, 1, 3.5, 2]) / 5)


def test_invariant_to_monotone_transforms():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(500)
    y = np.sin(2 * x) + 0.3 * rng.standard_normal(500)
    value = bhattacharyya(x, y)
    assert bhattacharyya(np.exp(x), y ** 3) == pytest.approx(value, abs=1e-12)
    assert bhattacharyya(3 - 2 * x, -(y ** 3)) == pytest.approx(value, abs=1e-12)  # decreasing maps reflect u or v
    assert hellinger_correlation(np.exp(x), 2 * y + 5) == pytest.approx(hellinger_correlation(x, y), abs=1e-12)


def test_independence_gives_near_zero_and_dependence_near_one():
    rng = np.random.default_rng(1)
    independent = [hellinger_correlation(rng.standard_normal(1000), rng.standard_normal(1000)) for _ in range(5)]
    assert np.mean(independent) < 0.1
    x = rng.standard_normal(1000)
    assert hellinger_correlation(x, x ** 2 + 0.01 * rng.standard_normal(1000)) > 0.9
    assert 0.9 < bhattacharyya(rng.standard_normal(2000), rng.standard_normal(2000)) < 1.15


def test_eta_of_b_is_decreasing_with_the_right_ends():
    grid = np.linspace(0.01, 0.99, 50)
    values = [hellinger_from_bhattacharyya(b) for b in grid]
    assert np.all(np.diff(values) < 0)
    assert hellinger_from_bhattacharyya(0.0) == 1.0 and hellinger_from_bhattacharyya(1.2) == 0.0
    assert hellinger_from_bhattacharyya(1e-3) == pytest.approx(1.0, abs=1e-3)
    b = 0.7
    expected = 2 * math.sqrt(b ** 4 + math.sqrt(4 - 3 * b ** 4) - 2) / b ** 2
    assert hellinger_from_bhattacharyya(b) == pytest.approx(expected)


def test_estimator_face():
    est = HellingerCorrelation()
    with pytest.raises(NotFittedError):
        est.score()
    with pytest.raises(NotFittedError):
        _ = est.correlation_
    x = np.linspace(0, 1, 50)
    est.fit(x, x)
    assert est.bhattacharyya_ == pytest.approx(2 * math.sqrt(49) * math.sqrt(2) / 51)  # neighbours on the diagonal
    assert est.score() == est.correlation_ > 0.9
    with pytest.raises(ValueError, match="x contains NaN"):
        est.fit(np.r_[x[:-1], np.nan], x)
    with pytest.raises(ValueError, match="same length"):
        est.fit(x, x[:-1])
    with pytest.raises(ValueError, match="algorithm"):
        HellingerCorrelation(algorithm="brute").fit(x, x)


def test_projection_objective_matches_the_direct_estimate():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 4))
    y = (X[:, 0] - X[:, 1]) ** 2 + 0.1 * rng.standard_normal(300)
    sweep, kdtree = ProjectionObjective(X, y), ProjectionObjective(X, y, "kdtree")
    for _ in range(20):
        beta = rng.standard_normal(4)
        assert sweep(beta) == pytest.approx(bhattacharyya(X @ beta, y), abs=1e-12)
        assert kdtree(beta) == pytest.approx(sweep(beta), abs=1e-12)
    assert sweep.evaluations == 40 and sweep(np.array([np.nan, 0, 0, 1])) == 1e4


def test_projection_objective_with_ties_in_both_coordinates():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, (200, 3)).astype(float)  # projections tie
    y = rng.integers(0, 5, 200).astype(float)
    objective = ProjectionObjective(X, y, window=4)
    for beta in (np.array([1.0, 0, 0]), np.array([1.0, 1.0, 0]), rng.standard_normal(3)):
        assert objective(beta) == pytest.approx(bhattacharyya(X @ beta, y), abs=1e-12)
