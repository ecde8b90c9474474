"""How far an estimated subspace is from the truth: the paper's error measure."""

from __future__ import annotations

import numpy as np


def projection(directions) -> np.ndarray:
    """The orthogonal projection ``B (B^T B)^{-1} B^T`` onto the column space of ``B [p, d]`` (or ``[p]``)."""
    basis = np.asarray(directions, dtype=np.float64)
    basis = basis[:, None] if basis.ndim == 1 else basis
    q, _ = np.linalg.qr(basis)
    return q @ q.T


def subspace_distance(estimate, truth) -> float:
    """Largest eigenvalue magnitude of ``P_estimate - P_truth`` (the paper's error; official ``diff_measure``).

    For two lines it is the sine of the angle between them: 0 for the same direction (either sign), 1 for
    orthogonal ones.
    """
    difference = projection(estimate) - projection(truth)
    return float(np.abs(np.linalg.eigvalsh((difference + difference.T) / 2)).max())
