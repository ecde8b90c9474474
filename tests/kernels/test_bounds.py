import math

import numpy as np
import pytest

from icml24.kernels import condition_number_bounds, condition_number_rate, eigendecay, variance_bound


@pytest.mark.parametrize("kind,a,p", [("polynomial", 1.0, 4000), ("exponential", 0.2, 800)])
def test_bounds_contain_measured_condition_numbers(kind, a, p):
    lam = eigendecay(kind, a, p)
    rng = np.random.default_rng(0)
    for n in (20, 60):
        lower, upper = condition_number_bounds(lam, n)
        assert 0 < lower < upper < math.inf
        for _ in range(3):
            Z = rng.standard_normal((n, p)) * np.sqrt(lam)
            s = np.linalg.svd(Z, compute_uv=False)
            assert lower <= (s[0] / s[-1]) ** 2 <= upper


def test_bounds_follow_the_paper_rates():
    lam = eigendecay("polynomial", 1.0, 400_000)  # the bounds are analytic: large n costs nothing
    ns = np.array([1000, 2000, 4000, 8000])
    for side in (0, 1):
        logs = np.log([condition_number_bounds(lam, n)[side] for n in ns])
        assert np.polyfit(np.log(ns), logs, 1)[0] == pytest.approx(2.0, abs=0.2)  # n^{1+a}
    lam = eigendecay("exponential", 0.1, 3000)
    ns = np.array([50, 100, 200, 400])
    for side in (0, 1):
        logs = np.log([condition_number_bounds(lam, n)[side] for n in ns])
        assert np.polyfit(ns, logs, 1)[0] == pytest.approx(0.1, rel=0.15)  # e^{a n}
    assert condition_number_rate("polynomial", 1.0, 10.0) == pytest.approx(100.0)
    assert condition_number_rate("exponential", 0.5, 2.0) == pytest.approx(math.e)


def test_variance_bound_is_an_upper_bound():
    rng = np.random.default_rng(1)
    lam = eigendecay("polynomial", 1.0, 3000)
    psi = rng.standard_normal((40, 3000))
    K = (psi * lam) @ psi.T
    Kinv = np.linalg.inv(K)
    V = np.trace(lam[:, None] * psi.T @ Kinv @ Kinv @ psi * lam[None, :])
    for k in (0, 5, 10, 20):
        assert V <= variance_bound(psi, lam, k) * (1 + 1e-9)
    assert variance_bound(psi, lam, 10) < 100  # tempered: O(1), not vacuous


def test_argument_checks():
    with pytest.raises(ValueError, match="non-increasing"):
        condition_number_bounds(np.array([1.0, 2.0, 0.5]), 1)
    with pytest.raises(ValueError, match="n < p"):
        condition_number_bounds(np.ones(5), 5)
    with pytest.raises(ValueError, match="0 <= k < n"):
        variance_bound(np.ones((3, 10)), np.ones(10), 3)


@pytest.mark.parametrize("kind,a,p,ns", [("polynomial", 0.25, 3000, (5, 40, 150)),
                                         ("polynomial", 2.0, 3000, (5, 40, 150)),
                                         ("exponential", 0.1, 1500, (5, 40, 150)),
                                         ("exponential", 0.5, 400, (5, 30))])
def test_bounds_hold_on_the_extreme_draws(kind, a, p, ns):
    """A property, not a claim: at delta = 0.05 at most 5% of draws may leave the band; the most extreme of 40 draws
    per (regime, n), the smallest and the largest cond(K), are where a violation would show first."""
    lam = eigendecay(kind, a, p)
    rng = np.random.default_rng(7)
    for n in ns:
        lower, upper = condition_number_bounds(lam, n, delta=0.05)
        conds = []
        for _ in range(40):
            s = np.linalg.svd(rng.standard_normal((n, p)) * np.sqrt(lam), compute_uv=False)
            conds.append((s[0] / s[-1]) ** 2)
        conds = np.array(conds)
        assert np.mean((conds < lower) | (conds > upper)) <= 0.05, (kind, a, n)
        assert lower <= conds.min() and conds.max() <= upper, (kind, a, n, lower, conds.min(), conds.max(), upper)
