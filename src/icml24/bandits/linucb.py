"""LinUCB / OFUL (Abbasi-Yadkori, Pál & Szepesvári 2011): the sequential optimistic baseline."""

from __future__ import annotations

import numpy as np

from icml24._validation import check_positive

from .batched import BatchedPolicy


def ucb_arm(arms: np.ndarray, theta: np.ndarray, gram_inverse: np.ndarray, radius: float) -> int:
    """``argmax_x <x, theta> + radius ||x||_{V^{-1}}`` over the rows of ``arms``."""
    norms = np.einsum("kd,de,ke->k", arms, gram_inverse, arms)
    return int(np.argmax(arms @ theta + radius * np.sqrt(np.maximum(norms, 0.0))))


class LinUCB(BatchedPolicy):
    r"""Sequential LinUCB with the OFUL confidence radius (one pull per batch).

    At round ``t`` pull ``argmax_x <x, theta_t> + beta_t ||x||_{V_t^{-1}}`` with

        ``beta_t = sigma sqrt(d log((1 + t L^2 / (reg d)) / delta)) + sqrt(reg) S``,

    ``L = max ||x||``, ``delta = 1/T`` unless given (Abbasi-Yadkori et al. 2011, Thm 2).

    Args:
        reg (float, default 1.0): ridge.
        noise_std (float, default 1.0): ``sigma``, the sub-Gaussian noise level.
        theta_norm (float, default 1.0): ``S``, a bound on ``||theta||``.
        delta (float, optional): confidence level (default ``1/T``).
    """

    sequential = True

    def __init__(self, reg: float = 1.0, noise_std: float = 1.0, theta_norm: float = 1.0, delta: float | None = None):
        self.reg = reg  # stored as given; reset() checks them (_check_params)
        self.noise_std = noise_std
        self.theta_norm = theta_norm
        self.delta = delta

    def _check_params(self) -> None:
        check_positive("reg", self.reg)
        check_positive("noise_std", self.noise_std, allow_zero=True)
        check_positive("theta_norm", self.theta_norm, allow_zero=True)
        if self.delta is not None and not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")

    def __repr__(self) -> str:
        return (f"LinUCB(reg={self.reg}, noise_std={self.noise_std}, theta_norm={self.theta_norm}, "
                f"delta={self.delta})")

    def reset(self, arms, horizon, random_state=None) -> None:
        super().reset(arms, horizon, random_state)
        self.delta_ = self.delta if self.delta is not None else 1.0 / self.horizon_
        self.max_norm_sq_ = float(np.max(np.sum(self.arms_**2, axis=1)))

    def radius(self, t: int) -> float:
        dim = self.arms_.shape[1]
        growth = np.log((1 + t * self.max_norm_sq_ / (self.reg * dim)) / self.delta_)
        return float(self.noise_std * np.sqrt(dim * growth) + np.sqrt(self.reg) * self.theta_norm)

    def next_batch(self, remaining: int) -> np.ndarray:
        inverse = self.stats_.gram_inverse
        theta = inverse @ self.stats_.target
        return self._one_pull(ucb_arm(self.arms_, theta, inverse, self.radius(self.stats_.num_pulls)))
