"""KernelRidgeless against what a user would pick instead, outputs checked, CPU-time ratios in one run.

    python benchmarks/bench_ridgeless.py [--n 1000] [--d 10]

Every line is the median of 5 runs after one warm-up, in CPU seconds of this process with BLAS on one thread (the
machine is shared), and the script exits 1 when a comparison's outputs disagree.

1. (peer library) ``KernelRidgeless`` (Gaussian kernel, fit + predict) against scikit-learn's
   ``KernelRidge(alpha=0, kernel="rbf")`` where float64 is safe (cond(K) eps <= 1e-6): the same interpolant to
   1e-8. Both pay one Cholesky factorization; ours adds LAPACK's O(n^2) ``pocon`` condition estimate and a
   matrix-vector residual (the honesty checks), and builds K from exact differences (fused numba pass) where
   scikit-learn uses the |x|^2 + |y|^2 - 2 x.y GEMM. Target: ratio >= 0.8.
2. (secondary) V = tr(Lambda Psi^T K^-2 Psi Lambda) from one SVD (``spectral_estimates``) against the per-feature
   loop sum_l lambda_l^2 |K^{-1} psi_l|^2: equal to 1e-8; and against a Monte-Carlo test error (within 4 s.e.).
3. (secondary) the longdouble solve (vectorized elimination) against mpmath's ``lu_solve`` at 30 digits on a
   Gaussian kernel matrix with cond ~ 1e11: equal to 1e-6.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import check, finish
from _timing import median_of as _median_of
from threadpoolctl import threadpool_limits

from icml24.kernels import (
    KernelRidgeless,
    eigendecay,
    extended_lu_solve,
    kernel_matrix,
    spectral_estimates,
    variance_monte_carlo,
    variance_per_feature_loop,
)


def median_of(fn, runs: int = 5, warmup: int = 1):
    """``(fn(), median CPU seconds over runs)`` after ``warmup`` untimed calls."""
    return _median_of(fn, repeats=runs, warmup=warmup, clock=time.process_time)


def against_scikit_learn(n: int, d: int, bandwidth: float) -> None:
    from sklearn.kernel_ridge import KernelRidge

    rng = np.random.default_rng(0)
    X, X_test = rng.standard_normal((n, d)), rng.standard_normal((500, d))
    y = np.sin(X.sum(axis=1)) + 0.1 * rng.standard_normal(n)
    model = KernelRidgeless("gaussian", bandwidth).fit(X, y)
    check(model.float64_sufficient_, f"n={n}, d={d}: float64 not safe here (cond {model.condition_:.1e})")
    ours, t_ours = median_of(lambda: KernelRidgeless("gaussian", bandwidth).fit(X, y).predict(X_test))
    theirs, t_theirs = median_of(
        lambda: KernelRidge(alpha=0.0, kernel="rbf", gamma=0.5 / bandwidth**2).fit(X, y).predict(X_test))
    diff = float(np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))
    check(diff < 1e-8, f"KernelRidgeless and KernelRidge(alpha=0) differ by {diff:.1e}")
    print(f"interpolant n={n}, d={d} (cond {model.condition_:.1e}, float64 safe): KernelRidgeless "
          f"{t_ours * 1e3:7.1f} ms, scikit-learn KernelRidge(alpha=0) {t_theirs * 1e3:7.1f} ms, ratio "
          f"x{t_theirs / t_ours:.2f} (target >= 0.8); max relative difference {diff:.1e}")


def secondary(n: int, p: int, a: float) -> None:
    lam = eigendecay("polynomial", a, p)
    psi = np.random.default_rng(0).standard_normal((n, p))
    ours, t_ours = median_of(lambda: spectral_estimates(psi, lam, bound_fractions=()).variance)
    loop, t_loop = median_of(lambda: variance_per_feature_loop(psi, lam))
    rel = abs(ours - loop) / loop
    check(rel < 1e-8, f"V: {ours} vs per-feature loop {loop}")
    print(f"V, n={n}, p={p}: ours {t_ours * 1e3:8.1f} ms, per-feature loop {t_loop * 1e3:8.1f} ms, "
          f"ratio x{t_loop / t_ours:.1f}; relative difference {rel:.1e}")
    (mc, stderr), t_mc = median_of(lambda: variance_monte_carlo(psi, lam, np.random.default_rng(1)))
    check(abs(mc - ours) < 4 * stderr, f"Monte Carlo V {mc} +- {stderr} vs {ours}")
    print(f"V vs Monte Carlo (2000 draws): ours {t_ours * 1e3:8.1f} ms, Monte Carlo {t_mc * 1e3:8.1f} ms, "
          f"ratio x{t_mc / t_ours:.1f}; Monte Carlo {mc:.4f} +- {stderr:.4f}")

    import mpmath

    X = np.sort(np.random.default_rng(2).standard_normal((60, 1)), axis=0)
    y = np.random.default_rng(3).standard_normal(60)
    K_ld = kernel_matrix("gaussian", X, X, 0.05, precision="longdouble")  # cond ~ 1e11: float64 is not enough
    x_ld, t_ld = median_of(lambda: extended_lu_solve(K_ld, y))
    with mpmath.workdps(30):
        K_mp = kernel_matrix("gaussian", X, X, 0.05, precision="mpmath", dps=30)
        rhs = mpmath.matrix(y.tolist())
        x_mp, t_mp = median_of(lambda: mpmath.lu_solve(K_mp, rhs))
        x_mp = np.array([float(v) for v in x_mp])
    rel = float(np.max(np.abs(x_ld.astype(float) - x_mp)) / np.max(np.abs(x_mp)))
    check(rel < 1e-6, f"longdouble and mpmath solves differ by {rel}")  # forward error ~ eps_longdouble * cond
    print(f"interpolating solve n=60 (cond ~1e11): longdouble {t_ld * 1e3:8.1f} ms, mpmath {t_mp * 1e3:8.1f} ms, "
          f"ratio x{t_mp / t_ld:.0f}; max relative difference {rel:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--bandwidth", type=float, default=1.0)
    parser.add_argument("--spectral-n", type=int, default=200)
    parser.add_argument("--p", type=int, default=4000)
    parser.add_argument("--a", type=float, default=1.0)
    args = parser.parse_args()
    with threadpool_limits(1):
        against_scikit_learn(args.n, args.d, args.bandwidth)
        against_scikit_learn(2 * args.n, 2 * args.d, 2 * args.bandwidth)
        secondary(args.spectral_n, args.p, args.a)
    finish()


if __name__ == "__main__":
    main()
