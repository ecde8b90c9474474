"""Synthetic spectra with prescribed eigendecay, sub-Gaussian (Gaussian) whitened features, and decay fits.

Cheng et al. (ICML 2024), Sec. 2: K(x, x') = sum_k lambda_k psi_k(x) psi_k(x'), features whitened (E psi psi^T = I)
and independent; polynomial decay lambda_k ~ k^-(1+a) (tempered) or exponential decay lambda_k ~ e^(-a k)
(catastrophic).
"""

from __future__ import annotations

import numpy as np

from icml24._random import RandomState, check_random_state
from icml24._validation import check_finite, check_positive

DECAYS = ("polynomial", "exponential")


def eigendecay(kind: str, a: float, p: int) -> np.ndarray:
    """The eigenvalues lambda_1..lambda_p: ``k^-(1+a)`` (polynomial) or ``e^(-a k)`` (exponential), k = 1..p.

    Exponential eigenvalues that underflow float64 are returned as 0 (they carry no weight in K).
    """
    check_positive("a", a)
    if int(p) < 1:
        raise ValueError(f"p must be a positive number of features, got {p}")
    k = np.arange(1, int(p) + 1, dtype=float)
    if kind == "polynomial":
        return k ** -(1.0 + a)
    if kind == "exponential":
        return np.exp(-a * k)
    raise ValueError(f"kind must be one of {', '.join(DECAYS)}, got {kind!r}")


def gaussian_features(n: int, p: int, random_state: RandomState = None) -> np.ndarray:
    """Psi in R^{n x p} with i.i.d. N(0, 1) entries: whitened, independent, sub-Gaussian features, drawn from
    ``random_state`` (None, an int or a numpy Generator)."""
    if int(n) < 1 or int(p) < 1:
        raise ValueError(f"n and p must be positive, got n={n}, p={p}")
    return check_random_state(random_state).standard_normal((int(n), int(p)))


def fit_eigendecay(eigenvalues: np.ndarray, kind: str, k_min: int = 1, k_max: int | None = None,
                   rel_floor: float = 1e-12) -> float:
    """Estimate the decay exponent ``a`` from a (sorted or not) spectrum by least squares.

    polynomial: slope of log lambda_k against log k is -(1 + a); exponential: slope of log lambda_k against k is -a.
    Uses ranks k_min..k_max (1-based) and only eigenvalues above ``rel_floor * lambda_1`` (float64 resolves no
    less). Returns NaN when fewer than 3 eigenvalues qualify.
    """
    lam = np.sort(np.asarray(check_finite("eigenvalues", eigenvalues), dtype=float))[::-1]
    k = np.arange(1, lam.size + 1, dtype=float)
    keep = (k >= k_min) & (lam > rel_floor * lam[0])
    if k_max is not None:
        keep &= k <= k_max
    if keep.sum() < 3:
        return float("nan")
    if kind == "polynomial":
        slope = np.polyfit(np.log(k[keep]), np.log(lam[keep]), 1)[0]
        return float(-slope - 1.0)
    if kind == "exponential":
        return float(-np.polyfit(k[keep], np.log(lam[keep]), 1)[0])
    raise ValueError(f"kind must be one of {', '.join(DECAYS)}, got {kind!r}")
