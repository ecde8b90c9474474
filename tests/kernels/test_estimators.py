import numpy as np
import pytest

from icml24.kernels import (
    InterpolationError,
    eigendecay,
    spectral_estimates,
    spectral_interpolation_risk,
    variance_monte_carlo,
    variance_per_feature_loop,
)


def _direct(psi, lam, beta):
    K = (psi * lam) @ psi.T
    Kinv = np.linalg.inv(K)
    A = lam[:, None] * (psi.T @ Kinv)  # Lambda Psi^T K^-1
    return np.linalg.cond(K), np.sum(A**2), np.sum((beta - A @ (psi @ beta)) ** 2)


def test_estimates_match_the_direct_formulas():
    rng = np.random.default_rng(0)
    lam = eigendecay("polynomial", 0.5, 600)
    psi = rng.standard_normal((30, 600))
    beta = np.sqrt(lam) / np.linalg.norm(np.sqrt(lam))
    est = spectral_estimates(psi, lam, beta)
    cond, V, B = _direct(psi, lam, beta)
    assert est.reliable and est.cond == pytest.approx(cond, rel=1e-8)
    assert est.variance == pytest.approx(V, rel=1e-8) and est.bias == pytest.approx(B, rel=1e-6)
    assert est.variance == pytest.approx(variance_per_feature_loop(psi, lam), rel=1e-8)
    assert est.variance <= est.variance_bound and est.tail_k == 7 and est.tail_cond > 1


def test_variance_formula_against_monte_carlo():
    rng = np.random.default_rng(2)
    lam = eigendecay("polynomial", 1.0, 200)
    psi = rng.standard_normal((15, 200))
    exact = spectral_estimates(psi, lam).variance
    mc, stderr = variance_monte_carlo(psi, lam, np.random.default_rng(3), draws=4000, test_size=2000)
    assert abs(mc - exact) < 4 * stderr and stderr < 0.05 * exact


def test_excess_risk_matches_bias_plus_noise_and_uses_the_ladder():
    rng = np.random.default_rng(4)
    lam = eigendecay("exponential", 0.2, 400)
    beta = np.sqrt(lam) / np.linalg.norm(np.sqrt(lam))
    psi = rng.standard_normal((20, 400))
    risk, solve = spectral_interpolation_risk(psi, lam, beta, psi @ beta)
    assert risk == pytest.approx(spectral_estimates(psi, lam, beta).bias, rel=1e-5, abs=1e-12)
    assert solve.residual < 1e-6
    big = rng.standard_normal((160, 400))  # a n = 32: float64 fails, longdouble rescues or refuses
    try:
        _, solve = spectral_interpolation_risk(big, lam, beta, big @ beta + rng.standard_normal(160))
        assert solve.precision == "longdouble" and solve.residual < 1e-6
    except InterpolationError as exc:
        assert "longdouble residual" in str(exc)


def test_unresolvable_points_are_flagged_and_checks():
    rng = np.random.default_rng(5)
    lam = eigendecay("exponential", 0.2, 1000)
    est = spectral_estimates(rng.standard_normal((250, 1000)), lam)
    assert not est.reliable and est.svd_error > 1e-4
    with pytest.raises(ValueError, match="n < p"):
        spectral_estimates(rng.standard_normal((5, 4)), eigendecay("polynomial", 1.0, 4))
    with pytest.raises(ValueError, match="psi contains NaN"):
        spectral_estimates(np.full((2, 4), np.nan), eigendecay("polynomial", 1.0, 4))
