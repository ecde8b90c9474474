"""Input designs on the unit cube for condition-number experiments: i.i.d. random points or a quasi-uniform grid.

For a Matern kernel the smallest eigenvalue of K is set by the separation q (the closest pair's distance), not by
the integral operator's n-th eigenvalue: n i.i.d. points with a density in d dimensions have q ~ n^(-2/d) (about
n^2 / 2 pairs compete for the smallest distance), a quasi-uniform design keeps q ~ n^(-1/d). These two designs put
the difference in one slot (see ``icml24.papers.ridgeless.laplace_condition``).
"""

from __future__ import annotations

import numpy as np

from icml24._random import RandomState, check_random_state
from icml24._validation import check_positive_int

DESIGNS = ("random", "grid")


def design_size(n: int, d: int) -> int:
    """The number of points of a design of nominal size ``n`` in ``d`` dimensions: m^d with m = round(n^(1/d)),
    so that a grid and a random design of the same nominal size have the same number of points."""
    check_positive_int("n", n)
    check_positive_int("d", d)
    return max(1, round(n ** (1.0 / d))) ** d


def design_points(n: int, d: int, design: str, random_state: RandomState = None) -> np.ndarray:
    """``design_size(n, d)`` points in [0, 1]^d, drawn from ``random_state`` (None, an int or a numpy Generator).

    ``"random"``: i.i.d. uniform. ``"grid"``: the m^d cell centres of a regular grid of spacing h = 1/m, each moved
    uniformly by at most h/4 per coordinate (random, yet quasi-uniform: every pair stays at least h/2 apart).
    """
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {', '.join(DESIGNS)}, got {design!r}")
    size = design_size(n, d)
    rng = check_random_state(random_state)
    if design == "random":
        return rng.uniform(size=(size, d))
    m = round(size ** (1.0 / d))
    axes = np.meshgrid(*[(np.arange(m) + 0.5) / m] * d, indexing="ij")
    centres = np.stack([a.ravel() for a in axes], axis=1)
    return centres + rng.uniform(-0.25 / m, 0.25 / m, size=centres.shape)


def separation(X: np.ndarray) -> float:
    """The smallest distance between two distinct rows of ``X`` (the closest pair), by a k-d tree."""
    from scipy.spatial import cKDTree

    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"X must be an (n, d) array with n >= 2, got shape {X.shape}")
    distances, _ = cKDTree(X).query(X, k=2)
    return float(distances[:, 1].min())
