"""Honest interpolating solves K alpha = y: a condition check, a residual check, a precision ladder, never a
silent regularizer.

A kernel ridgeless (minimum-norm) interpolant f(x) = K(x, X) K^{-1} y (Cheng et al., ICML 2024, Sec. 2) only
exists numerically when K is solvable at the working precision. ``numpy.linalg.lstsq`` or a pseudo-inverse on a
numerically singular K silently truncates small eigenvalues, i.e. regularizes, and no longer interpolates (the
Gaussian-kernel curve can then even go *down* with n).

A small residual is not enough. A backward-stable solve always returns alpha with ||K alpha - y|| ~ eps ||K||
||alpha||: with smooth (noise-free) labels ||alpha|| stays moderate even when cond(K) ~ 1e39, so the residual
passes while alpha is 100% wrong (its relative forward error is up to cond(K) eps). ``honest_solve`` therefore
accepts a rung only when both hold:

* the condition estimate: cond_1(K) * eps <= ``forward_tol`` (LAPACK's ``pocon``/``gecon`` in float64, Hager's
  1-norm estimator on our own factors in longdouble, an explicit inverse in mpmath), which bounds the forward error;
* the residual: ||K alpha - y|| / ||y|| <= ``tol``.

It moves up the ladder float64 -> numpy longdouble -> mpmath and raises ``InterpolationError`` (naming every
attempt) when no allowed precision passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg.lapack as lapack

from icml24._validation import check_finite, check_positive

PRECISIONS = ("float64", "longdouble", "mpmath")


class InterpolationError(ArithmeticError):
    """No allowed precision interpolates the data to the requested accuracy; nothing regularized is returned."""


def precision_eps(precision: str, dps: int = 50) -> float:
    """Unit roundoff of a precision (machine epsilon; 10^-dps for mpmath)."""
    if precision == "float64":
        return float(np.finfo(np.float64).eps)
    if precision == "longdouble":
        return float(np.finfo(np.longdouble).eps)
    if precision == "mpmath":
        return 10.0 ** -float(dps)
    raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")


def precision_digits(precision: str, dps: int = 50) -> float:
    """Decimal digits of a precision: -log10(machine epsilon), or ``dps`` for mpmath."""
    return -math.log10(precision_eps(precision, dps))


@dataclass
class InterpolationSolve:
    """The coefficients alpha of an interpolant that passed both checks, and how they were obtained.

    ``alpha`` has the solve's type (float64 or longdouble array, or an ``mpmath.matrix``); ``condition`` is the
    accepted rung's estimate of cond_1(K); ``attempts`` lists (precision, relative residual, condition estimate)
    of every rung tried, ``inf`` where the factorization itself failed.
    """

    alpha: object
    precision: str
    digits: float
    residual: float
    condition: float = math.nan
    attempts: list[tuple[str, float, float]] = field(default_factory=list)

    @property
    def float64_sufficient(self) -> bool:
        return self.precision == "float64"


# ---- longdouble: LU with partial pivoting, triangular solves and Hager's 1-norm estimator (LAPACK has none) ----

def extended_lu_factor(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(LU, perm)`` of K in numpy ``longdouble``: P K = L U with unit-lower L and U packed in ``LU``.

    One Python step per pivot, the trailing-block update in one array operation (O(n^3) work in numpy).
    """
    A = np.array(K, dtype=np.longdouble, copy=True)
    n = A.shape[0]
    if A.ndim != 2 or A.shape != (n, n):
        raise ValueError(f"K must be square, got shape {A.shape}")
    perm = np.arange(n)
    for j in range(n):
        pivot = j + int(np.argmax(np.abs(A[j:, j])))
        if A[pivot, j] == 0:
            raise np.linalg.LinAlgError(f"K is exactly singular in longdouble at pivot {j}")
        if pivot != j:
            A[[j, pivot]] = A[[pivot, j]]
            perm[[j, pivot]] = perm[[pivot, j]]
        A[j + 1:, j] /= A[j, j]
        A[j + 1:, j + 1:] -= np.outer(A[j + 1:, j], A[j, j + 1:])
    return A, perm


def _triangular(T: np.ndarray, b: np.ndarray, lower: bool, unit: bool) -> np.ndarray:
    n = T.shape[0]
    x = np.array(b, dtype=np.longdouble, copy=True)
    order = range(n) if lower else range(n - 1, -1, -1)
    for j in order:
        rest = slice(0, j) if lower else slice(j + 1, n)
        x[j] = x[j] - T[j, rest] @ x[rest]
        if not unit:
            x[j] = x[j] / T[j, j]
    return x


def extended_lu_apply(LU: np.ndarray, perm: np.ndarray, b: np.ndarray, transpose: bool = False) -> np.ndarray:
    """Solve K x = b (or K^T x = b) from ``extended_lu_factor``'s P K = L U, in longdouble."""
    b = np.asarray(b, dtype=np.longdouble)
    if not transpose:
        return _triangular(LU, _triangular(LU, b[perm], lower=True, unit=True), lower=False, unit=False)
    w = _triangular(LU.T, b, lower=True, unit=False)  # U^T w = b
    v = _triangular(LU.T, w, lower=False, unit=True)  # L^T v = w
    x = np.empty_like(v)
    x[perm] = v
    return x


def extended_lu_solve(K: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Solve K x = y in numpy ``longdouble`` by Gaussian elimination with partial pivoting."""
    LU, perm = extended_lu_factor(K)
    return extended_lu_apply(LU, perm, np.asarray(y).reshape(LU.shape[0], -1)).reshape(np.shape(y))


def hager_inverse_norm(solve: Callable[[np.ndarray, bool], np.ndarray], n: int, iterations: int = 5) -> float:
    """Hager's (1984) estimate of ||K^{-1}||_1 from solves with K and K^T (a lower bound, usually within 3x)."""
    x = np.full(n, 1.0 / n, dtype=np.longdouble)
    estimate = 0.0
    for _ in range(iterations):
        z = solve(x, False)
        estimate = float(np.abs(z).sum())
        xi = np.where(z >= 0, 1.0, -1.0).astype(np.longdouble)
        w = solve(xi, True)
        j = int(np.argmax(np.abs(w)))
        if np.abs(w[j]) <= w @ x:
            break
        x = np.zeros(n, dtype=np.longdouble)
        x[j] = 1.0
    return estimate


# ---- one rung each: (alpha, residual, condition estimate) ----

def _residual_numpy(K: np.ndarray, alpha: np.ndarray, y: np.ndarray, dtype=np.longdouble) -> float:
    Kd, ad, yd = (np.asarray(v, dtype=dtype) for v in (K, alpha, y))
    return float(np.linalg.norm((Kd @ ad - yd).astype(float)) / max(np.linalg.norm(y), np.finfo(float).tiny))


def _solve_float64(K: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Cholesky (``potrf``/``potrs``/``pocon``), or LU (``getrf``/``getrs``/``gecon``) when K is not numerically
    positive definite; the condition estimate is 1 / rcond in the 1-norm. Never a regularized solve."""
    anorm = float(np.abs(K).sum(axis=0).max())
    c, info = lapack.dpotrf(K, lower=False, clean=False)
    if info == 0:
        alpha, _ = lapack.dpotrs(c, y, lower=False)
        rcond, _ = lapack.dpocon(c, anorm, uplo="U")
    else:
        lu, piv, info = lapack.dgetrf(K)
        if info != 0:
            raise np.linalg.LinAlgError("K is exactly singular in float64")
        alpha, _ = lapack.dgetrs(lu, piv, y)
        rcond, _ = lapack.dgecon(lu, anorm)
    return alpha, (1.0 / rcond if rcond > 0 else math.inf)


def _solve_longdouble(K: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    LU, perm = extended_lu_factor(K)
    alpha = extended_lu_apply(LU, perm, y)
    inverse_norm = hager_inverse_norm(lambda b, t: extended_lu_apply(LU, perm, b, transpose=t), LU.shape[0])
    return alpha, float(np.abs(np.asarray(K, dtype=np.longdouble)).sum(axis=0).max()) * inverse_norm


def _solve_mpmath(K, y: np.ndarray, dps: int):
    import mpmath

    with mpmath.workdps(dps):
        rhs = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
        alpha = mpmath.lu_solve(K, rhs)
        res = mpmath.norm(K * alpha - rhs) / mpmath.norm(rhs)
        cond = mpmath.mnorm(K, 1) * mpmath.mnorm(mpmath.inverse(K), 1)
    return alpha, float(res), float(cond)


def honest_solve(build: Callable[[str], object], y: np.ndarray, tol: float = 1e-6,
                 precisions: tuple[str, ...] | list[str] = PRECISIONS, mp_max_n: int = 60,
                 mp_dps: int = 50, forward_tol: float = 1e-6) -> InterpolationSolve:
    """Interpolate: alpha with ||K alpha - y|| <= tol ||y|| and cond_1(K) eps <= forward_tol, at the lowest
    precision that achieves both.

    ``build(precision)`` returns K at that precision (a float64 or longdouble array, or an ``mpmath.matrix``);
    it is called once per rung, so K's entries are recomputed, not just cast. mpmath (pure Python, O(n^3)) is
    tried only for n <= ``mp_max_n``. Raises ``InterpolationError`` when every allowed rung fails: the caller
    then reports the point as "float64 (or extended) precision insufficient" instead of using a regularized fit.
    """
    y = np.asarray(check_finite("y", y), dtype=float).ravel()
    check_positive("tol", tol)
    check_positive("forward_tol", forward_tol)
    unknown = [p for p in precisions if p not in PRECISIONS]
    if unknown or not precisions:
        raise ValueError(f"precisions must be a non-empty subset of {', '.join(PRECISIONS)}, got {precisions}")
    n = y.size
    attempts: list[tuple[str, float, float]] = []
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
                K = np.asarray(K, dtype=float)
                alpha, cond = _solve_float64(K, y)
                residual = _residual_numpy(K, alpha, y, np.float64)  # BLAS first; longdouble only to confirm
                if residual > tol:
                    residual = _residual_numpy(K, alpha, y)
            elif precision == "longdouble":
                alpha, cond = _solve_longdouble(K, y)
                residual = _residual_numpy(K, alpha, y)
            else:
                alpha, residual, cond = _solve_mpmath(K, y, mp_dps)
        except (np.linalg.LinAlgError, ZeroDivisionError):
            residual, cond = math.inf, math.inf
        residual = residual if math.isfinite(residual) else math.inf
        cond = cond if math.isfinite(cond) else math.inf
        attempts.append((precision, residual, cond))
        if residual <= tol and cond * precision_eps(precision, mp_dps) <= forward_tol:
            return InterpolationSolve(alpha, precision, precision_digits(precision, mp_dps), residual, cond, attempts)
    tried = ", ".join(f"{p} residual {r:.1e} cond {c:.1e}" for p, r, c in attempts) or "no precision tried"
    raise InterpolationError(
        f"cannot interpolate {n} points to relative residual {tol:g} with forward error cond(K) eps <= "
        f"{forward_tol:g}: {tried}" + (f"; {'; '.join(notes)}" if notes else "")
        + ". The kernel matrix is numerically singular at these precisions; refusing to return a regularized "
        "(least-squares / pseudo-inverse) solve, which would not interpolate. Allow more precision "
        "(precisions, mp_max_n, mp_dps) or use fewer points.")
