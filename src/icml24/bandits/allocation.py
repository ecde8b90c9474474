"""The optimal allocation of a linear bandit (the E4 paper's "estimate" step), solved with scipy.

Given estimated gaps ``Delta_x`` and the estimated best arm ``x*``, find pull rates ``w >= 0`` that

    minimise  sum_x w_x Delta_x   subject to   ||x||^2_{H(w)^{-1}} <= Delta_x^2 / 2   for every x != x*,

with ``H(w) = sum_x w_x x x^T``: the program whose value is ``c*(theta)`` in the asymptotic lower bound
(Lattimore & Szepesvári 2017; E4's Algorithm 1, step 2, solves it at the estimated gaps). Pulling ``w * log T`` times
each arm is the cheapest way to tell ``x*`` apart from every other arm, and ``log T * sum_x w_x Delta_x`` is
the asymptotic regret lower bound.

The program is convex (``w -> x^T H(w)^{-1} x`` is convex). The official code writes it as an SDP through
Schur complements and solves it with cvxpy/SCS; we use scipy/numpy only. Writing ``w_j = F q_j / Delta_j`` with
``q`` in the simplex turns it into a minimax design (``F`` is the optimal cost):

    F = min_q max_i u_i^T M(q)^{-1} u_i,   M(q) = sum_j q_j y_j y_j^T,   y_j = x_j / sqrt(Delta_j),
                                          u_i = sqrt(2) x_i / Delta_i,

which we solve as a saddle point over ``(q, mu)``: ``mu`` (weights on the constraints) by exponentiated
gradient, ``q`` by the multiplicative algorithm of L-optimal design (Silvey, Titterington & Torsney 1978; Yu
2010), ``q_j <- q_j g_j^(1/2) / sum_k q_k g_k^(1/2)`` with ``g_j = sum_i mu_i (u_i^T M^{-1} y_j)^2``. Every
iterate gives feasible weights ``w = F(q) q / Delta`` with cost ``F(q)``; we keep the best one.

``x*`` has ``Delta = 0``: its weight costs nothing, so the infimum puts infinite weight on it (cvxpy/CLARABEL
returns ``w_x* ~ 1e6``). We take that limit exactly: as ``w_x* -> inf``, ``x^T H(w)^{-1} x`` tends to the same
quantity for the arms projected onto the orthogonal complement of ``x*``, so we solve the program there, in
``d - 1`` dimensions, and report ``w_x* = inf`` (E4 caps every pull count anyway).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml24._validation import check_finite


@dataclass
class Allocation:
    """Solution of the allocation problem.

    Attributes:
        weights (``[K]``): ``w``; the best arm's entry is ``inf``.
        objective (float): ``sum_x w_x Delta_x``.
        max_ratio (float): ``max_x 2 ||x||^2_{H(w)^{-1}} / Delta_x^2`` over suboptimal arms (1 at the solution).
        converged (bool): whether the optimality test passed before ``max_iter``.
        iterations (int): iterations used.
    """

    weights: np.ndarray
    objective: float
    max_ratio: float
    converged: bool
    iterations: int


def _span_basis(points: np.ndarray) -> np.ndarray:
    """Orthonormal basis ``[d, r]`` of the span of the rows of ``points``."""
    _, singular, vt = np.linalg.svd(points, full_matrices=False)
    rank = int(np.sum(singular > max(singular[0], 1e-300) * 1e-10)) if singular.size else 0
    return vt[:rank].T


def optimal_allocation(arms, gaps, best: int | None = None, min_gap: float = 1e-6, tol: float = 1e-4,
                       max_iter: int = 5000, step: float = 2.0) -> Allocation:
    """Solve ``min_w sum w_x Delta_x  s.t.  ||x||^2_{H(w)^{-1}} <= Delta_x^2 / 2`` for ``x != best``, ``w >= 0``.

    Args:
        arms (array ``[K, d]``): the arm set.
        gaps (array ``[K]``): estimated gaps ``Delta_x >= 0`` (``Delta`` of ``best`` is ignored).
        best (int, optional): index of the estimated best arm (default: the arm of smallest gap).
        min_gap (float, default 1e-6): gaps of other arms are floored here (a tie makes the program infeasible).
        tol (float, default 1e-4): stop when the equivalence theorem holds to this relative precision:
            ``max_j g_j`` and ``max_i ratio_i`` both within ``1 + tol`` of ``sum_i mu_i ratio_i``.
        max_iter (int, default 5000): iteration cap (the best iterate so far is returned).
        step (float, default 2.0): exponentiated-gradient step for the constraint weights ``mu``.
    """
    arms = check_finite("arms", np.asarray(arms, dtype=float))
    gaps = check_finite("gaps", np.asarray(gaps, dtype=float))
    num_arms = arms.shape[0] if arms.ndim == 2 else -1
    if arms.ndim != 2 or gaps.shape != (num_arms,):
        raise ValueError(f"arms must be [K, d] and gaps [K]; got {arms.shape} and {gaps.shape}")
    best = int(np.argmin(gaps)) if best is None else int(best)
    sub = np.delete(np.arange(num_arms), best)
    weights = np.zeros(num_arms)
    weights[best] = np.inf
    if sub.size == 0:
        return Allocation(weights, 0.0, 0.0, True, 0)
    x_best = arms[best]
    projected = arms[sub] - np.outer(arms[sub] @ x_best, x_best) / max(x_best @ x_best, 1e-300)  # w_x* -> inf
    basis = _span_basis(projected)
    if basis.shape[1] == 0:  # every arm is parallel to x*: no constraint binds
        weights[sub] = 0.0
        return Allocation(weights, 0.0, 0.0, True, 0)
    z = projected @ basis  # [S, r]
    gaps_sub = np.maximum(gaps[sub], min_gap)
    design_points = z / np.sqrt(gaps_sub)[:, None]  # y_j
    targets = z * (np.sqrt(2.0) / gaps_sub)[:, None]  # u_i
    q = np.full(sub.size, 1.0 / sub.size)
    mu = np.full(sub.size, 1.0 / sub.size)
    best_cost, best_q, converged = np.inf, q, False
    for iteration in range(1, max_iter + 1):  # noqa: B007 (reported after the loop)
        moment = (design_points.T * q) @ design_points  # M(q)
        solved = np.linalg.solve(moment, targets.T).T  # M^{-1} u_i   [S, r]
        ratios = np.einsum("ir,ir->i", solved, targets)
        cost = float(ratios.max())
        if cost < best_cost:
            best_cost, best_q = cost, q.copy()
        mu = mu * np.exp(step * (ratios / cost - 1.0))  # ascent on the active constraints
        mu /= mu.sum()
        mixed = float(mu @ ratios)
        g = mu @ (solved @ design_points.T) ** 2  # g_j = sum_i mu_i (u_i^T M^{-1} y_j)^2
        if g.max() <= mixed * (1 + tol) and cost <= mixed * (1 + tol):
            converged = True
            break
        q = q * np.sqrt(g)  # multiplicative L-optimal step (power 1/2); sum_j q_j g_j = mixed keeps the scale
        q /= q.sum()
    w_sub = best_cost * best_q / gaps_sub
    weights[sub] = w_sub
    return Allocation(weights, float(w_sub @ gaps_sub), _max_ratio(arms, sub, gaps_sub, w_sub, x_best),
                      converged, iteration)


def _max_ratio(arms, sub, gaps_sub, w_sub, x_best, big: float = 1e9) -> float:
    """``max_i 2 ||x_i||^2_{H(w)^{-1}} / Delta_i^2`` with a very large weight on ``x*`` (a check of feasibility)."""
    gram = (arms[sub].T * w_sub) @ arms[sub] + big * max(1.0, float(w_sub.max())) * np.outer(x_best, x_best)
    gram += 1e-12 * np.trace(gram) * np.eye(arms.shape[1])
    values = np.einsum("id,id->i", np.linalg.lstsq(gram, arms[sub].T, rcond=None)[0].T, arms[sub])
    return float((2.0 * values / gaps_sub**2).max())
