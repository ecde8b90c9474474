"""The three GDEM losses (Liu, Bo & Shi, ICML 2024, Sec. 4): eigenbasis matching, discrimination, orthogonality.

Notation: ``U [n, K]`` eigenvectors, ``lambda [K]`` their eigenvalues, ``X [n, d]`` node features.

* Eigenbasis matching (Eq. 7): with ``a_k = normalize(u_k^T X)`` (real) and ``b_k = normalize(u'_k^T X')``
  (synthetic), ``L_e = 1/(K d^2) sum_k ||a_k a_k^T - b_k b_k^T||_F^2``, the mean squared error between the
  stacks of ``K`` rank-one ``d x d`` subspace covariances. It is computed with the exact identity
  ``||a a^T - b b^T||_F^2 = ||a||^4 + ||b||^4 - 2 (a . b)^2`` in ``O(K d)`` memory, never the ``K x d x d`` tensor.
* Discrimination (Eq. 9): ``H = rownorm(class_mean(U diag(1 - lambda) U^T X))`` and
  ``L_d = MSE(H_real H_syn^T, I_C)``.
* Orthogonality (Eq. 10): ``L_o = MSE(U'^T U', I_K)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def subspace_directions(eigenvectors: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
    """``normalize(U^T X)`` row-wise: ``[K, d]``, row ``k`` spans the ``k``-th rank-one subspace covariance."""
    return F.normalize(eigenvectors.T @ features, p=2, dim=1)


def eigenbasis_matching_loss(real_directions: torch.Tensor, synthetic_directions: torch.Tensor) -> torch.Tensor:
    """``L_e``: mean over ``K x d x d`` of ``(a_k a_k^T - b_k b_k^T)^2`` via the rank-one identity.

    Args:
        real_directions: ``[K, d]`` rows ``a_k`` (from ``subspace_directions`` on the real graph).
        synthetic_directions: ``[K, d]`` rows ``b_k``.
    """
    if real_directions.shape != synthetic_directions.shape:
        raise ValueError(f"direction stacks differ in shape: {tuple(real_directions.shape)} "
                         f"vs {tuple(synthetic_directions.shape)}")
    num_k, dim = real_directions.shape
    a, b = real_directions, synthetic_directions
    # Each term is O(1) per subspace (unit rows), so float32 cancellation error (~1e-7) stays far below it;
    # the gradient -4 (a.b) a + 4 ||b||^2 b has no cancellation at all.
    sq_a, sq_b, dot = (a * a).sum(1), (b * b).sum(1), (a * b).sum(1)
    per_subspace = sq_a**2 + sq_b**2 - 2.0 * dot**2
    return per_subspace.sum() / (num_k * dim * dim)


def eigenbasis_matching_loss_naive(real_directions: torch.Tensor, synthetic_directions: torch.Tensor) -> torch.Tensor:
    """Reference form of ``eigenbasis_matching_loss`` that materializes the ``K x d x d`` tensors (tests only)."""
    real = real_directions.unsqueeze(2) * real_directions.unsqueeze(1)
    synthetic = synthetic_directions.unsqueeze(2) * synthetic_directions.unsqueeze(1)
    return F.mse_loss(synthetic, real)


def class_embedding_means(eigenvalues: torch.Tensor, eigenvectors: torch.Tensor, features: torch.Tensor,
                          labels: torch.Tensor, num_classes: int, rows: torch.Tensor | None = None,
                          projection: torch.Tensor | None = None) -> torch.Tensor:
    """``H [C, d]``: row-normalized class means of ``U diag(1 - lambda) U^T X`` over the labelled rows.

    ``rows`` (optional) selects the labelled rows of the ``[n, d]`` embedding; ``labels`` gives their classes.
    ``projection`` may pass a precomputed ``U^T X [K, d]``.
    """
    projection = eigenvectors.T @ features if projection is None else projection
    spectral = (1.0 - eigenvalues).unsqueeze(1) * projection  # [K, d]
    source = eigenvectors if rows is None else eigenvectors[rows]
    embedding = source @ spectral  # [n_labelled, d]
    one_hot = F.one_hot(labels, num_classes).to(embedding.dtype)  # [n, C]
    counts = one_hot.sum(0).clamp_min(1.0).unsqueeze(1)
    return F.normalize(one_hot.T @ embedding / counts, p=2, dim=1)


def discrimination_loss(real_class_means: torch.Tensor, synthetic_class_means: torch.Tensor) -> torch.Tensor:
    """``L_d = MSE(H_real H_syn^T, I_C)``."""
    similarity = real_class_means @ synthetic_class_means.T
    return F.mse_loss(similarity, torch.eye(similarity.shape[0], dtype=similarity.dtype, device=similarity.device))


def orthogonality_loss(eigenvectors: torch.Tensor) -> torch.Tensor:
    """``L_o = MSE(U'^T U', I_K)``."""
    gram = eigenvectors.T @ eigenvectors
    return F.mse_loss(gram, torch.eye(gram.shape[0], dtype=gram.dtype, device=gram.device))
