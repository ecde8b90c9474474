"""Estimators of cond(K), the tail condition number, bias and variance for features with a prescribed spectrum.

Cheng et al. (ICML 2024), Sec. 2: K = Psi Lambda Psi^T, the minimum-norm interpolant has coefficients
beta_hat = Lambda Psi^T K^{-1} y in the whitened feature basis, and its excess test risk is
|beta_hat - beta|^2 = B + (noise part), with E over the noise = B + sigma^2 V and V = tr(Lambda Psi^T K^-2 Psi Lambda).

Everything is computed from one thin SVD Z = Psi Lambda^{1/2} = U S W^T, never from K itself: the singular values
of Z carry cond(K) = (s_1 / s_n)^2 to twice the exponent range that forming K in float64 allows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from icml24._random import RandomState, check_random_state
from icml24._validation import check_finite

from .bounds import _spectrum, variance_bound
from .solve import InterpolationSolve, honest_solve


@dataclass
class SpectralEstimate:
    """What one draw of n feature rows says: cond(K), the tail condition number, V, the bias, and how reliable.

    ``svd_error`` is the relative error bound of s_n(K) (see ``_singular_system``); ``reliable`` when below tol.
    ``variance_bound`` is the minimum over ``bound_ks`` of ``bounds.variance_bound`` (inf where not resolvable).
    """

    n: int
    cond: float
    s_max: float
    s_min: float
    tail_k: int
    tail_cond: float
    variance: float
    bias: float
    variance_bound: float
    svd_error: float
    reliable: bool


def _check(psi: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    psi = np.asarray(check_finite("psi", psi), dtype=float)
    lam = _spectrum(lam)
    if psi.ndim != 2 or psi.shape[1] != lam.size:
        raise ValueError(f"psi must be n x p with p = len(lam) = {lam.size}, got shape {psi.shape}")
    if psi.shape[0] >= int((lam > 0).sum()):
        raise ValueError(f"need n < p (over-parameterized); got n={psi.shape[0]}, positive eigenvalues "
                         f"{int((lam > 0).sum())}")
    return psi, lam


def _singular_system(Z: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """U, S, W^T of Z and the relative error bound of s_n(K) = S[-1]^2.

    Fast path: eigh of the Gram Z Z^T, kept when its smallest eigenvalue is resolved (relative error
    n eps cond(K) <= tol / 100); otherwise the thin SVD of Z, whose singular values have absolute error ~ eps s_1,
    i.e. relative error 2 n eps sqrt(cond(K)) on s_n(K).
    """
    n = Z.shape[0]
    eps = np.finfo(float).eps
    ev, U = np.linalg.eigh(Z @ Z.T)
    ev, U = ev[::-1], U[:, ::-1]
    if ev[-1] > 0 and n * eps * ev[0] / ev[-1] <= tol / 100:
        S = np.sqrt(ev)
        return U, S, (U.T @ Z) / S[:, None], float(n * eps * ev[0] / ev[-1])
    U, S, Wt = np.linalg.svd(Z, full_matrices=False)
    return U, S, Wt, float(2 * n * eps * S[0] / S[-1]) if S[-1] > 0 else math.inf


def _extreme_singular_values(Z: np.ndarray, tol: float) -> np.ndarray:
    """Singular values of Z (descending): from the Gram when its condition number is resolved, else by SVD."""
    n = Z.shape[0]
    ev = np.linalg.eigvalsh(Z @ Z.T)[::-1]
    if ev[-1] > 0 and n * np.finfo(float).eps * ev[0] / ev[-1] <= tol / 100:
        return np.sqrt(ev)
    return scipy.linalg.svdvals(Z)


def spectral_estimates(psi: np.ndarray, lam: np.ndarray, beta: np.ndarray | None = None, tail_fraction: float = 0.25,
                       bound_fractions: tuple[float, ...] = (0.125, 0.25, 0.5), tol: float = 1e-4) -> SpectralEstimate:
    """cond(K), cond(A_k) with k = floor(tail_fraction n), V, B (for target ``beta``; NaN if None), V's bound.

    ``tol``: the largest accepted relative error bound of s_n(K) (``reliable``) and of s_n(A_k) (else the tail
    condition number and the variance bound at that k are ``inf``).
    """
    psi, lam = _check(psi, lam)
    n = psi.shape[0]
    keep = lam > 0  # underflowed eigenvalues carry no weight
    sq = np.sqrt(lam[keep])
    Z = psi[:, keep] * sq
    U, S, Wt, error = _singular_system(Z, tol)
    # V = tr(Lambda Psi^T K^-2 Psi Lambda) = |Lambda^{1/2} W S^{-1}|_F^2   (Sec. 2, variance term)
    variance = float(((Wt**2 @ lam[keep]) / S**2).sum())
    bias = math.nan
    if beta is not None:
        beta = np.asarray(check_finite("beta", beta), dtype=float)
        # noiseless interpolant: beta_hat = Lambda Psi^T K^{-1} Psi beta = Lambda^{1/2} W S^{-1} U^T Psi beta
        fitted = sq * (Wt.T @ ((U.T @ (psi @ beta)) / S))
        bias = float(((beta[keep] - fitted) ** 2).sum() + (beta[~keep] ** 2).sum())
    tail_k = max(int(tail_fraction * n), 1)
    bound_ks = sorted({min(max(int(f * n), 1), n - 1) for f in bound_fractions} | {tail_k})
    tail_cond, best = math.nan, math.inf
    for k in bound_ks:
        cols = keep.copy()
        cols[:k] = False
        s = _extreme_singular_values(psi[:, cols] * np.sqrt(lam[cols]), tol)
        if k == tail_k:
            resolved = n * np.finfo(float).eps * s[0] / s[n - 1] <= tol
            tail_cond = float((s[0] / s[n - 1]) ** 2) if resolved else math.inf
        best = min(best, variance_bound(psi, lam, k, tail_singular_values=s, resolve_tol=tol))
    return SpectralEstimate(n=n, cond=float((S[0] / S[-1]) ** 2), s_max=float(S[0]), s_min=float(S[-1]),
                            tail_k=tail_k, tail_cond=tail_cond, variance=variance, bias=bias, variance_bound=best,
                            svd_error=error, reliable=error <= tol)


def spectral_interpolation_risk(psi: np.ndarray, lam: np.ndarray, beta: np.ndarray, y: np.ndarray,
                                tol: float = 1e-6, precisions: tuple[str, ...] = ("float64", "longdouble"),
                                negligible: float = 1e-45) -> tuple[float, InterpolationSolve]:
    """Excess test risk |beta_hat - beta|^2 of the interpolant of labels ``y``, from an honest solve of K alpha = y.

    With whitened features E_x (psi(x)^T (beta_hat - beta))^2 = |beta_hat - beta|^2 exactly, so no test sample is
    needed. K is rebuilt at each precision; eigenvalues below ``negligible * lambda_1`` (far below any
    precision's resolution) are left out of the extended-precision Gram. Raises ``InterpolationError``.
    """
    psi, lam = _check(psi, lam)
    beta = np.asarray(check_finite("beta", beta), dtype=float)
    if not set(precisions) <= {"float64", "longdouble"}:
        raise ValueError("spectral_interpolation_risk supports the float64 and longdouble rungs")

    def build(precision: str) -> np.ndarray:
        dtype = np.float64 if precision == "float64" else np.longdouble
        cols = lam > (negligible * lam[0] if precision != "float64" else 0.0)
        Z = psi[:, cols].astype(dtype) * np.sqrt(lam[cols].astype(dtype))
        return Z @ Z.T

    solve = honest_solve(build, y, tol=tol, precisions=precisions)
    dtype = np.float64 if solve.precision == "float64" else np.longdouble
    beta_hat = lam.astype(dtype) * (psi.T.astype(dtype) @ np.asarray(solve.alpha, dtype=dtype))  # Lambda Psi^T alpha
    return float(((beta_hat - beta) ** 2).sum()), solve


def variance_per_feature_loop(psi: np.ndarray, lam: np.ndarray) -> float:
    """The straightforward peer: form K, factor it once, and sum lambda_l^2 |K^{-1} psi_l|^2 feature by feature."""
    psi, lam = _check(psi, lam)
    K = (psi * lam) @ psi.T
    factor = scipy.linalg.cho_factor(K)
    total = 0.0
    for l in range(lam.size):
        x = scipy.linalg.cho_solve(factor, psi[:, l])
        total += lam[l] ** 2 * float(x @ x)
    return total


def variance_monte_carlo(psi: np.ndarray, lam: np.ndarray, random_state: RandomState = None, draws: int = 2000,
                         test_size: int = 500) -> tuple[float, float]:
    """Monte-Carlo V: interpolate pure N(0, 1) label noise, average f_hat(x)^2 over fresh test points and draws
    (noise, then test points, drawn from ``random_state``: None, an int or a numpy Generator).

    Returns (estimate, standard error). E_eps E_x f_hat(x)^2 = V exactly for whitened features.
    """
    psi, lam = _check(psi, lam)
    n, p = psi.shape
    rng = check_random_state(random_state)
    noise = rng.standard_normal((n, draws))
    coef = lam[:, None] * (psi.T @ scipy.linalg.solve((psi * lam) @ psi.T, noise, assume_a="pos"))
    test = rng.standard_normal((test_size, p))
    per_draw = ((test @ coef) ** 2).mean(axis=0)
    return float(per_draw.mean()), float(per_draw.std(ddof=1) / math.sqrt(draws))
