"""Honest interpolating solves K alpha = y: a residual check, a precision ladder, never a silent regularizer.

A kernel ridgeless (minimum-norm) interpolant f(x) = K(x, X) K^{-1} y (Cheng et al., ICML 2024, Sec. 2) only
exists numerically when K is solvable at the working precision. ``numpy.linalg.lstsq`` or a pseudo-inverse on a
numerically singular K silently truncates small eigenvalues, i.e. regularizes, and no longer interpolates (the
Gaussian-kernel curve can then even go *down* with n). ``honest_solve`` solves exactly (Cholesky/LU), measures the
relative residual ||K alpha - y|| / ||y||, moves up the ladder float64 -> numpy longdouble -> mpmath until the
residual is below ``tol``, and raises ``InterpolationError`` (naming every attempt) when no allowed precision works.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from icml24._validation import check_finite, check_positive

PRECISIONS = ("float64", "longdouble", "mpmath")


class InterpolationError(ArithmeticError):
    """No allowed precision interpolates the data to the requested residual; nothing regularized is returned."""


def precision_digits(precision: str, dps: int = 50) -> float:
    """Decimal digits of a precision: -log10(machine epsilon), or ``dps`` for mpmath."""
    if precision == "float64":
        return float(-np.log10(np.finfo(np.float64).eps))
    if precision == "longdouble":
        return float(-np.log10(float(np.finfo(np.longdouble).eps)))
    if precision == "mpmath":
        return float(dps)
    raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")


@dataclass
class InterpolationSolve:
    """The coefficients alpha of an interpolant that passed the residual check, and how they were obtained.

    ``alpha`` has the solve's type (float64 or longdouble array, or an ``mpmath.matrix``); ``attempts`` lists
    (precision, relative residual) of every rung tried, ``inf`` where the factorization itself failed.
    """

    alpha: object
    precision: str
    digits: float
    residual: float
    attempts: list[tuple[str, float]] = field(default_factory=list)

    @property
    def float64_sufficient(self) -> bool:
        return self.precision == "float64"


def extended_lu_solve(K: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Solve K x = y in numpy ``longdouble`` by Gaussian elimination with partial pivoting.

    LAPACK has no extended-precision routines; this loops over the n pivots and updates the trailing block in one
    array operation each (O(n) Python steps, O(n^3) work in numpy).
    """
    A = np.array(K, dtype=np.longdouble, copy=True)
    n = A.shape[0]
    if A.shape != (n, n):
        raise ValueError(f"K must be square, got shape {A.shape}")
    b = np.array(y, dtype=np.longdouble, copy=True).reshape(n, -1)
    for j in range(n):
        pivot = j + int(np.argmax(np.abs(A[j:, j])))
        if A[pivot, j] == 0:
            raise np.linalg.LinAlgError(f"K is exactly singular in longdouble at pivot {j}")
        if pivot != j:
            A[[j, pivot]] = A[[pivot, j]]
            b[[j, pivot]] = b[[pivot, j]]
        factors = A[j + 1:, j] / A[j, j]
        A[j + 1:, j:] -= np.outer(factors, A[j, j:])
        b[j + 1:] -= np.outer(factors, b[j])
    x = np.zeros_like(b)
    for j in range(n - 1, -1, -1):
        x[j] = (b[j] - A[j, j + 1:] @ x[j + 1:]) / A[j, j]
    return x.reshape(np.shape(y))


def _residual_numpy(K: np.ndarray, alpha: np.ndarray, y: np.ndarray) -> float:
    # in longdouble, so the check is not itself swamped by float64 rounding of K @ alpha
    Kl, al, yl = (np.asarray(v, dtype=np.longdouble) for v in (K, alpha, y))
    return float(np.linalg.norm((Kl @ al - yl).astype(float)) / max(np.linalg.norm(y), np.finfo(float).tiny))


def _solve_float64(K: np.ndarray, y: np.ndarray) -> np.ndarray:
    import scipy.linalg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # ill-conditioning is judged by the residual
        try:
            return scipy.linalg.solve(K, y, assume_a="pos")
        except np.linalg.LinAlgError:  # not numerically positive definite: exact LU, still no regularization
            return scipy.linalg.solve(K, y, assume_a="gen")


def _solve_mpmath(K, y: np.ndarray, dps: int):
    import mpmath

    with mpmath.workdps(dps):
        rhs = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
        alpha = mpmath.lu_solve(K, rhs)
        res = mpmath.norm(K * alpha - rhs) / mpmath.norm(rhs)
    return alpha, float(res)


def honest_solve(build: Callable[[str], object], y: np.ndarray, tol: float = 1e-6,
                 precisions: tuple[str, ...] | list[str] = PRECISIONS, mp_max_n: int = 60,
                 mp_dps: int = 50) -> InterpolationSolve:
    """Interpolate: alpha with ||K alpha - y|| <= tol ||y||, at the lowest precision that achieves it.

    ``build(precision)`` returns K at that precision (a float64 or longdouble array, or an ``mpmath.matrix``);
    it is called once per rung, so K's entries are recomputed, not just cast. mpmath (pure Python, O(n^3)) is
    tried only for n <= ``mp_max_n``. Raises ``InterpolationError`` when every allowed rung fails: the caller
    then reports the point as "float64 (or extended) precision insufficient" instead of using a regularized fit.
    """
    y = np.asarray(check_finite("y", y), dtype=float).ravel()
    check_positive("tol", tol)
    unknown = [p for p in precisions if p not in PRECISIONS]
    if unknown or not precisions:
        raise ValueError(f"precisions must be a non-empty subset of {', '.join(PRECISIONS)}, got {precisions}")
    n = y.size
    attempts: list[tuple[str, float]] = []
    notes: list[str] = []
    for precision in precisions:
        if precision == "longdouble" and np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps:
            notes.append("longdouble is float64 on this platform")
            continue
        if precision == "mpmath" and n > mp_max_n:
            notes.append(f"mpmath skipped (n={n} > mp_max_n={mp_max_n})")
            continue
        K = build(precision)
        try:
            if precision == "float64":
                alpha = _solve_float64(np.asarray(K, dtype=float), y)
                residual = _residual_numpy(K, alpha, y)
            elif precision == "longdouble":
                alpha = extended_lu_solve(K, y)
                residual = _residual_numpy(K, alpha, y)
            else:
                alpha, residual = _solve_mpmath(K, y, mp_dps)
        except (np.linalg.LinAlgError, ZeroDivisionError):
            residual = math.inf
        if not math.isfinite(residual):
            residual = math.inf
        attempts.append((precision, residual))
        if residual <= tol:
            return InterpolationSolve(alpha, precision, precision_digits(precision, mp_dps), residual, attempts)
    tried = ", ".join(f"{p} residual {r:.1e}" for p, r in attempts) or "no precision tried"
    raise InterpolationError(
        f"cannot interpolate {n} points to relative residual {tol:g}: {tried}"
        + (f"; {'; '.join(notes)}" if notes else "")
        + ". The kernel matrix is numerically singular at these precisions; refusing to return a regularized "
        "(least-squares / pseudo-inverse) solve, which would not interpolate. Allow more precision "
        "(precisions, mp_max_n, mp_dps) or use fewer points.")
