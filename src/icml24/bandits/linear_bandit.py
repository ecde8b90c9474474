"""Stochastic linear bandit with a fixed finite arm set, and the instances of Ren, Jin & Xu (ICML 2024).

Pulling arm ``x`` returns ``<x, theta> + noise_std * N(0, 1)``. The instance generators follow the paper's
experiments: the End of Optimism instances of Lattimore & Szepesvári (2017) and random instances.
"""

from __future__ import annotations

import numpy as np

from icml24._random import RandomState, check_random_state
from icml24._validation import check_finite, check_positive


class LinearBandit:
    """A ``K``-armed linear bandit ``r = <x_a, theta> + sigma * eps`` with Gaussian noise.

    Args:
        arms (array ``[K, d]``): one arm (feature vector) per row.
        theta (array ``[d]``): the unknown parameter.
        noise_std (float, default 1.0): standard deviation ``sigma`` of the Gaussian reward noise.

    Attributes:
        means (``[K]``): expected reward of each arm, ``arms @ theta``.
        gaps (``[K]``): suboptimality gap of each arm, ``max(means) - means``.
        best_arm (int): index of an optimal arm.
        optimal_arms (``[k]``): indices of every arm whose mean ties with the best (to 1e-9 relative).
    """

    KIND = "environment"  # icml24._contract

    def __init__(self, arms, theta, noise_std: float = 1.0):
        arms = check_finite("arms", np.asarray(arms, dtype=float))
        theta = check_finite("theta", np.asarray(theta, dtype=float))
        check_positive("noise_std", noise_std, allow_zero=True)
        if arms.ndim != 2 or arms.shape[0] < 1:
            raise ValueError(f"arms must be a [num_arms, dim] array, got shape {arms.shape}")
        if theta.shape != (arms.shape[1],):
            raise ValueError(f"theta must have shape ({arms.shape[1]},) to match arms {arms.shape}, got {theta.shape}")
        self.arms = arms
        self.theta = theta
        self.noise_std = float(noise_std)
        self.means = arms @ theta
        self.gaps = self.means.max() - self.means
        self.best_arm = int(np.argmax(self.means))
        self.optimal_arms = np.flatnonzero(self.gaps <= 1e-9 * max(1.0, float(np.abs(self.means).max())))

    @property
    def num_arms(self) -> int:
        return self.arms.shape[0]

    @property
    def dim(self) -> int:
        return self.arms.shape[1]

    def pull(self, arm_sequence, random_state: RandomState = None) -> np.ndarray:
        """Rewards of the pulls ``arm_sequence`` (``[n]`` arm indices), drawn in one array operation from
        ``random_state`` (None, an int or a numpy Generator, used as is)."""
        arm_sequence = np.asarray(arm_sequence, dtype=np.intp)
        noise = check_random_state(random_state).standard_normal(arm_sequence.shape[0])
        return self.means[arm_sequence] + self.noise_std * noise

    def __repr__(self) -> str:
        return f"LinearBandit(num_arms={self.num_arms}, dim={self.dim}, noise_std={self.noise_std})"


def end_of_optimism_instance(dim: int = 2, eps: float = 0.01, noise_std: float = 1.0) -> LinearBandit:
    """The End of Optimism instance (Lattimore & Szepesvári, 2017) used by the paper.

    ``theta = e_1``; the arms are the standard basis ``e_1..e_d`` and, for each ``j = 2..d``, the near-optimal
    arm ``(1 - eps) e_1 + 2 eps e_j``. So ``K = 2d - 1`` (3, 5, 9 arms for ``d`` = 2, 3, 5). Optimistic
    algorithms rarely pull the informative arms ``e_j`` whose gap is 1, and pay ``~1/eps`` regret for it.
    """
    if dim < 2:
        raise ValueError(f"dim must be >= 2 for an End of Optimism instance, got {dim}")
    if not 0 < eps < 0.5:
        raise ValueError(f"eps must lie in (0, 0.5), got {eps}")
    basis = np.eye(dim)
    near_optimal = (1 - eps) * basis[0] + 2 * eps * basis[1:]
    return LinearBandit(np.vstack([basis, near_optimal]), basis[0], noise_std)


def random_instance(num_arms: int, dim: int, random_state: RandomState = None, noise_std: float = 1.0) -> LinearBandit:
    """The paper's random instance: ``theta = e_1``, arm 0 is ``theta``, the others are uniform on ``[0, 1]^d``.

    ``random_state`` is None, an int, a ``numpy.random.Generator`` or a legacy ``RandomState``, which (unlike
    ``icml24._random.check_random_state``) draws the arms itself: the official code draws them as
    ``np.random.seed(1); np.random.uniform(0, 1, (d, K))``, so ``np.random.RandomState(1)`` gives exactly that
    instance.
    """
    if num_arms < 2 or dim < 1:
        raise ValueError(f"need num_arms >= 2 and dim >= 1, got num_arms={num_arms}, dim={dim}")
    legacy = isinstance(random_state, np.random.RandomState)  # the official instance's own stream, used as is
    rng = random_state if legacy else check_random_state(random_state)
    theta = np.zeros(dim)
    theta[0] = 1.0
    arms = rng.uniform(0, 1, (dim, num_arms)).T.copy()  # drawn as [d, K] like the official code
    arms[0] = theta
    return LinearBandit(arms, theta, noise_std)
