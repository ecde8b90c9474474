"""The low-rank contextual bandit of Jedra et al. (ICML 2024): a reward matrix, a context law, Gaussian noise.

In each round a context ``i ~ omega`` is revealed, the learner picks an arm ``j`` and observes
``M[i, j] + noise``. Offline data (policy evaluation, best policy identification) are drawn from a
behaviour policy ``rho[i, j]`` in one vectorized call.
"""

from __future__ import annotations

import numpy as np

from icml24._random import check_random_state
from icml24._validation import check_finite, check_positive


def as_policy_matrix(policy, shape: tuple[int, int]) -> np.ndarray:
    """A policy as a row-stochastic matrix ``[m, n]``.

    Args:
        policy: either integer arms ``[m]`` (a deterministic policy) or probabilities ``[m, n]``.
        shape: ``(m, n)``.
    """
    m, n = shape
    policy = check_finite("policy", np.asarray(policy))
    if policy.ndim == 1:
        if policy.shape[0] != m or not np.issubdtype(policy.dtype, np.integer):
            raise ValueError(f"a deterministic policy must be {m} integer arms (one per context), got {policy.shape}")
        if policy.min() < 0 or policy.max() >= n:
            raise ValueError(f"policy arms must lie in [0, {n}), got range [{policy.min()}, {policy.max()}]")
        matrix = np.zeros((m, n))
        matrix[np.arange(m), policy] = 1.0
        return matrix
    if policy.shape != (m, n):
        raise ValueError(f"a policy matrix must have shape {(m, n)}, got {policy.shape}")
    if np.any(policy < 0) or not np.allclose(policy.sum(axis=1), 1.0):
        raise ValueError("each row of a policy matrix must be a probability vector (non-negative, summing to 1)")
    return policy.astype(float)


class LowRankBandit:
    """A contextual bandit whose mean rewards form a (low-rank) matrix.

    Args:
        reward_matrix (array ``[m, n]``): mean reward ``M[i, j]`` of arm ``j`` in context ``i``.
        context_probs (array ``[m]``, optional): the context law ``omega``; uniform when omitted.
        noise_std (float): standard deviation of the Gaussian reward noise (default 1.0).
    """

    KIND = "environment"  # icml24._contract

    def __init__(self, reward_matrix, context_probs=None, noise_std: float = 1.0):
        matrix = check_finite("reward_matrix", np.asarray(reward_matrix, dtype=float))
        if matrix.ndim != 2 or min(matrix.shape) < 1:
            raise ValueError(f"reward_matrix must be a non-empty 2-D array [m, n], got shape {matrix.shape}")
        m, _ = matrix.shape
        probs = np.full(m, 1.0 / m) if context_probs is None else np.asarray(context_probs, dtype=float)
        check_finite("context_probs", probs)
        if probs.shape != (m,) or np.any(probs <= 0) or not np.isclose(probs.sum(), 1.0):
            raise ValueError(f"context_probs must be {m} positive probabilities summing to 1")
        check_positive("noise_std", noise_std, allow_zero=True)
        self.reward_matrix = matrix
        self.context_probs = probs
        self.noise_std = float(noise_std)

    # ------------------------------------------------------------------ instances
    @classmethod
    def official_instance(cls, m: int = 50, n: int = 50, rank: int = 2, random_state=None, noise_std: float = 1.0):
        """The default instance of the official code: ``M = M1[:, :r] N1[:r, :]``.

        ``M1 [m, m]`` and ``N1 [n, n]`` are uniform(0, 1) matrices whose diagonal is replaced by the row's
        absolute sum (diagonally dominant), so a few rows and columns carry most of the mass.
        """
        if not 1 <= rank <= min(m, n):
            raise ValueError(f"rank must lie in [1, min(m, n)] = [1, {min(m, n)}], got {rank}")
        rng = check_random_state(random_state)
        left = rng.random((m, m))
        np.fill_diagonal(left, np.abs(left).sum(axis=1))
        right = rng.random((n, n))
        np.fill_diagonal(right, np.abs(right).sum(axis=1))
        return cls(left[:, :rank] @ right[:rank, :], noise_std=noise_std)

    @classmethod
    def gaussian_instance(cls, m: int = 50, n: int = 50, rank: int = 2, random_state=None, scale: float = 1.0,
                          noise_std: float = 1.0):
        """An incoherent instance ``M = scale * A B^T / sqrt(r)``, i.i.d. N(0, 1) factors ``A [m, r]``, ``B [n, r]``.

        Entries have standard deviation about ``scale``; no row or column dominates (unlike the official one).
        """
        if not 1 <= rank <= min(m, n):
            raise ValueError(f"rank must lie in [1, min(m, n)] = [1, {min(m, n)}], got {rank}")
        rng = check_random_state(random_state)
        left, right = rng.standard_normal((m, rank)), rng.standard_normal((n, rank))
        return cls(scale * left @ right.T / np.sqrt(rank), noise_std=noise_std)

    @classmethod
    def constant(cls, m: int, n: int, value: float = 1.0, noise_std: float = 1.0):
        """The rank-one all-``value`` matrix of the paper's size experiment."""
        return cls(np.full((m, n), float(value)), noise_std=noise_std)

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, int]:
        return self.reward_matrix.shape

    @property
    def uniform_behaviour(self) -> np.ndarray:
        """The uniform behaviour policy ``rho[i, j] = 1 / n``."""
        m, n = self.shape
        return np.full((m, n), 1.0 / n)

    @property
    def optimal_arms(self) -> np.ndarray:
        """``[m]`` best arm per context (first one on ties)."""
        return np.argmax(self.reward_matrix, axis=1)

    @property
    def snr(self) -> float:
        """Root-mean-square entry over the noise std (inf without noise)."""
        rms = float(np.sqrt(np.mean(self.reward_matrix**2)))
        return np.inf if self.noise_std == 0 else rms / self.noise_std

    def value(self, policy) -> float:
        """``v(pi) = sum_i omega_i sum_j pi(j | i) M[i, j]``."""
        pi = as_policy_matrix(policy, self.shape)
        return float(self.context_probs @ np.sum(pi * self.reward_matrix, axis=1))

    def optimal_value(self) -> float:
        return self.value(self.optimal_arms)

    # ------------------------------------------------------------------ sampling
    def sample_contexts(self, size: int, random_state=None) -> np.ndarray:
        """``[size]`` i.i.d. contexts from ``omega``."""
        return check_random_state(random_state).choice(self.shape[0], size=size, p=self.context_probs)

    def pull(self, contexts, arms, random_state=None) -> np.ndarray:
        """Noisy rewards of the pairs ``(contexts[t], arms[t])``."""
        means = self.reward_matrix[contexts, arms]
        return means + self.noise_std * check_random_state(random_state).standard_normal(np.shape(means))

    def collect(self, num_samples: int, behaviour=None, random_state=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``num_samples`` offline samples under the behaviour policy ``rho [m, n]`` (uniform if omitted).

        Returns ``(contexts [T], arms [T], rewards [T])``. Arms are drawn by inverting each row's CDF with
        one ``searchsorted`` over the concatenated rows (O(T log mn), no loop over samples).
        """
        if num_samples < 1:
            raise ValueError(f"num_samples must be >= 1, got {num_samples}")
        rng = check_random_state(random_state)
        m, n = self.shape
        rho = self.uniform_behaviour if behaviour is None else as_policy_matrix(behaviour, self.shape)
        contexts = self.sample_contexts(num_samples, rng)
        uniforms = rng.random(num_samples)
        cdf = np.cumsum(rho, axis=1)
        cdf[:, -1] = 1.0
        offset_cdf = (cdf + np.arange(m)[:, None]).ravel()
        flat = np.searchsorted(offset_cdf, contexts + uniforms, side="right")
        arms = np.clip(flat - contexts * n, 0, n - 1)
        # side='right' never lands on a zero-probability arm: its CDF equals its predecessor's
        return contexts, arms, self.pull(contexts, arms, rng)

    def __repr__(self) -> str:
        m, n = self.shape
        return f"LowRankBandit(m={m}, n={n}, noise_std={self.noise_std})"
