r"""Distance-covariance SDR (Sheng & Yin, 2016), as the official ``sdr_via_dcov``: maximize ``dCov(beta^T X, Y)``.

The V-statistic ``dCov^2(a, y) = (1/n^2) sum_ij A_ij B_ij`` (``A``, ``B`` the double-centred distance matrices)
simplifies for ``a = X beta``: ``B`` is double-centred, so the centring of ``A`` drops out and

.. code-block:: text

    dCov^2(X beta, y) = (1/n^2) sum_ij |(x_i - x_j)^T beta| B_ij
    gradient          = (2/n^2) sum_i r_i x_i,   r_i = sum_j sign((x_i - x_j)^T beta) B_ij

Start: the best of ``n_starts`` random unit vectors; then SLSQP (an SQP method like the official ``donlp2``)
under ``||beta|| = 1`` and ``-1 <= beta_k <= 1``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from icml24._validation import check_finite

from ._base import DirectionEstimator, check_integer


def _centred_distances(values: np.ndarray) -> np.ndarray:
    """Double-centred distance matrix of a sample ``[n]`` or ``[n, q]``."""
    values = values.reshape(values.shape[0], -1)
    dist = np.sqrt(((values[:, None, :] - values[None, :, :]) ** 2).sum(axis=2))
    return dist - dist.mean(axis=0) - dist.mean(axis=1)[:, None] + dist.mean()


def distance_covariance(x, y) -> float:
    """The V-statistic ``dCov^2_n(x, y)`` of Székely, Rizzo & Bakirov (2007); ``energy::dcov`` is its root."""
    check_finite("x", x)
    check_finite("y", y)
    a = _centred_distances(np.asarray(x, dtype=np.float64))
    b = _centred_distances(np.asarray(y, dtype=np.float64))
    if a.shape != b.shape:
        raise ValueError(f"x and y must have the same number of samples, got {a.shape[0]} and {b.shape[0]}")
    return float((a * b).mean())


class DCOVSDR(DirectionEstimator):
    """Single-index SDR by maximizing the distance covariance between ``beta^T X`` and ``y`` on the sphere.

    Args:
        n_starts (int): random unit vectors scored for the start (official: 200).
        maxiter (int): SLSQP iterations (default 200).
        random_state (int | Generator | None): seeds the random starts.

    Attributes:
        directions_ (ndarray [p, 1]); start_ (ndarray [p]): the best random start; dcov_ (float): the final
        ``dCov^2``.
    """

    def __init__(self, n_starts: int = 200, maxiter: int = 200, random_state=None):
        self.n_starts = n_starts
        self.maxiter = maxiter
        self.random_state = random_state

    def _fit_directions(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        n, p = X.shape
        check_integer("n_starts", self.n_starts, 1)
        check_integer("maxiter", self.maxiter, 1)
        rng = np.random.default_rng(self.random_state)
        b = _centred_distances(y)
        starts = rng.standard_normal((int(self.n_starts), p))
        starts /= np.linalg.norm(starts, axis=1, keepdims=True)
        scores = np.concatenate([_scores(X @ chunk.T, b) for chunk in np.array_split(starts, -(-len(starts) // 16))])
        self.start_ = starts[int(np.argmax(scores))]

        def negative(beta):
            value, grad = _value_and_gradient(X, b, beta)
            return -value, -grad

        result = minimize(negative, self.start_, jac=True, method="SLSQP", bounds=[(-1.0, 1.0)] * p,
                          constraints=[{"type": "eq", "fun": lambda beta: beta @ beta - 1.0,
                                        "jac": lambda beta: 2.0 * beta}],
                          options={"maxiter": int(self.maxiter)})
        beta = result.x if np.all(np.isfinite(result.x)) and -result.fun >= scores.max() else self.start_
        self.dcov_ = _value_and_gradient(X, b, beta / np.linalg.norm(beta))[0]
        return beta[:, None]


def _scores(projections: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``dCov^2`` of each column of ``projections [n, m]`` with the response (centred distances ``b``)."""
    gaps = np.abs(projections[:, None, :] - projections[None, :, :])  # [n, n, m]
    return np.einsum("ijm,ij->m", gaps, b) / b.shape[0] ** 2


def _value_and_gradient(X: np.ndarray, b: np.ndarray, beta: np.ndarray) -> tuple[float, np.ndarray]:
    a = X @ beta
    gaps = a[:, None] - a[None, :]
    signed = np.sign(gaps) * b
    n2 = b.shape[0] ** 2
    return float((np.abs(gaps) * b).sum() / n2), 2.0 * (signed.sum(axis=1) @ X) / n2
