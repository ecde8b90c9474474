"""Radial kernels at a chosen precision: Laplace (polynomial eigendecay) and Gaussian (exponential eigendecay).

Cheng et al. (ICML 2024), Fig. 1: the Laplace kernel overfits in a tempered way, the Gaussian kernel
catastrophically. Entries are computed at the precision of the solve that uses them (float64, numpy longdouble, or
mpmath at ``dps`` digits), because an interpolant with coefficients of size 1/s_min(K) amplifies the rounding of
every kernel entry by cond(K).
"""

from __future__ import annotations

import math

import numpy as np

from icml24._validation import check_finite, check_positive

from ._pairwise import squared_distances

KERNELS = ("laplace", "gaussian")


def squared_distances_numpy(X: np.ndarray, Y: np.ndarray, dtype=np.float64) -> np.ndarray:
    """|x_i - y_j|^2 from exact differences, one n x m pass per coordinate, in ``dtype`` (float64 or longdouble)."""
    Xd, Yd = np.asarray(X).astype(dtype), np.asarray(Y).astype(dtype)
    sq = np.zeros((Xd.shape[0], Yd.shape[0]), dtype=dtype)
    for j in range(Xd.shape[1]):  # no n x m x d temporary
        diff = np.subtract.outer(Xd[:, j], Yd[:, j])
        diff *= diff
        sq += diff
    return sq


def kernel_matrix(name: str, X: np.ndarray, Y: np.ndarray, bandwidth: float, precision: str = "float64",
                  dps: int = 50):
    """k(X_i, Y_j) for the Laplace kernel exp(-|x - y| / l) or the Gaussian kernel exp(-|x - y|^2 / (2 l^2)).

    ``precision``: "float64" or "longdouble" (numpy arrays of that dtype) or "mpmath" (an ``mpmath.matrix`` at
    ``dps`` digits). Inputs are taken as exact binary numbers; differences are formed entrywise (no
    |x|^2 + |y|^2 - 2 x.y cancellation).
    """
    if name not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {name!r}")
    check_positive("bandwidth", bandwidth)
    X = np.atleast_2d(np.asarray(check_finite("X", X), dtype=float))
    Y = np.atleast_2d(np.asarray(check_finite("Y", Y), dtype=float))
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must have the same number of columns, got {X.shape[1]} and {Y.shape[1]}")
    if precision in ("float64", "longdouble"):
        dtype = np.float64 if precision == "float64" else np.longdouble
        sq = (squared_distances(np.ascontiguousarray(X), np.ascontiguousarray(Y)) if precision == "float64"
              else squared_distances_numpy(X, Y, dtype))
        if name == "gaussian":
            sq *= dtype(-0.5) / (dtype(bandwidth) * dtype(bandwidth))
            return np.exp(sq, out=sq)
        np.sqrt(sq, out=sq)
        sq *= dtype(-1.0) / dtype(bandwidth)
        return np.exp(sq, out=sq)
    if precision != "mpmath":
        raise ValueError(f"precision must be float64, longdouble or mpmath, got {precision!r}")
    import mpmath

    with mpmath.workdps(dps):
        xs = [[mpmath.mpf(float(v)) for v in row] for row in X]
        ys = [[mpmath.mpf(float(v)) for v in row] for row in Y]
        ell = mpmath.mpf(bandwidth)
        out = mpmath.matrix(len(xs), len(ys))
        for i, xi in enumerate(xs):
            for j, yj in enumerate(ys):
                sq = mpmath.fsum((u - v) ** 2 for u, v in zip(xi, yj))
                out[i, j] = mpmath.exp(-mpmath.sqrt(sq) / ell) if name == "laplace" else mpmath.exp(-sq / (2 * ell**2))
    return out


def gaussian_mehler_decay(bandwidth: float, input_std: float = 1.0) -> float:
    """Exponential decay rate ``a`` of the Gaussian kernel's eigenvalues under x ~ N(0, s^2) in d = 1.

    Mehler's formula (Rasmussen & Williams 2006, Sec. 4.3.1): with A = 1/(4 s^2), B = 1/(2 l^2),
    C = sqrt(A^2 + 2 A B), the eigenvalues are proportional to (B / (A + B + C))^k, so lambda_k ~ e^{-a k} with
    a = -log(B / (A + B + C)).
    """
    check_positive("bandwidth", bandwidth)
    check_positive("input_std", input_std)
    a_ = 1.0 / (4 * input_std**2)
    b_ = 1.0 / (2 * bandwidth**2)
    c_ = math.sqrt(a_**2 + 2 * a_ * b_)
    return -math.log(b_ / (a_ + b_ + c_))


def gaussian_bandwidth_for_decay(a: float, input_std: float = 1.0) -> float:
    """The bandwidth l whose Gaussian kernel has Mehler eigendecay e^{-a k} under N(0, s^2) inputs (d = 1).

    Inverts ``gaussian_mehler_decay``: with ratio r = e^{-a}, l^2 = s^2 (1 - r)^2 / r.
    """
    check_positive("a", a)
    check_positive("input_std", input_std)
    r = math.exp(-a)
    return input_std * (1 - r) / math.sqrt(r)
