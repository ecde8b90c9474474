"""Distance covariance and DCOV-SDR: the V-statistic, its gradient, and the recovered direction."""

import numpy as np
import pytest

from icml24.sdr import DCOVSDR, distance_covariance, single_index_data, subspace_distance
from icml24.sdr.dcov import _centred_distances, _scores, _value_and_gradient


def naive_dcov2(x, y):
    n = len(x)
    a = np.abs(x[:, None] - x[None, :])
    b = np.abs(y[:, None] - y[None, :])
    A = a - a.mean(0) - a.mean(1)[:, None] + a.mean()
    B = b - b.mean(0) - b.mean(1)[:, None] + b.mean()
    return sum(A[i, j] * B[i, j] for i in range(n) for j in range(n)) / n ** 2


def test_v_statistic_and_shortcut_agree_with_the_naive_formula():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    beta = np.array([0.6, 0.8, 0.0])
    expected = naive_dcov2(X @ beta, y)
    assert distance_covariance(X @ beta, y) == pytest.approx(expected)
    assert _value_and_gradient(X, _centred_distances(y), beta)[0] == pytest.approx(expected)
    assert _scores((X @ beta)[:, None], _centred_distances(y))[0] == pytest.approx(expected)
    assert distance_covariance(rng.standard_normal(50), rng.standard_normal(50)) < distance_covariance(y, y)


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 4))
    b = _centred_distances(X[:, 0] ** 2)
    beta = rng.standard_normal(4)
    _, grad = _value_and_gradient(X, b, beta)
    eps = 1e-6
    numeric = [(_value_and_gradient(X, b, beta + eps * e)[0] - _value_and_gradient(X, b, beta - eps * e)[0])
               / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-8)


def test_recovers_the_direction_and_is_seeded():
    X, y, beta = single_index_data("quadratic", np.random.default_rng(2), n=300)
    first = DCOVSDR(random_state=3).fit(X, y)
    assert subspace_distance(first.directions_, beta) < 0.2
    np.testing.assert_array_equal(first.directions_, DCOVSDR(random_state=3).fit(X, y).directions_)
    assert first.dcov_ >= _scores((X @ first.start_)[:, None], _centred_distances(y))[0] - 1e-12
    with pytest.raises(ValueError, match="same number"):
        distance_covariance(np.zeros(3), np.zeros(4))
