"""Spherical coordinates, R's SANN schedule and Nelder-Mead with R's simplex and stopping rule."""

import math

import numpy as np
import pytest

from icml24.sdr.sphere import anneal, from_sphere, nelder_mead, to_sphere


@pytest.mark.parametrize("p", [2, 3, 10])
def test_round_trip_and_unit_norm(p):
    rng = np.random.default_rng(p)
    for _ in range(20):
        s = rng.standard_normal(p)
        theta = to_sphere(s)
        assert theta.shape == (p - 1,)
        np.testing.assert_allclose(from_sphere(theta), s / np.linalg.norm(s), atol=1e-12)
        assert np.linalg.norm(from_sphere(rng.uniform(-10, 10, p - 1))) == pytest.approx(1.0)


def test_from_sphere_formula():
    t = np.array([0.3, 1.1, 2.0])
    expected = [math.cos(0.3), math.sin(0.3) * math.cos(1.1), math.sin(0.3) * math.sin(1.1) * math.cos(2.0),
                math.sin(0.3) * math.sin(1.1) * math.sin(2.0)]
    np.testing.assert_allclose(from_sphere(t), expected)


def test_anneal_is_seeded_keeps_the_best_and_counts_like_r():
    target = from_sphere(np.array([1.0, 2.0, 0.5]))
    calls = []

    def fn(theta):
        calls.append(1)
        return -float(from_sphere(theta) @ target) ** 2

    start = np.array([0.2, 0.2, 0.2])
    first = anneal(fn, start, np.random.default_rng(0), maxiter=2000)
    again = anneal(fn, start, np.random.default_rng(0), maxiter=2000)
    np.testing.assert_array_equal(first[0], again[0])
    assert first[2] == 2000 and len(calls) == 4000
    assert first[1] <= fn(start) and first[1] == pytest.approx(fn(first[0]))
    assert first[1] < -0.9  # a wandering search on a smooth function gets near the optimum
    other = anneal(fn, start, np.random.default_rng(1), maxiter=2000)
    assert not np.array_equal(first[0], other[0])


def test_anneal_schedule_is_rs():
    """Steps have sd T_k / temp with T_k = temp / log(((k - 1) // tmax) tmax + e): record them on a flat function."""
    seen = []
    anneal(lambda theta: seen.append(theta.copy()) or 0.0, np.zeros(1), np.random.default_rng(0), maxiter=30001)
    steps = np.diff(np.concatenate(seen))  # every candidate is accepted on a flat function
    k = np.arange(1, 30001)
    scale = 1.0 / np.log(((k - 1) // 10) * 10 + math.e)
    z = steps / scale
    assert abs(z.std() - 1.0) < 0.02 and abs(z.mean()) < 0.02


def test_nelder_mead_minimizes_and_never_worsens():
    fn = lambda theta: float(((theta - np.array([1.0, -2.0, 0.5])) ** 2).sum())  # noqa: E731
    theta, value, evaluations = nelder_mead(fn, np.zeros(3), maxfev=5000, reltol=1e-12)
    np.testing.assert_allclose(theta, [1.0, -2.0, 0.5], atol=1e-4)
    assert value < 1e-8 and evaluations <= 5001
    flat = nelder_mead(lambda theta: 1.0, np.array([0.4, 0.4]), maxfev=100)
    np.testing.assert_array_equal(flat[0], [0.4, 0.4])  # R's rule stops at once on equal simplex values
