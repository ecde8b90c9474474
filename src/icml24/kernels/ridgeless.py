"""Kernel ridgeless regression: the minimum-norm interpolant f(x) = K(x, X) K^{-1} y, solved honestly.

Cheng, Lucchi, Kratsios & Belius, "Characterizing Overfitting in Kernel Ridgeless Regression Through the
Eigenspectrum", ICML 2024, Sec. 2 (the ridge lambda -> 0 limit of kernel ridge regression).

Both estimators are scikit-learn estimators (``clone``, ``get_params``, ``cross_val_score``; they pass
``check_estimator``): ``__init__`` stores its arguments verbatim, ``fit`` validates them (one helper,
``_check_kernel_params``) and the data (scikit-learn's ``validate_data``).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import validate_data

from icml24._validation import FittedAttributes, check_finite, check_fitted, check_positive

from .radial import KERNELS, kernel_matrix
from .solve import PRECISIONS, InterpolationError, honest_solve


def _check_kernel_params(estimator) -> None:
    """The checks both estimators share: a known kernel and a positive finite bandwidth."""
    if estimator.kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {estimator.kernel!r}")
    _check_number("bandwidth", estimator.bandwidth)


def _check_number(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    check_positive(name, value)


def _check_xy(estimator, X, y) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's checks (``validate_data``): a dense, real, non-empty 2-d X [n, d] (a 1-d X, sparse or complex
    input, ``y=None`` and a 2-d y are refused with scikit-learn's messages), float64 arrays, ``n_features_in_`` and
    ``feature_names_in_`` recorded; NaN/inf are named first by argument."""
    check_finite("X", X)
    check_finite("y", y)
    X, y = validate_data(estimator, X, y, y_numeric=True, dtype=np.float64)
    return X, np.asarray(y, dtype=np.float64)


def _distinct_rows(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` without repeated rows of X (first occurrences, in order); unchanged when every row is distinct.

    A repeated point is one interpolation condition: with equal labels the minimum-norm interpolant is the one through
    the distinct points (K with a repeated row is singular in every precision, so the honest solve would refuse it);
    with different labels no function interpolates them, an ``InterpolationError``.
    """
    _, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    if len(first) == len(X):
        return X, y
    clash = np.flatnonzero(y != y[first][inverse.ravel()])
    if clash.size:
        i = int(clash[0])
        j = int(first[inverse.ravel()[i]])
        raise InterpolationError(f"rows {j} and {i} of X are the same point with different y ({y[j]!r} and "
                                 f"{y[i]!r}): no function interpolates both; average repeated points' labels or "
                                 "use KernelRidgeCV")
    keep = np.sort(first)
    return X[keep], y[keep]


def _check_predict_x(estimator, X) -> np.ndarray:
    check_fitted(estimator, "alpha_")
    check_finite("X", X)
    return validate_data(estimator, X, reset=False, dtype=np.float64)  # as many features as at fit


class KernelRidgeless(FittedAttributes, RegressorMixin, BaseEstimator):
    """Minimum-norm kernel interpolation with a condition check, a residual check and a precision ladder.

    Parameters:
        kernel: "laplace" (polynomial eigendecay) or "gaussian" (exponential eigendecay).
        bandwidth: the kernel's length scale l.
        tol: largest accepted relative interpolation residual ||K alpha - y|| / ||y||.
        forward_tol: largest accepted bound cond_1(K) * eps on the coefficients' relative forward error (a
            residual alone passes a wrong alpha when the labels are smooth; see ``solve.py``).
        precisions: the rungs tried in order (subset of float64, longdouble, mpmath).
        mp_max_n: mpmath is tried only for n <= mp_max_n.
        mp_dps: the digits mpmath works at.

    ``fit`` raises ``InterpolationError`` when no allowed precision interpolates (never a regularized solve).
    A point repeated in X with the same label is one condition (``X_`` keeps its first occurrence); repeated with
    different labels it has no interpolant (``InterpolationError``).
    Where float64 is safe (the first rung passes both checks) fitting costs one Cholesky factorization, its
    ``pocon`` condition estimate and one matrix-vector residual, as scikit-learn's ``KernelRidge(alpha=0)``.
    Learned: ``X_``, ``alpha_`` (in the solve's precision), ``precision_``, ``digits_``, ``residual_``,
    ``condition_``, ``attempts_``, ``float64_sufficient_``.
    """

    def __init__(self, kernel: str = "laplace", bandwidth: float = 1.0, tol: float = 1e-6,
                 forward_tol: float = 1e-6, precisions: tuple[str, ...] = PRECISIONS, mp_max_n: int = 60,
                 mp_dps: int = 50):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.tol = tol
        self.forward_tol = forward_tol
        self.precisions = precisions
        self.mp_max_n = mp_max_n
        self.mp_dps = mp_dps

    def _gram(self, A: np.ndarray, B: np.ndarray, precision: str):
        return kernel_matrix(self.kernel, A, B, self.bandwidth, precision=precision, dps=int(self.mp_dps))

    def fit(self, X, y) -> KernelRidgeless:
        """Solve K alpha = y (f(x) = K(x, X) K^{-1} y) at the lowest precision that passes both checks."""
        _check_kernel_params(self)
        _check_number("tol", self.tol)
        _check_number("forward_tol", self.forward_tol)
        for name in ("mp_max_n", "mp_dps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        precisions = (self.precisions,) if isinstance(self.precisions, str) else tuple(self.precisions)
        X, y = _distinct_rows(*_check_xy(self, X, y))
        solve = honest_solve(lambda precision: self._gram(X, X, precision), y, tol=self.tol,
                             precisions=precisions, mp_max_n=int(self.mp_max_n), mp_dps=int(self.mp_dps),
                             forward_tol=self.forward_tol)
        self.X_ = X
        self.alpha_ = solve.alpha
        self.precision_ = solve.precision
        self.digits_ = solve.digits
        self.residual_ = solve.residual
        self.condition_ = solve.condition
        self.attempts_ = solve.attempts
        self.float64_sufficient_ = solve.float64_sufficient
        return self

    def predict(self, X) -> np.ndarray:
        """f(x) = K(x, X_train) alpha, with K(x, X_train) and the product at the fit's precision."""
        X = _check_predict_x(self, X)
        cross = self._gram(X, self.X_, self.precision_)
        if self.precision_ == "mpmath":
            import mpmath

            with mpmath.workdps(int(self.mp_dps)):
                out = cross * self.alpha_
            return np.array([float(out[i]) for i in range(X.shape[0])])
        return np.asarray(cross @ self.alpha_, dtype=float)


class KernelRidgeCV(FittedAttributes, RegressorMixin, BaseEstimator):
    """Kernel ridge regression f(x) = K(x, X) (K + lambda I)^{-1} y with lambda chosen by exact leave-one-out CV.

    The regularized comparison of Cheng et al. (ICML 2024): with a tuned ridge the estimator is consistent, while
    the ridgeless limit lambda -> 0 overfits (tempered or catastrophically). The LOO residuals come in closed form
    from one eigendecomposition K = U diag(s) U^T: e_i / (1 - H_ii), H = K (K + lambda I)^{-1}.

    Parameters:
        kernel, bandwidth: as ``KernelRidgeless``.
        ridges: the lambda grid, relative to the mean diagonal of K.

    Learned: ``X_``, ``alpha_``, ``ridge_`` (the chosen lambda), ``loo_mse_`` (its leave-one-out error).
    """

    def __init__(self, kernel: str = "laplace", bandwidth: float = 1.0,
                 ridges: tuple[float, ...] = tuple(np.logspace(-8, 2, 41))):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.ridges = ridges

    def fit(self, X, y) -> KernelRidgeCV:
        _check_kernel_params(self)
        ridges = list(np.atleast_1d(self.ridges))
        for r in ridges:
            _check_number("ridges", r)
        if not ridges:
            raise ValueError("ridges must hold at least one positive lambda")
        X, y = _check_xy(self, X, y)
        K = kernel_matrix(self.kernel, X, X, self.bandwidth)
        s, U = np.linalg.eigh(K)
        s = np.clip(s, 0.0, None)  # K is PSD; rounding can leave tiny negative eigenvalues
        uty = U.T @ y
        scale = float(np.mean(np.diag(K)))
        best = (np.inf, 0.0)
        for ridge in ridges:
            lam = ridge * scale
            shrink = s / (s + lam)
            residual = y - U @ (shrink * uty)
            leverage = (U**2) @ shrink
            loo = float(np.mean((residual / (1.0 - leverage)) ** 2))
            if np.isfinite(loo) and loo < best[0]:  # a near-interpolating lambda can leave 1 - H_ii ~ 0
                best = (loo, lam)
        self.loo_mse_, self.ridge_ = best
        self.alpha_ = U @ (uty / (s + self.ridge_))
        self.X_ = X
        return self

    def predict(self, X) -> np.ndarray:
        X = _check_predict_x(self, X)
        return kernel_matrix(self.kernel, X, self.X_, self.bandwidth) @ self.alpha_
