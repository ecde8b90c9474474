"""Regularised least squares on a fixed arm set, kept as per-arm sufficient statistics."""

from __future__ import annotations

import numpy as np


class ArmLeastSquares:
    """Ridge estimate ``theta = V^{-1} b`` with ``V = reg I + sum_t x_t x_t^T`` and ``b = sum_t r_t x_t``.

    With a fixed arm set ``X [K, d]`` the data enter only through the pull counts ``N [K]`` and the reward
    sums ``S [K]``: ``V = reg I + X^T diag(N) X`` and ``b = X^T S``. ``add`` takes a whole batch of pulls at once.

    Args:
        arms (array ``[K, d]``): the arm set.
        reg (float, default 1.0): ridge ``reg`` (the official code's ``reg = 1``).
    """

    def __init__(self, arms: np.ndarray, reg: float = 1.0):
        self.arms = np.asarray(arms, dtype=float)
        self.reg = float(reg)
        num_arms, dim = self.arms.shape
        self.counts = np.zeros(num_arms, dtype=np.int64)
        self.reward_sums = np.zeros(num_arms)
        self.gram = self.reg * np.eye(dim)
        self.target = np.zeros(dim)
        self._inverse: np.ndarray | None = None

    @property
    def num_pulls(self) -> int:
        return int(self.counts.sum())

    def add(self, arm_sequence: np.ndarray, rewards: np.ndarray) -> None:
        """Add the pulls ``arm_sequence [n]`` with their ``rewards [n]``."""
        num_arms = self.arms.shape[0]
        if arm_sequence.shape[0] == 1:  # one pull: Sherman-Morrison keeps sequential policies O(d^2)
            arm, reward = int(arm_sequence[0]), float(rewards[0])
            x = self.arms[arm]
            self.counts[arm] += 1
            self.reward_sums[arm] += reward
            self.gram += np.outer(x, x)
            self.target += reward * x
            if self._inverse is not None:
                u = self._inverse @ x
                self._inverse -= np.outer(u, u) / (1.0 + x @ u)
            return
        batch_counts = np.bincount(arm_sequence, minlength=num_arms)
        batch_sums = np.bincount(arm_sequence, weights=rewards, minlength=num_arms)
        self.counts += batch_counts
        self.reward_sums += batch_sums
        self.gram += (self.arms.T * batch_counts) @ self.arms
        self.target += self.arms.T @ batch_sums
        self._inverse = None

    @property
    def gram_inverse(self) -> np.ndarray:
        """``V^{-1}`` ``[d, d]``."""
        if self._inverse is None:
            self._inverse = np.linalg.inv(self.gram)
        return self._inverse

    @property
    def theta(self) -> np.ndarray:
        """The ridge estimate ``V^{-1} b`` ``[d]``."""
        return np.linalg.solve(self.gram, self.target)

    def arm_norms(self) -> np.ndarray:
        """``||x_a||^2_{V^{-1}}`` for every arm ``[K]``."""
        return self.norms_of(self.arms)

    def norms_of(self, vectors: np.ndarray) -> np.ndarray:
        """``||v||^2_{V^{-1}}`` for each row of ``vectors [n, d]``."""
        return np.einsum("kd,de,ke->k", vectors, self.gram_inverse, vectors)
