"""The tabular two-stage bridge estimator (feature-space ridge solves, vectorized over episodes) against a per-episode
loop that accumulates the stage-I counts one episode at a time and solves stage II cell by cell, as a tabular
reproduction would; and the pessimistic block minimiser against scipy's SLSQP on the same ellipsoid-ball problem.
One line per comparison: size, both times, ratio, whether the outputs agree (exit 1 if not); one BLAS thread.

    python benchmarks/bench_confounded_pomdp.py [--episodes 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _timing import best_of
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from icml24.rl import DeltaFeatures, HistoryInstrument, TwoStageBridgeEstimator, tabular_toy
from icml24.rl.confounded.pessimism import _Block


def loop_estimator(data, seed: int, split: float = 0.7):
    """Per-episode count loop, then one ridge solve per step (same estimator, delta kernels)."""
    n, T = data.n, data.horizon
    perm = np.random.default_rng(seed).permutation(n)
    n1 = int(round(split * n))
    lam1, lam2 = 1.0 / n1, 0.03 / np.sqrt(n - n1)
    reward = []
    for t in range(T):
        n_x = 2 * 6**t * 2
        cnt_x, cnt_w, cnt_r, cnt_d = np.zeros(n_x), np.zeros((n_x, 6)), np.zeros((n_x, 3)), np.zeros((n_x, 9))
        x_of = np.zeros(n, dtype=int)
        for i in range(n):  # the loop over episodes that the library avoids
            h = 0
            for j in range(t):
                h = h * 6 + int(data.obs[i, j]) * 2 + int(data.actions[i, j])
            x = (int(data.actions[i, t]) * 6**t + h) * 2 + int(data.o0[i])
            x_of[i] = x
        for i in perm[:n1]:
            x, o = x_of[i], int(data.obs[i, t])
            cnt_x[x] += 1
            cnt_w[x, int(data.actions[i, t]) * 3 + o] += 1
            cnt_r[x, o] += data.rewards[i, t]
            if t < T - 1:
                cnt_d[x, int(data.obs[i, t + 1]) * 3 + o] += 1
        denom = (cnt_x + n1 * lam1)[:, None]
        mu, p_r = cnt_w / denom, cnt_r / denom
        weight = np.bincount(x_of[perm[n1:]], minlength=n_x) / (n - n1)
        H = (mu * weight[:, None]).T @ mu + lam2 * np.eye(6)
        reward.append(np.linalg.solve(H, (mu * weight[:, None]).T @ p_r).reshape(2, 3, 3))
    return reward


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with threadpool_limits(1):  # one BLAS thread for both sides: the loop cannot use more
        ok = _compare(args)
    sys.exit(0 if ok else 1)


def _compare(args) -> bool:
    ok = True
    data = tabular_toy().sample(args.episodes, np.random.default_rng(0))
    est = TwoStageBridgeEstimator(DeltaFeatures(3), HistoryInstrument(2, n_obs=3, n_o0=2), 2, 3, random_state=0)
    fast, t_fast = best_of(lambda: est.fit(data).bridges_.reward, args.repeats)
    slow, t_slow = best_of(lambda: loop_estimator(data, 0), 1)
    agree = all(np.allclose(a, b, atol=1e-9) for a, b in zip(fast, slow))
    ok &= agree
    print(f"two-stage bridge estimator, tabular toy, N={args.episodes}, T=3: vectorized {t_fast:.3f} s, "
          f"per-episode loop {t_slow:.3f} s, ratio {t_slow / t_fast:.1f}x, bridges agree: {agree}")

    rng = np.random.default_rng(1)
    basis = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    H = basis @ np.diag([2.0, 1.0, 0.5, 0.2, 1e-3, 1e-3]) @ basis.T
    centre, grad = rng.standard_normal((6, 9)), rng.standard_normal((6, 9))
    blk = _Block(centre, H, xi=0.2, radius=1.1 * np.linalg.norm(centre))
    ours, t_ours = best_of(lambda: blk.argmin_linear(grad), args.repeats)
    cons = [{"type": "ineq", "fun": lambda v: blk.xi - blk.excess(v)},
            {"type": "ineq", "fun": lambda v: blk.radius**2 - (v**2).sum()}]
    ref, t_ref = best_of(lambda: minimize(lambda v: grad.ravel() @ v, centre.ravel(), constraints=cons,
                                        method="SLSQP", options={"ftol": 1e-12, "maxiter": 1000}), 1)
    agree = bool((grad * ours).sum() <= ref.fun + 1e-4 * (1 + abs(ref.fun)))
    ok &= agree
    print(f"pessimistic block step (linear over ellipsoid and ball), 54 parameters: ours {t_ours * 1e3:.2f} ms, "
          f"SLSQP {t_ref * 1e3:.1f} ms, ratio {t_ref / t_ours:.1f}x, minimum as low as SLSQP's: {agree} "
          f"({(grad * ours).sum():.6f} vs {ref.fun:.6f})")
    return ok


if __name__ == "__main__":
    main()
