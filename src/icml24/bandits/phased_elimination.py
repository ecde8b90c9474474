"""PhaElimD: phased elimination with D-optimal designs (Lattimore & Szepesvári, Bandit Algorithms, Alg. 12)."""

from __future__ import annotations

import numpy as np

from icml24._validation import check_positive

from .batched import BatchedPolicy
from .design import d_optimal_design, design_counts


class PhasedElimination(BatchedPolicy):
    r"""Phased elimination on D-optimal designs, the E4 paper's ``PhaElimD`` baseline (its official constants).

    Phase ``l = 1, 2, ...`` is one batch:

    1. D-optimal design ``pi_l`` on the active arms (Frank-Wolfe); pull ``ceil(2 pi_l(x) T_l)`` times with
       ``T_l = T^{1 - 2^{-l}}``.
    2. Ridge least squares on all data so far; keep the arms whose estimated mean is within ``2 eps_l`` of the
       best, ``eps_l = sqrt(d log(K T^2) / T_l)``.

    When one arm is left it is pulled to the end (one more batch). ``O(log log T)`` batches in all.

    Args:
        reg (float, default 1.0): ridge of the least-squares estimate.
        design_tol (float, default 1e-4): Frank-Wolfe tolerance.
    """

    def __init__(self, reg: float = 1.0, design_tol: float = 1e-4):
        self.reg = reg  # stored as given; reset() checks them (_check_params)
        self.design_tol = design_tol

    def _check_params(self) -> None:
        check_positive("reg", self.reg)
        check_positive("design_tol", self.design_tol)

    def __repr__(self) -> str:
        return f"PhasedElimination(reg={self.reg}, design_tol={self.design_tol})"

    def reset(self, arms, horizon, random_state=None) -> None:
        super().reset(arms, horizon, random_state)
        self.active_ = np.arange(self.arms_.shape[0])
        self.phase_index_ = 1

    def _budget(self) -> float:
        return float(self.horizon_ ** (1 - 2.0 ** -self.phase_index_))

    def next_batch(self, remaining: int) -> np.ndarray:
        counts = np.zeros(self.arms_.shape[0], dtype=np.int64)
        if self.active_.size == 1:
            counts[self.active_[0]] = remaining
            return counts
        pi, _ = d_optimal_design(self.arms_[self.active_], tol=self.design_tol)
        counts[self.active_] = design_counts(pi, self._budget())
        return counts

    def update(self, arm_sequence, rewards):
        self.stats_.add(arm_sequence, rewards)
        if self.active_.size > 1:
            num_arms, dim = self.arms_.shape
            eps = np.sqrt(dim * np.log(num_arms * self.horizon_**2) / self._budget())
            means = self.arms_[self.active_] @ self.stats_.theta
            self.active_ = self.active_[means > means.max() - 2 * eps]
            self.phase_index_ += 1
        return None
