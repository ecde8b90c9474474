"""The confidence set's constant, chosen on held-out episodes (the paper's 1/N rate, its constant calibrated).

C(xi) is only a bound when it covers the true bridges. The paper sets xi at the rate of the stage-II excess loss
(order dof / N) with an unspecified constant; we choose one constant per block on held-out data sets from a
simulator of the instance: for each, fit the estimator and measure the excess loss of the true bridges in its own
ellipsoid metric, scaled by N / dof; the constant is the (1 - alpha / K) quantile over data sets and sizes (K
blocks, so the set covers every block at once with probability >= 1 - alpha by the union bound). The held-out
data sets come from their own random stream and never include the episodes a policy is later learned from.
"""

from __future__ import annotations

import numpy as np

from icml24._random import check_random_state

from .identification import Bridges


def excess_losses(estimator, bridges: Bridges) -> np.ndarray:
    """L_hat(b) - L_hat(b_hat) for every block: <b - b_hat, H (b - b_hat)> (see ``block_hessians``)."""
    out = []
    for theta, centre, H in zip(bridges.blocks(), estimator.bridges_.blocks(), estimator.block_hessians()):
        diff = (np.asarray(theta) - centre).reshape(H.shape[0], -1)
        out.append(float(np.sum(diff * (H @ diff))))
    return np.array(out)


def calibrate_xi_scale(pomdp, truth: Bridges, make_estimator, sizes, n_datasets: int, random_state=None,
                       level: float = 0.9) -> np.ndarray:
    """Per-block constants c_k with xi_k = c_k dof_k / n_k, so that C(xi) covers ``truth`` at ``level``.

    ``make_estimator(seed)`` returns an unfitted ``TwoStageBridgeEstimator``; ``n_datasets`` held-out data sets of
    each size in ``sizes`` are drawn from ``pomdp`` with ``random_state`` (None, an int or a numpy Generator).
    """
    rng = check_random_state(random_state)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_datasets < 1 or not len(sizes):
        raise ValueError("need at least one held-out data set and one size")
    rows = []
    for n in sizes:
        for _ in range(int(n_datasets)):
            est = make_estimator(int(rng.integers(2**31))).fit(pomdp.sample(int(n), rng))
            dof = np.array([b.size for b in est.bridges_.blocks()], dtype=float)
            counts = np.array([est.n_] + [est.n2_] * (len(dof) - 1), dtype=float)
            rows.append(excess_losses(est, truth) * counts / dof)
    rows = np.array(rows)
    return np.quantile(rows, 1 - (1 - level) / rows.shape[1], axis=0)
