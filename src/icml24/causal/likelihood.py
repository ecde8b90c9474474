"""The conditional marginal likelihood of a child's kernel features given its parents (Wang et al., ICML 2024).

The paper's equation numbers could not be checked offline; comments name the quantity instead ("paper: ...").

For a node X with parent set PA the feature map of X is treated as GP outputs, phi(X) = f(PA) + eps with
f ~ GP(0, K_PA) and eps ~ N(0, sigma^2 I). The score of the learned-kernel method adds the Jacobian term of the
change of variables from x to phi(x), which is what makes the child's own kernel width learnable .
The outputs are the empirical kernel map, Phi = K_X (n feature dimensions), so the data-fit term is
-1/2 tr(K_X A^-1 K_X) with A = K_PA + s^2 I (official ``MIModel.ConditionalLikelihood`` and ``MargModel.fit``).
Everything here is a pure torch function of the widths and the noise, so that autograd gives exact gradients.
"""

from __future__ import annotations

import math

import numpy as np
import torch

# Official bounds (official Model/MIModel.py): widths in [0.2, 5], noise variance in [1e-2, 10]
WIDTH_BOUNDS = (0.2, 5.0)
NOISE_BOUNDS = (1e-2, 10.0)
# The "Marg" ablation's own clamps (official Model/MargModel.py): widths in [0.1, 10], noise in [1e-3, 1]
MARG_WIDTH_BOUNDS = (0.1, 10.0)
MARG_NOISE_BOUNDS = (1e-3, 1.0)
NOISE_INIT = math.sqrt(0.1)
WIDTH_FACTOR = 2.5  # widths start at 2.5 x the median heuristic
NO_PARENT_WIDTH = 10.0  # an empty parent set is the constant PA = 0 with this width
DISCRETE_CHILD_WIDTH = 0.01  # official: on discrete or mixed data the child width starts here (then clamped)


def median_width(z: np.ndarray, factor: float = WIDTH_FACTOR) -> float:
    """The median heuristic: ``factor * sqrt(0.5 * median of the positive pairwise squared distances)``.

    ``z``: one or more finite rows (samples); ``factor``: a finite number > 0."""
    z = np.asarray(z, dtype=float)
    if z.ndim == 0 or len(z) == 0:
        raise ValueError(f"z must hold at least one sample (row), got shape {z.shape}")
    if not np.isfinite(z).all():
        raise ValueError("z contains NaN or infinite values; the median heuristic needs finite samples")
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be a finite number > 0, got {factor}")
    z = z.reshape(len(z), -1)
    sq = np.sum(z**2, axis=1)
    dists = sq[:, None] + sq[None, :] - 2.0 * z @ z.T
    upper = dists[np.triu_indices(len(z), k=1)]
    positive = upper[upper > 1e-12]
    if positive.size == 0:  # a constant column: any width gives the same kernel
        return float(factor)
    return float(factor * np.sqrt(0.5 * np.median(positive)))


def squared_distances(z: torch.Tensor) -> torch.Tensor:
    """Pairwise squared Euclidean distances of the rows of ``z`` (n x d), clamped at 0."""
    sq = (z**2).sum(dim=1, keepdim=True)
    return (sq + sq.T - 2.0 * z @ z.T).clamp_min(0.0)


def parent_kernel(parent_distances: list[torch.Tensor], widths: torch.Tensor) -> torch.Tensor:
    """Product RBF kernel over the parents, one width per parent variable: K_PA = prod_m exp(-d_m^2 / 2 l_m^2)."""
    total = sum(d / widths[m] ** 2 for m, d in enumerate(parent_distances))  # paper: product RBF kernel on the parents
    return torch.exp(-0.5 * total)


def log_marginal_likelihood(child_kernel: torch.Tensor, parent_gram: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """log p(Phi | PA) = -1/2 tr(K_X A^-1 K_X) - n sum log diag chol(A) - n^2/2 log 2 pi, A = K_PA + s^2 I: the n
    columns of Phi = K_X are independent GP outputs with covariance A."""
    n = child_kernel.shape[0]
    gram = parent_gram + noise * torch.eye(n, dtype=parent_gram.dtype)
    chol = torch.linalg.cholesky(gram)
    solved = torch.cholesky_solve(child_kernel, chol)  # A^-1 K_X
    return (-0.5 * (child_kernel * solved).sum()  # paper: data-fit term, tr(K_X A^-1 K_X) (K_X symmetric)
            - n * torch.log(torch.diagonal(chol)).sum()  # paper: marginal likelihood, log-det (n feature dims)
            - 0.5 * n * n * math.log(2.0 * math.pi))


def jacobian_term(x_distances: torch.Tensor, child_kernel: torch.Tensor, child_width: torch.Tensor,
                  threshold: float = 1e-3) -> torch.Tensor:
    """J = sum_{i,j} log ||d k(x_i, x_j) / d x_i||, entries whose squared norm is <= ``threshold`` dropped and the
    sum reweighted by n^2 / #kept (the official code's guard on the log).

    For the RBF kernel d k / d x_i = -(x_i - x_j) k_ij / l^2, so ||.||^2 = k_ij^2 ||x_i - x_j||^2 / l^4 and
    log ||.|| = -||x_i - x_j||^2 / (2 l^2) + log ||x_i - x_j|| - 2 log l: no n x n x d tensor is needed.
    """
    n = x_distances.shape[0]
    sqnorm = child_kernel**2 * x_distances / child_width**4  # paper: Jacobian of x -> phi(x), squared norm
    kept = sqnorm.detach() > threshold
    count = int(kept.sum())
    if count == 0:
        return torch.zeros((), dtype=x_distances.dtype)
    d = x_distances[kept]
    log_norm = -0.5 * d / child_width**2 + 0.5 * torch.log(d) - 2.0 * torch.log(child_width)
    return log_norm.sum() * (n * n / count)


def negative_score(x_distances: torch.Tensor, parent_distances: list[torch.Tensor], parent_widths: torch.Tensor,
                   child_width: torch.Tensor, noise: torch.Tensor, jacobian: bool = True,
                   threshold: float = 1e-3) -> torch.Tensor:
    """The local score to minimise, -(log p + J) / n^2 (the official code divides each term by n twice), from the
    child's pairwise squared distances and each parent's (precomputed once per pair)."""
    n = x_distances.shape[0]
    child_kernel = torch.exp(-0.5 * x_distances / child_width**2)
    value = log_marginal_likelihood(child_kernel, parent_kernel(parent_distances, parent_widths), noise)
    if jacobian:  # paper: the learned-kernel score is log p + J
        value = value + jacobian_term(x_distances, child_kernel, child_width, threshold)
    return -value / (n * n)


def negative_score_and_gradient(x_distances: torch.Tensor, parent_distances: list[torch.Tensor],
                                parent_widths: torch.Tensor, child_width: torch.Tensor, noise: torch.Tensor,
                                jacobian: bool = True, threshold: float = 1e-3,
                                log_x_distances: torch.Tensor | None = None):
    """``negative_score`` and its exact gradient in closed form, without autograd (the same objective, faster).

    With A = K_PA + s^2 I, C = A^-1 K_X and G = d log p / d A = 1/2 (C C^T - n A^-1):
    d/ds^2 = tr G; d/dl_m = sum(G o K_PA o D_m) / l_m^3; the data-fit term gives d/dl_X = -sum(C o K_X o D_X)
    / l_X^3 and the Jacobian term (its kept set held fixed, as under autograd) (n^2 / #kept) sum_kept(D / l^3 - 2 / l).
    Returns (value, d/d parent widths (tensor), d/d child width, d/d noise), all float64 and negated / n^2 like the
    value. ``log_x_distances`` (log D_X, precomputed per pair) saves one log per evaluation.
    """
    n = x_distances.shape[0]
    child_kernel = torch.exp(-0.5 * x_distances / child_width**2)
    parent_gram = parent_kernel(parent_distances, parent_widths)
    gram = parent_gram + noise * torch.eye(n, dtype=parent_gram.dtype)
    chol = torch.linalg.cholesky(gram)
    inverse = torch.cholesky_inverse(chol)
    solved = inverse @ child_kernel  # C = A^-1 K_X
    log_p = (-0.5 * (child_kernel * solved).sum()  # paper: data-fit term, tr(K_X A^-1 K_X)
             - n * torch.log(torch.diagonal(chol)).sum()  # paper: marginal likelihood, log-det (n feature dims)
             - 0.5 * n * n * math.log(2.0 * math.pi))
    g = 0.5 * (solved @ solved.T) - 0.5 * n * inverse  # d log p / d A = 1/2 (A^-1 K_X K_X A^-1 - n A^-1)
    g_noise = torch.diagonal(g).sum()
    gk = g * parent_gram
    g_parents = torch.stack([(gk * d).sum() for d in parent_distances]) / parent_widths**3
    kx_d = child_kernel * x_distances
    g_child = -(solved * kx_d).sum() / child_width**3
    if jacobian:  # paper: the learned-kernel score is log p + J
        kept = child_kernel * kx_d / child_width**4 > threshold  # squared norm of the Jacobian entries
        count = int(kept.sum())
        if count:
            d = x_distances[kept]
            log_d = torch.log(d) if log_x_distances is None else log_x_distances[kept]
            scale = n * n / count
            log_p = log_p + scale * (-0.5 * d.sum() / child_width**2 + 0.5 * log_d.sum()
                                     - 2.0 * count * torch.log(child_width))
            g_child = g_child + scale * (d.sum() / child_width**3 - 2.0 * count / child_width)
    s = -1.0 / (n * n)
    return float(s * log_p), s * g_parents, float(s * g_child), float(s * g_noise)
