"""Kernels as explicit feature maps, so both estimator stages are ridge solves in feature space.

The paper's estimator is written with kernels K_W, K_X, K_Y (Sec. 4). A kernel with a finite feature map phi gives
the same estimator in primal form (push-through identity), which keeps the cost linear in the sample size:
- ``DeltaFeatures``: the delta kernel on a finite set (one-hot); it makes the estimator the tabular one.
- ``RBFFeatures``: a Gaussian kernel restricted to the span of fixed centres (Nystrom, whitened so that the
  Euclidean norm of the coefficients is the RKHS norm of the function).
- ``HistoryInstrument``: features of the stage-I conditioning variable X_t = (A_t, H_{t-1}, O_0).
"""

from __future__ import annotations

import numpy as np

from icml24._random import RandomState, check_random_state
from icml24._validation import check_finite


class DeltaFeatures:
    """phi(o) = e_o on {0, ..., n - 1}: the delta kernel k(o, o') = 1{o = o'}."""

    KIND = "component"  # icml24._contract

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n = self.dim = int(n)

    def transform(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values)
        if values.size and (values.min() < 0 or values.max() >= self.n):
            raise ValueError(f"DeltaFeatures({self.n}) got a value outside 0..{self.n - 1}")
        return np.eye(self.n)[values.astype(np.int64)]

    def mean_embedding(self, emission) -> np.ndarray:
        """E[phi(O) | s] for a ``DiscreteEmission``: its table, shape (S, n)."""
        return emission.probs


class RBFFeatures:
    """Gaussian kernel exp(-(o - o')^2 / (2 l^2)) on the span of ``centers`` (whitened Nystrom features)."""

    KIND = "component"  # icml24._contract

    def __init__(self, centers: np.ndarray, lengthscale: float, jitter: float = 1e-8):
        self.centers = np.asarray(check_finite("centers", centers), dtype=float).ravel()
        self.lengthscale = float(lengthscale)
        if self.lengthscale <= 0:
            raise ValueError(f"lengthscale must be > 0, got {lengthscale}")
        gram = self._kernel(self.centers)
        vals, vecs = np.linalg.eigh(gram + jitter * np.eye(self.centers.size))
        self.whiten_ = vecs / np.sqrt(vals)  # K_cc^{-1/2} (up to rotation): phi(o)^T phi(o') = k_c(o)^T K^{-1} k_c(o')
        self.dim = self.centers.size

    def _kernel(self, values: np.ndarray) -> np.ndarray:
        diff = np.asarray(values, dtype=float).reshape(-1, 1) - self.centers[None, :]
        return np.exp(-0.5 * (diff / self.lengthscale) ** 2)

    def transform(self, values: np.ndarray) -> np.ndarray:
        return self._kernel(check_finite("values", values)) @ self.whiten_

    def mean_embedding(self, emission) -> np.ndarray:
        """E[phi(O) | s] in closed form for a ``GaussianEmission`` (Gaussian convolution), shape (S, dim)."""
        var = self.lengthscale**2 + emission.scale**2
        diff = emission.means[:, None] - self.centers[None, :]
        smoothed = np.sqrt(self.lengthscale**2 / var) * np.exp(-0.5 * diff**2 / var)
        return smoothed @ self.whiten_


class HistoryInstrument:
    """Features of X_t = (A_t, H_{t-1}, O_0), the conditioning variable of stage I.

    Discrete data (``n_obs`` and ``n_o0`` given): the delta kernel on the whole of (a_t, h_{t-1}, o_0), i.e. one
    cell per history, exactly as in the paper's tabular case. Continuous data: the delta kernel on (a_t, a_{t-1})
    times random Fourier features of the Gaussian kernel on (o_0, o_{t-1}); conditioning on this function of X_t
    keeps every moment equation true (tower rule) and keeps the dimension fixed in t.
    """

    KIND = "component"  # icml24._contract

    def __init__(self, n_actions: int, n_obs: int | None = None, n_o0: int | None = None, n_fourier: int = 64,
                 bandwidth: float = 1.0, random_state: RandomState = None):
        self.n_actions, self.n_obs, self.n_o0 = int(n_actions), n_obs, n_o0
        self.n_fourier, self.bandwidth, self.random_state = int(n_fourier), float(bandwidth), random_state
        rng = check_random_state(random_state)  # Fourier features (continuous data only)
        self.frequencies_ = rng.standard_normal((2, self.n_fourier)) / self.bandwidth
        self.phases_ = rng.uniform(0, 2 * np.pi, self.n_fourier)

    @property
    def discrete(self) -> bool:
        return self.n_obs is not None and self.n_o0 is not None

    def dim(self, t: int) -> int:
        """Feature dimension at step t (0-based)."""
        if self.discrete:
            return self.n_actions * (self.n_obs * self.n_actions) ** t * self.n_o0
        return self.n_actions * (self.n_actions if t > 0 else 1) * self.n_fourier

    def index(self, data, t: int) -> np.ndarray:
        """Discrete data: the flat cell of X_t = (a_t, h_{t-1}, o_0) of every episode (the one-hot's position)."""
        if not self.discrete:
            raise ValueError("index() needs a discrete instrument (n_obs and n_o0 given)")
        index = np.zeros(data.n, dtype=np.int64)
        for j in range(t):  # h_{t-1} = (o_1, a_1, ..., o_{t-1}, a_{t-1}) as a flat index
            index = index * (self.n_obs * self.n_actions) + data.obs[:, j].astype(np.int64) * self.n_actions \
                + data.actions[:, j].astype(np.int64)
        a_t = data.actions[:, t].astype(np.int64)
        return (a_t * (self.n_obs * self.n_actions) ** t + index) * self.n_o0 + data.o0.astype(np.int64)

    def transform(self, data, t: int) -> np.ndarray:
        """(N, dim(t)) features of X_t for the Trajectories ``data`` at step t (0-based)."""
        a_t = data.actions[:, t]
        if self.discrete:
            return np.eye(self.dim(t))[self.index(data, t)]
        cont = np.stack([data.o0, data.obs[:, t - 1] if t > 0 else np.zeros(data.n)], axis=1)
        fourier = np.sqrt(2.0 / self.n_fourier) * np.cos(cont @ self.frequencies_ + self.phases_)
        cell = a_t * self.n_actions + data.actions[:, t - 1] if t > 0 else a_t
        n_disc = self.dim(t) // self.n_fourier
        out = np.zeros((data.n, n_disc, self.n_fourier))
        out[np.arange(data.n), cell] = fourier
        return out.reshape(data.n, -1)
