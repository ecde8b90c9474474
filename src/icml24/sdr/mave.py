r"""Outer product of gradients (OPG) and minimum average variance estimation (MAVE), Xia, Tong, Li & Zhu (2002).

Both work on standardized predictors ``Z`` with Gaussian kernel weights, all ``n`` local fits solved at once:

.. code-block:: text

    OPG:   for every j: (a_j, b_j) = argmin sum_i w_ij (y_i - a - b^T (z_i - z_j))^2,  w_ij = K_h(z_i - z_j)
           B <- top-d eigenvectors of (1/n) sum_j b_j b_j^T
    MAVE:  repeat (from the OPG B):
             (a_j, c_j) = argmin sum_i w_ij (y_i - a - c^T B^T (z_i - z_j))^2,  w_ij = K_h(B^T (z_i - z_j))
             B <- argmin_B sum_j sum_i w_ij (y_i - a_j - c_j^T B^T (z_i - z_j))^2      # one linear solve
             B <- orthonormalize(B)
           until the subspace moves less than tol

Bandwidths: ``h = c n^{-1/(k+4)}`` for a kernel on ``k`` coordinates (``k = p`` for OPG, ``d`` for MAVE), with
``c = 2.34`` (the rule-of-thumb constant of Xia's own programs); ``bandwidth`` overrides both.
"""

from __future__ import annotations

import numpy as np

from ._base import DirectionEstimator, check_integer, check_number, top_eigenvectors, whiten

_C = 2.34


def _weights(diff: np.ndarray, bandwidth: float) -> np.ndarray:
    """Gaussian kernel weights ``w[j, i]`` of the differences ``diff[j, i, :]``, normalized over ``i``."""
    logits = -0.5 * (diff * diff).sum(axis=2) / bandwidth ** 2
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


def _local_linear(w: np.ndarray, regressors: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted local linear fits at every ``j``: intercepts ``a [n]`` and slopes ``b [n, k]``."""
    n = w.shape[0]
    design = np.concatenate([np.ones(regressors.shape[:2] + (1,)), regressors], axis=2)  # [j, i, k + 1]
    weighted = (design * w[..., None]).transpose(0, 2, 1)  # [j, k + 1, i]
    gram = weighted @ design
    target = weighted @ y
    ridge = 1e-8 * np.trace(gram, axis1=1, axis2=2)[:, None, None] * np.eye(gram.shape[1])
    coef = np.linalg.solve(gram + ridge, target[..., None])[..., 0]
    return coef[:, 0], coef[:, 1:].reshape(n, -1)


def _opg_directions(Z: np.ndarray, y: np.ndarray, d: int, bandwidth: float | None) -> np.ndarray:
    n, p = Z.shape
    diff = Z[None, :, :] - Z[:, None, :]  # diff[j, i] = z_i - z_j
    h = bandwidth if bandwidth is not None else _C * n ** (-1.0 / (p + 4))
    _, slopes = _local_linear(_weights(diff, h), diff, y)
    return top_eigenvectors(slopes.T @ slopes / n, d)


class OPG(DirectionEstimator):
    """Outer product of gradients (Xia et al., 2002): average outer product of local-linear gradients.

    Args:
        n_directions (int): ``d`` (default 1).
        bandwidth (float | None): kernel bandwidth on standardized ``Z``; ``None``: ``2.34 n^{-1/(p+4)}``.

    Attributes:
        directions_ (ndarray [p, d]).
    """

    def __init__(self, n_directions: int = 1, bandwidth: float | None = None):
        self.n_directions = n_directions
        self.bandwidth = bandwidth

    def _fit_directions(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        d = _check_dimension(self.n_directions, X.shape[1])
        if self.bandwidth is not None:
            check_number("bandwidth", self.bandwidth)
        Z, root = whiten(X)
        return root @ _opg_directions(Z, y, d, self.bandwidth)


class MAVE(DirectionEstimator):
    """Minimum average variance estimation (Xia et al., 2002) of the central mean subspace, from OPG.

    Args:
        n_directions (int): ``d`` (default 1).
        bandwidth (float | None): kernel bandwidth of the MAVE steps (on ``B^T Z``); ``None``:
            ``2.34 n^{-1/(d+4)}``. The OPG start uses its own default.
        max_iter (int): MAVE iterations (default 30); tol (float): stop when ``||P_new - P_old||_2 < tol``.

    Attributes:
        directions_ (ndarray [p, d]); n_iter_ (int): MAVE iterations run; opg_directions_ (ndarray [p, d]).
    """

    def __init__(self, n_directions: int = 1, bandwidth: float | None = None, max_iter: int = 30,
                 tol: float = 1e-6):
        self.n_directions = n_directions
        self.bandwidth = bandwidth
        self.max_iter = max_iter
        self.tol = tol

    def _fit_directions(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        n, p = X.shape
        d = _check_dimension(self.n_directions, p)
        if self.bandwidth is not None:
            check_number("bandwidth", self.bandwidth)
        check_integer("max_iter", self.max_iter, 1)
        check_number("tol", self.tol)
        Z, root = whiten(X)
        B = _opg_directions(Z, y, d, None)
        self.opg_directions_ = root @ B
        h = self.bandwidth if self.bandwidth is not None else _C * n ** (-1.0 / (d + 4))
        diff = Z[None, :, :] - Z[:, None, :]
        self.n_iter_ = 0
        for _ in range(int(self.max_iter)):
            reduced = diff @ B  # [j, i, d]
            w = _weights(reduced, h)
            intercepts, slopes = _local_linear(w, reduced, y)
            # sum_j sum_i w_ij (y_i - a_j - vec(B)^T (c_j kron diff_ji))^2: normal equations in vec(B) (columns)
            scatter = (diff * w[..., None]).transpose(0, 2, 1) @ diff  # [j, p, p]
            lhs = np.einsum("ja,jb,jkl->akbl", slopes, slopes, scatter).reshape(d * p, d * p)
            moment = np.einsum("ji,jik->jk", w * (y[None, :] - intercepts[:, None]), diff)  # [j, p]
            rhs = np.einsum("ja,jk->ak", slopes, moment).reshape(d * p)
            ridge = 1e-10 * np.trace(lhs) / (d * p) * np.eye(d * p)
            new = np.linalg.solve(lhs + ridge, rhs).reshape(d, p).T
            new, _ = np.linalg.qr(new)
            self.n_iter_ += 1
            moved = np.linalg.norm(new @ new.T - B @ B.T, 2)
            B = new
            if moved < self.tol:
                break
        return root @ B


def _check_dimension(d, p: int) -> int:
    d = check_integer("n_directions", d, 1)
    if not 1 <= d <= p:
        raise ValueError(f"n_directions must be between 1 and p = {p}, got {d}")
    return d
