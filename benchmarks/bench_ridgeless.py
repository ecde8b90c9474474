"""Our vectorized estimators against straightforward peers, same inputs, outputs checked, time ratio in one run.

    python benchmarks/bench_ridgeless.py [--n 200] [--p 10000]

1. V = tr(Lambda Psi^T K^-2 Psi Lambda) from one eigendecomposition/SVD of Psi Lambda^{1/2} (``spectral_estimates``)
   against the per-feature loop sum_l lambda_l^2 |K^{-1} psi_l|^2 (K Cholesky-factored once): equal to 1e-8.
2. The same V against a Monte-Carlo test error of interpolated pure noise (2000 draws): equal within 4 standard
   errors (the only agreement a Monte-Carlo peer can give).
3. The longdouble interpolating solve (vectorized elimination) against mpmath's ``lu_solve`` at 30 digits on a
   Gaussian kernel matrix with cond ~ 1e11: equal to 1e-6 (forward error ~ eps_longdouble x cond).
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import best_of

from icml24.kernels import (
    eigendecay,
    extended_lu_solve,
    kernel_matrix,
    spectral_estimates,
    variance_monte_carlo,
    variance_per_feature_loop,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--p", type=int, default=10000)
    parser.add_argument("--a", type=float, default=1.0)
    args = parser.parse_args()
    lam = eigendecay("polynomial", args.a, args.p)
    psi = np.random.default_rng(0).standard_normal((args.n, args.p))

    ours, t_ours = best_of(lambda: spectral_estimates(psi, lam, bound_fractions=()).variance)
    loop, t_loop = best_of(lambda: variance_per_feature_loop(psi, lam), repeats=1)
    rel = abs(ours - loop) / loop
    assert rel < 1e-8, f"outputs differ: {ours} vs {loop}"
    print(f"V, n={args.n}, p={args.p}: ours {t_ours * 1e3:8.1f} ms, per-feature loop {t_loop * 1e3:8.1f} ms, "
          f"speed-up x{t_loop / t_ours:.1f}; V = {ours:.6f}, relative difference {rel:.1e}")

    (mc, stderr), t_mc = best_of(lambda: variance_monte_carlo(psi, lam, np.random.default_rng(1)), repeats=1)
    assert abs(mc - ours) < 4 * stderr, f"Monte Carlo {mc} +- {stderr} disagrees with {ours}"
    print(f"V vs Monte Carlo (2000 draws): ours {t_ours * 1e3:8.1f} ms, Monte Carlo {t_mc * 1e3:8.1f} ms, "
          f"speed-up x{t_mc / t_ours:.1f}; Monte Carlo {mc:.4f} +- {stderr:.4f}")

    import mpmath

    X = np.sort(np.random.default_rng(2).standard_normal((60, 1)), axis=0)
    y = np.random.default_rng(3).standard_normal(60)
    K_ld = kernel_matrix("gaussian", X, X, 0.05, precision="longdouble")  # cond ~ 1e11: float64 is not enough
    x_ld, t_ld = best_of(lambda: extended_lu_solve(K_ld, y))
    with mpmath.workdps(30):
        K_mp = kernel_matrix("gaussian", X, X, 0.05, precision="mpmath", dps=30)
        rhs = mpmath.matrix(y.tolist())
        x_mp, t_mp = best_of(lambda: mpmath.lu_solve(K_mp, rhs), repeats=1)
        x_mp = np.array([float(v) for v in x_mp])
    rel = float(np.max(np.abs(x_ld.astype(float) - x_mp)) / np.max(np.abs(x_mp)))
    rel64 = float(np.max(np.abs(np.linalg.solve(K_ld.astype(float), y) - x_mp)) / np.max(np.abs(x_mp)))
    assert rel < 1e-6, f"longdouble and mpmath solves differ by {rel}"  # forward error ~ eps_longdouble * cond
    print(f"interpolating solve n=60 (cond ~1e{np.log10(np.linalg.cond(K_ld.astype(float))):.0f}): longdouble "
          f"{t_ld * 1e3:8.1f} ms, mpmath {t_mp * 1e3:8.1f} ms, speed-up x{t_mp / t_ld:.0f}; "
          f"max relative difference {rel:.1e} (float64 solve: {rel64:.1e})")


if __name__ == "__main__":
    main()
