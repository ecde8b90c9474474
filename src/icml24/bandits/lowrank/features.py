"""Phase 2 of Jedra et al. (ICML 2024): reduced features and the ridge fit of the misspecified linear model.

For subspaces ``(U^, U^_perp, V^, V^_perp)`` the feature of the pair ``(i, j)`` is

    phi(i, j) = [ vec(U^_i (x) V^_j) ; vec(U^_i (x) V^_perp_j) ; vec(U^_perp_i (x) V^_j) ],

of dimension ``d = r^2 + r(n - r) + (m - r) r = r(m + n) - r^2`` (the perp-perp block is dropped: that is
the misspecification). Each block is an outer product ``L[i] (x) R[j]``, so with ``Theta_k`` the block of
``theta`` reshaped to ``[dim L_k, dim R_k]``:

    phi(i, j)^T theta = sum_k (L_k Theta_k R_k^T)[i, j],         Phi^T vec(Y) = [vec(L_k^T Y R_k)]_k,
    Phi^T diag(w) Phi  = blocks  (P_kl^T W Q_kl)  with  P_kl = L_k (x)_row L_l,  Q_kl = R_k (x)_row R_l.

None of these materializes the ``[m n, d]`` design matrix.
"""

from __future__ import annotations

import numpy as np

from icml24._validation import check_positive

from .subspace import SingularSubspaces


def _row_kron(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Row-wise Kronecker product: ``[k, a], [k, b] -> [k, a * b]``."""
    return (first[:, :, None] * second[:, None, :]).reshape(first.shape[0], -1)


class ReducedFeatures:
    """The feature map ``phi`` of dimension ``r(m + n) - r^2`` built from estimated singular subspaces.

    Args:
        subspaces (SingularSubspaces): the phase-1 output ``(U^, U^_perp, V^, V^_perp)``.

    Attributes:
        blocks: list of ``(L, R)`` factor pairs; ``dim``: the feature dimension ``d``.
    """

    def __init__(self, subspaces: SingularSubspaces):
        self.subspaces = subspaces
        s = subspaces
        self.blocks = [(s.left, s.right), (s.left, s.right_perp), (s.left_perp, s.right)]
        self.block_sizes = [left.shape[1] * right.shape[1] for left, right in self.blocks]
        self.offsets = np.concatenate([[0], np.cumsum(self.block_sizes)])
        self.dim = int(self.offsets[-1])
        self.shape = (s.left.shape[0], s.right.shape[0])

    def __call__(self, contexts, arms) -> np.ndarray:
        """Features ``[k, d]`` of the pairs ``(contexts[t], arms[t])`` (only those rows are built)."""
        contexts = np.asarray(contexts)
        arms = np.asarray(arms)
        return np.concatenate([_row_kron(left[contexts], right[arms]) for left, right in self.blocks], axis=1)

    def context_features(self, context: int) -> np.ndarray:
        """Features ``[n, d]`` of every arm in one context."""
        n = self.shape[1]
        return self(np.full(n, context), np.arange(n))

    def _split(self, theta: np.ndarray) -> list[np.ndarray]:
        return [
            theta[start:stop].reshape(left.shape[1], right.shape[1])
            for (left, right), start, stop in zip(self.blocks, self.offsets[:-1], self.offsets[1:], strict=True)
        ]

    def to_matrix(self, theta) -> np.ndarray:
        """``[m, n]`` matrix of ``phi(i, j)^T theta`` for all pairs."""
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.dim,):
            raise ValueError(f"theta must have shape ({self.dim},), got {theta.shape}")
        return sum(left @ block @ right.T for (left, right), block in zip(self.blocks, self._split(theta), strict=True))

    def adjoint(self, matrix) -> np.ndarray:
        """``Phi^T vec(Y) = sum_{i,j} Y[i, j] phi(i, j)`` for ``Y [m, n]``: ``[d]``."""
        matrix = np.asarray(matrix, dtype=float)
        return np.concatenate([(left.T @ matrix @ right).ravel() for left, right in self.blocks])

    def project(self, matrix) -> np.ndarray:
        """Coefficients ``theta`` of the orthogonal projection of ``Y`` on the span (the columns of Phi are
        orthonormal in R^{mn}, so this is ``Phi^T vec(Y)``)."""
        return self.adjoint(matrix)

    def gram(self, weights) -> np.ndarray:
        """``sum_{i,j} W[i, j] phi(i, j) phi(i, j)^T`` for pair weights ``W [m, n]`` (e.g. visit counts): ``[d, d]``."""
        weights = np.asarray(weights, dtype=float)
        gram = np.empty((self.dim, self.dim))
        for k, (left_k, right_k) in enumerate(self.blocks):
            for l_idx in range(k, len(self.blocks)):
                left_l, right_l = self.blocks[l_idx]
                a, c = left_k.shape[1], left_l.shape[1]
                b, d = right_k.shape[1], right_l.shape[1]
                product = np.linalg.multi_dot([_row_kron(left_k, left_l).T, weights, _row_kron(right_k, right_l)])
                block = product.reshape(a, c, b, d).transpose(0, 2, 1, 3).reshape(a * b, c * d)
                rows = slice(self.offsets[k], self.offsets[k + 1])
                cols = slice(self.offsets[l_idx], self.offsets[l_idx + 1])
                gram[rows, cols] = block
                gram[cols, rows] = block.T
        return gram

    def ridge(self, counts, reward_sums, tau: float) -> np.ndarray:
        """``theta^ = (tau I + sum_t phi_t phi_t^T)^{-1} sum_t r_t phi_t`` from pair counts and reward sums."""
        check_positive("tau", tau, allow_zero=True)
        system = self.gram(counts)
        system[np.diag_indices_from(system)] += tau
        return np.linalg.solve(system, self.adjoint(reward_sums))

    def __repr__(self) -> str:
        m, n = self.shape
        return f"ReducedFeatures(m={m}, n={n}, rank={self.subspaces.rank}, dim={self.dim})"
