"""Phase 1 of Jedra et al. (ICML 2024): the importance-weighted matrix estimate and its singular subspaces.

    M~ = (1/T) sum_t r_t e_{i_t} e_{j_t}^T / (omega_{i_t} rho(j_t | i_t))        (IPS matrix)
    M~ = [U^, U^_perp] diag(s) [V^, V^_perp]^T                                  (full SVD, top-r split)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml24._validation import check_finite


def pair_counts(contexts, arms, rewards, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Visit counts ``C [m, n]`` and reward sums ``S [m, n]`` of the pairs, by one ``bincount`` each."""
    m, n = shape
    flat = np.asarray(contexts) * n + np.asarray(arms)
    counts = np.bincount(flat, minlength=m * n).reshape(m, n).astype(float)
    sums = np.bincount(flat, weights=np.asarray(rewards, dtype=float), minlength=m * n).reshape(m, n)
    return counts, sums


def ips_matrix(contexts, arms, rewards, behaviour, context_probs=None) -> np.ndarray:
    """The importance-weighted (IPS) estimate ``M~ [m, n]`` of the reward matrix.

    Args:
        contexts, arms, rewards: ``[T]`` samples collected under the behaviour policy.
        behaviour: ``rho [m, n]``, the behaviour policy (row-stochastic, positive where sampled).
        context_probs: ``omega [m]``; uniform when omitted.
    """
    behaviour = check_finite("behaviour", np.asarray(behaviour, dtype=float))
    check_finite("rewards", rewards)
    m, n = behaviour.shape
    omega = np.full(m, 1.0 / m) if context_probs is None else np.asarray(context_probs, dtype=float)
    num_samples = len(rewards)
    if num_samples == 0:
        raise ValueError("ips_matrix needs at least one sample")
    _, sums = pair_counts(contexts, arms, rewards, (m, n))
    propensity = omega[:, None] * behaviour
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(propensity > 0, sums / (num_samples * propensity), 0.0)
    return estimate


@dataclass(frozen=True)
class SingularSubspaces:
    """Rank-``r`` singular subspaces of an ``[m, n]`` matrix and their orthogonal complements.

    Attributes:
        left ``[m, r]``, left_perp ``[m, m - r]``, right ``[n, r]``, right_perp ``[n, n - r]``:
            orthonormal bases; ``singular_values [r]`` the top-r singular values.
    """

    left: np.ndarray
    left_perp: np.ndarray
    singular_values: np.ndarray
    right: np.ndarray
    right_perp: np.ndarray

    @property
    def rank(self) -> int:
        return self.left.shape[1]

    def low_rank(self) -> np.ndarray:
        """The best rank-r approximation ``U^ diag(s) V^^T`` of the decomposed matrix."""
        return (self.left * self.singular_values) @ self.right.T


def spectral_subspaces(matrix, rank: int) -> SingularSubspaces:
    """Full SVD of ``matrix [m, n]`` split into the top-``rank`` subspaces and their complements."""
    matrix = check_finite("matrix", np.asarray(matrix, dtype=float))
    if matrix.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {matrix.shape}")
    m, n = matrix.shape
    if not 1 <= rank <= min(m, n):
        raise ValueError(f"rank must lie in [1, min(m, n)] = [1, {min(m, n)}], got {rank}")
    left_full, values, right_t_full = np.linalg.svd(matrix, full_matrices=True)
    return SingularSubspaces(
        left=left_full[:, :rank],
        left_perp=left_full[:, rank:],
        singular_values=values[:rank],
        right=right_t_full[:rank].T,
        right_perp=right_t_full[rank:].T,
    )


def two_to_infinity_distance(estimate, truth) -> float:
    """``|| U^ U^^T - U U^T ||_{2->inf}``: the largest row norm of the projector difference.

    Both arguments are orthonormal bases ``[m, r]``; the distance does not depend on the basis chosen.
    """
    estimate = np.asarray(estimate, dtype=float)
    truth = np.asarray(truth, dtype=float)
    difference = estimate @ estimate.T - truth @ truth.T
    return float(np.max(np.linalg.norm(difference, axis=1)))
