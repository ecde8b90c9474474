"""Kernel ridgeless regression: the minimum-norm interpolant f(x) = K(x, X) K^{-1} y, solved honestly.

Cheng, Lucchi, Kratsios & Belius, "Characterizing Overfitting in Kernel Ridgeless Regression Through the
Eigenspectrum", ICML 2024, Sec. 2 (the ridge lambda -> 0 limit of kernel ridge regression).

Both estimators are scikit-learn estimators (``clone``, ``get_params``, ``cross_val_score``): ``__init__`` stores its
arguments verbatim, ``fit`` validates them (one helper, ``_check_kernel_params``) and the data.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from icml24._validation import FittedAttributes, check_finite, check_fitted, check_positive

from .radial import KERNELS, kernel_matrix
from .solve import PRECISIONS, honest_solve


def _check_kernel_params(estimator) -> None:
    """The checks both estimators share: a known kernel and a positive finite bandwidth."""
    if estimator.kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {estimator.kernel!r}")
    _check_number("bandwidth", estimator.bandwidth)


def _check_number(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    check_positive(name, value)


def _check_xy(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(check_finite("X", X), dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-d array (n samples x d features), got shape {X.shape}")
    y = np.asarray(check_finite("y", y), dtype=float)
    if y.ndim > 1 and not (y.ndim == 2 and y.shape[1] == 1):
        raise ValueError(f"y must be 1-d (one response per row of X), got shape {y.shape}")
    y = y.ravel()
    if X.shape[0] != y.size:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.size} entries")
    return X, y


def _check_predict_x(estimator, X) -> np.ndarray:
    check_fitted(estimator, "alpha_")
    X = np.asarray(check_finite("X", X), dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != estimator.X_.shape[1]:
        raise ValueError(f"X must have {estimator.X_.shape[1]} columns, got shape {X.shape}")
    return X


class KernelRidgeless(FittedAttributes, RegressorMixin, BaseEstimator):
    """Minimum-norm kernel interpolation with a condition check, a residual check and a precision ladder.

    Parameters:
        kernel: "laplace" (polynomial eigendecay) or "gaussian" (exponential eigendecay).
        bandwidth: the kernel's length scale l.
        tol: largest accepted relative interpolation residual ||K alpha - y|| / ||y||.
        forward_tol: largest accepted bound cond_1(K) * eps on the coefficients' relative forward error (a
            residual alone passes a wrong alpha when the labels are smooth; see ``solve.py``).
        precisions: the rungs tried in order (subset of float64, longdouble, mpmath).
        mp_max_n, mp_dps: mpmath is tried only for n <= mp_max_n, at mp_dps digits.

    ``fit`` raises ``InterpolationError`` when no allowed precision interpolates (never a regularized solve).
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
        X, y = _check_xy(X, y)
        solve = honest_solve(lambda precision: self._gram(X, X, precision), y, tol=self.tol,
                             precisions=precisions, mp_max_n=int(self.mp_max_n), mp_dps=int(self.mp_dps),
                             forward_tol=self.forward_tol)
        self.X_ = X
        self.n_features_in_ = X.shape[1]
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
        kernel, bandwidth: as :class:`KernelRidgeless`.
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
        X, y = _check_xy(X, y)
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
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        X = _check_predict_x(self, X)
        return kernel_matrix(self.kernel, X, self.X_, self.bandwidth) @ self.alpha_
