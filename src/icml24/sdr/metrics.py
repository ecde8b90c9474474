"""How far an estimated subspace is from the truth: the paper's error measure."""

from __future__ import annotations

import numpy as np


def projection(directions) -> np.ndarray:
    """The orthogonal projection ``B (B^T B)^{-1} B^T`` onto the column space of ``B [p, d]`` (or ``[p]``)."""
    basis = np.asarray(directions, dtype=np.float64)
    basis = basis[:, None] if basis.ndim == 1 else basis
    if basis.ndim != 2 or not np.all(np.isfinite(basis)):
        raise ValueError(f"directions must be a finite [p] or [p, d] array, got shape {basis.shape}")
    if np.linalg.matrix_rank(basis) < basis.shape[1]:
        raise ValueError("directions must be linearly independent and nonzero (a zero vector spans no subspace)")
    q, _ = np.linalg.qr(basis)
    return q @ q.T


def subspace_distance(estimate, truth) -> float:
    """Largest eigenvalue magnitude of ``P_estimate - P_truth`` (the paper's error; official ``diff_measure``).

    For two lines it is the sine of the angle between them: 0 for the same direction (either sign), 1 for
    orthogonal ones.
    """
    p_estimate, p_truth = projection(estimate), projection(truth)
    if p_estimate.shape != p_truth.shape:
        raise ValueError(f"estimate and truth live in different spaces: p = {p_estimate.shape[0]} and "
                         f"{p_truth.shape[0]}")
    difference = p_estimate - p_truth
    return float(np.abs(np.linalg.eigvalsh((difference + difference.T) / 2)).max())
