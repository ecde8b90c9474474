"""Kernel ridgeless regression: the minimum-norm interpolant f(x) = K(x, X) K^{-1} y, solved honestly.

Cheng, Lucchi, Kratsios & Belius, "Characterizing Overfitting in Kernel Ridgeless Regression Through the
Eigenspectrum", ICML 2024, Sec. 2 (the ridge lambda -> 0 limit of kernel ridge regression).
"""

from __future__ import annotations

import numpy as np

from icml24._validation import FittedAttributes, check_finite, check_fitted, check_positive

from .radial import KERNELS, kernel_matrix
from .solve import PRECISIONS, honest_solve


class KernelRidgeless(FittedAttributes):
    """Minimum-norm kernel interpolation with a residual check and a precision ladder.

    Parameters:
        kernel: "laplace" (polynomial eigendecay) or "gaussian" (exponential eigendecay).
        bandwidth: the kernel's length scale l.
        tol: largest accepted relative interpolation residual ||K alpha - y|| / ||y||.
        precisions: the rungs tried in order (subset of float64, longdouble, mpmath).
        mp_max_n, mp_dps: mpmath is tried only for n <= mp_max_n, at mp_dps digits.

    ``fit`` raises ``InterpolationError`` when no allowed precision interpolates (never a regularized solve).
    Learned: ``X_``, ``alpha_`` (in the solve's precision), ``precision_``, ``digits_``, ``residual_``,
    ``attempts_``, ``float64_sufficient_``.
    """

    def __init__(self, kernel: str = "laplace", bandwidth: float = 1.0, tol: float = 1e-6,
                 precisions: tuple[str, ...] = PRECISIONS, mp_max_n: int = 60, mp_dps: int = 50):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
        self.kernel = kernel
        self.bandwidth = check_positive("bandwidth", bandwidth)
        self.tol = check_positive("tol", tol)
        self.precisions = tuple(precisions)
        self.mp_max_n = int(mp_max_n)
        self.mp_dps = int(mp_dps)

    def _gram(self, A: np.ndarray, B: np.ndarray, precision: str):
        return kernel_matrix(self.kernel, A, B, self.bandwidth, precision=precision, dps=self.mp_dps)

    def fit(self, X: np.ndarray, y: np.ndarray) -> KernelRidgeless:
        """Solve K alpha = y (Eq.: f(x) = K(x, X) K^{-1} y) at the lowest precision whose residual passes."""
        X = np.atleast_2d(np.asarray(check_finite("X", X), dtype=float))
        y = np.asarray(check_finite("y", y), dtype=float).ravel()
        if X.shape[0] != y.size:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.size} entries")
        solve = honest_solve(lambda precision: self._gram(X, X, precision), y, tol=self.tol,
                             precisions=self.precisions, mp_max_n=self.mp_max_n, mp_dps=self.mp_dps)
        self.X_ = X
        self.alpha_ = solve.alpha
        self.precision_ = solve.precision
        self.digits_ = solve.digits
        self.residual_ = solve.residual
        self.attempts_ = solve.attempts
        self.float64_sufficient_ = solve.float64_sufficient
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """f(x) = K(x, X_train) alpha, with K(x, X_train) and the product at the fit's precision."""
        check_fitted(self, "alpha_")
        X = np.atleast_2d(np.asarray(check_finite("X", X), dtype=float))
        if X.shape[1] != self.X_.shape[1]:
            raise ValueError(f"X must have {self.X_.shape[1]} columns, got {X.shape[1]}")
        cross = self._gram(X, self.X_, self.precision_)
        if self.precision_ == "mpmath":
            import mpmath

            with mpmath.workdps(self.mp_dps):
                out = cross * self.alpha_
            return np.array([float(out[i]) for i in range(X.shape[0])])
        return np.asarray(cross @ self.alpha_, dtype=float)


class KernelRidgeCV(FittedAttributes):
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
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
        self.kernel = kernel
        self.bandwidth = check_positive("bandwidth", bandwidth)
        self.ridges = tuple(check_positive("ridges", float(r)) for r in ridges)
        if not self.ridges:
            raise ValueError("ridges must hold at least one positive lambda")

    def fit(self, X: np.ndarray, y: np.ndarray) -> KernelRidgeCV:
        X = np.atleast_2d(np.asarray(check_finite("X", X), dtype=float))
        y = np.asarray(check_finite("y", y), dtype=float).ravel()
        if X.shape[0] != y.size:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.size} entries")
        K = kernel_matrix(self.kernel, X, X, self.bandwidth)
        s, U = np.linalg.eigh(K)
        s = np.clip(s, 0.0, None)  # K is PSD; rounding can leave tiny negative eigenvalues
        uty = U.T @ y
        scale = float(np.mean(np.diag(K)))
        best = (np.inf, 0.0)
        for ridge in self.ridges:
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

    def predict(self, X: np.ndarray) -> np.ndarray:
        check_fitted(self, "alpha_")
        X = np.atleast_2d(np.asarray(check_finite("X", X), dtype=float))
        if X.shape[1] != self.X_.shape[1]:
            raise ValueError(f"X must have {self.X_.shape[1]} columns, got {X.shape[1]}")
        return kernel_matrix(self.kernel, X, self.X_, self.bandwidth) @ self.alpha_
