"""Inverse-regression SDR: SIR, SAVE and directional regression, the classic initializers of the paper.

Each standardizes ``Z = (X - mean) Sigma^{-1/2}``, slices the response, builds a kernel matrix ``M`` from the
slice moments of ``Z``, and returns ``Sigma^{-1/2}`` times the leading eigenvectors of ``M``; the moments of all
slices come from one sort of the rows (``slice_moments``).
"""

from __future__ import annotations

import math

import numpy as np

from ._base import DirectionEstimator, check_integer, slice_labels, slice_moments, top_eigenvectors, whiten


class _SlicedEstimator(DirectionEstimator):
    _sizes = "balanced"

    def __init__(self, n_directions: int = 1, n_slices: int | None = None):
        self.n_directions = n_directions
        self.n_slices = n_slices

    def _default_slices(self, n: int, p: int) -> int:
        return max(8, p + 3)  # the dr package's default number (its sizes differ: _base.slice_labels)

    def _fit_directions(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        n, p = X.shape
        if not 1 <= check_integer("n_directions", self.n_directions, 1) <= p:
            raise ValueError(f"n_directions must be between 1 and p = {p}, got {self.n_directions}")
        h = self.n_slices if self.n_slices is not None else self._default_slices(n, p)
        if int(h) < 2:
            raise ValueError(f"n_slices must be at least 2, got {h}")
        Z, root = whiten(X)
        weights, means, covs = slice_moments(Z, slice_labels(y, min(int(h), n), sizes=self._sizes))
        self.n_slices_ = int(weights.shape[0])
        self.kernel_matrix_ = self._kernel(weights, means, covs, p)
        return root @ top_eigenvectors(self.kernel_matrix_, int(self.n_directions))

    def _kernel(self, weights, means, covs, p) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class SIR(_SlicedEstimator):
    """Sliced inverse regression (Li, 1991): ``M = sum_h p_h m_h m_h^T``, the covariance of the slice means.

    Blind to links symmetric about the centre of ``beta^T X`` (``E[Z | y]`` is then 0): the paper's
    quadratic model is its failure case.

    Args:
        n_directions (int): ``d``, how many directions (default 1).
        n_slices (int | None): ``h``; ``None`` takes the ``dr`` package's ``max(8, p + 3)``.

    Attributes:
        directions_ (ndarray [p, d]): unit directions on the scale of ``X``.
        kernel_matrix_ (ndarray [p, p]): ``M`` on the standardized scale; ``n_slices_`` (int): slices used.
    """

    def _kernel(self, weights, means, covs, p):
        return np.einsum("h,hj,hk->jk", weights, means, means)


class SAVE(_SlicedEstimator):
    """Sliced average variance estimation (Cook & Weisberg, 1991): ``M = sum_h p_h (I - V_h)^2``.

    Uses second slice moments, so it sees symmetric links that SIR misses.

    Args and attributes as ``SIR``.
    """

    def _kernel(self, weights, means, covs, p):
        gap = np.eye(p)[None] - covs
        return np.einsum("h,hjk,hkl->jl", weights, gap, gap)


class DirectionalRegression(_SlicedEstimator):
    r"""Directional regression (Li & Wang, 2007), as the official ``drr``: ``h = ceil(log n)`` slices by default,
    ``h - 1`` of ``floor(n / h)`` responses and the rest in the last, and

    .. code-block:: text

        A = sum_h p_h (V_h + m_h m_h^T)^2          # V_h: slice covariance, m_h: slice mean of Z
        C = sum_h p_h m_h m_h^T
        M = 2 A + 2 C^2 + 2 tr(C) C - 2 I          # E[(2I - E[(Z - Z')(Z - Z')^T | y, y'])^2]

    Args and attributes as ``SIR``; ``n_slices=None`` takes ``ceil(log n)`` (the paper's ``h``).
    """

    _sizes = "floor"

    def _default_slices(self, n: int, p: int) -> int:
        return max(2, math.ceil(math.log(n)))

    def _kernel(self, weights, means, covs, p):
        second = covs + np.einsum("hj,hk->hjk", means, means)
        a = np.einsum("h,hjk,hkl->jl", weights, second, second)
        c = np.einsum("h,hj,hk->jk", weights, means, means)
        return 2 * a + 2 * c @ c + 2 * np.trace(c) * c - 2 * np.eye(p)
