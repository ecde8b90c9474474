"""D-optimal (G-optimal) experimental design on a finite arm set by Frank-Wolfe (Fedorov-Wynn).

Kiefer-Wolfowitz: the design ``pi`` maximising ``log det V(pi)``, ``V(pi) = sum_x pi(x) x x^T``, also minimises
``g(pi) = max_x ||x||^2_{V(pi)^{-1}}``, and at the optimum ``g = d``. Frank-Wolfe moves mass toward the arm of
largest ``||x||^2_{V^{-1}}`` with the exact line-search step ``(g/d - 1)/(g - 1)`` (Lattimore & Szepesvári,
Bandit Algorithms, Note 21.2), the rule of the E4 paper's official code (E4's Algorithm 1, steps 1 and 4).
Away steps (mass taken off the support arm of smallest norm, Todd & Yildirim 2007) make the convergence linear
instead of ``O(1/k)``.
"""

from __future__ import annotations

import numpy as np

from icml24._validation import check_finite


def _span_coordinates(arms: np.ndarray) -> np.ndarray:
    """Coordinates of the arms in an orthonormal basis of their span ``[K, r]`` (``r`` = rank)."""
    _, singular, basis = np.linalg.svd(arms, full_matrices=False)
    rank = int(np.sum(singular > singular[0] * 1e-10)) if singular.size and singular[0] > 0 else 0
    if rank == 0:
        raise ValueError("the arms are all zero; a design needs at least one non-zero arm")
    return arms @ basis[:rank].T


def d_optimal_design(arms, tol: float = 1e-4, max_iter: int = 100_000) -> tuple[np.ndarray, float]:
    """Frank-Wolfe D-optimal design.

    Args:
        arms (array ``[K, d]``): the arm set. Arms that do not span ``R^d`` are designed in their span
            (``d`` is then the rank).
        tol (float, default 1e-4): stop once ``g(pi) <= d (1 + tol)`` (the Kiefer-Wolfowitz bound).
        max_iter (int, default 100000): iteration cap.

    Returns:
        ``(pi, g)``: the design ``[K]`` (a probability vector, started uniform) and ``g(pi)``.
    """
    arms = check_finite("arms", np.asarray(arms, dtype=float))
    if arms.ndim != 2 or arms.shape[0] < 1:
        raise ValueError(f"arms must be a [num_arms, dim] array, got shape {arms.shape}")
    coords = _span_coordinates(arms)
    num_arms, rank = coords.shape
    if rank == 1:  # one direction: all mass on the longest arm
        pi = np.zeros(num_arms)
        pi[int(np.argmax(np.abs(coords[:, 0])))] = 1.0
        return pi, 1.0
    pi = np.full(num_arms, 1.0 / num_arms)
    inverse = np.linalg.inv((coords.T * pi) @ coords)
    for iteration in range(max_iter):
        norms = np.einsum("kd,de,ke->k", coords, inverse, coords)
        toward = int(np.argmax(norms))
        g = float(norms[toward])
        if g <= rank * (1 + tol):
            break
        support = np.flatnonzero(pi > 0)
        away = int(support[np.argmin(norms[support])])
        if g / rank - 1 >= 1 - norms[away] / rank:
            # Frank-Wolfe step toward the arm of largest norm, exact line search: (g/d - 1)/(g - 1)
            x, step = coords[toward], (g / rank - 1) / (g - 1)
            pi *= 1 - step
            pi[toward] += step
            inverse = inverse / (1 - step)
            u = inverse @ x
            inverse -= step * np.outer(u, u) / (1 + step * (x @ u))
        else:
            # away step (Atwood 1973; Todd & Yildirim 2007): take mass off the support arm of smallest norm
            x, omega = coords[away], float(norms[away])
            drop_all = pi[away] / (1 - pi[away])
            step = drop_all if omega <= 1 else min((rank - omega) / (rank * (omega - 1)), drop_all)
            pi *= 1 + step
            pi[away] -= step
            if step == drop_all:
                pi[away] = 0.0
            inverse = inverse / (1 + step)
            u = inverse @ x
            inverse += step * np.outer(u, u) / (1 - step * (x @ u))
        if iteration % 100 == 99:  # refresh to stop rank-one updates from drifting
            inverse = np.linalg.inv((coords.T * pi) @ coords)
    pi = pi / pi.sum()
    norms = np.einsum("kd,de,ke->k", coords, np.linalg.inv((coords.T * pi) @ coords), coords)
    return pi, float(norms.max())


def design_counts(pi: np.ndarray, budget: float) -> np.ndarray:
    """Pull counts ``ceil(2 pi(x) budget)`` of a design phase of size ``budget``.

    The official code pulls ``ceil(2 pi(x) g budget / d)`` with ``g = d (1 + tol)`` at convergence: about
    ``2 * budget`` pulls in all, enough that every arm's mean is estimated to ``sqrt(d log(1/delta) / budget)``.
    """
    return np.ceil(2.0 * np.asarray(pi) * budget).astype(np.int64)
