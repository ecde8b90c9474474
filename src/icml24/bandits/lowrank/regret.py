"""Regret minimization in low-rank contextual bandits: RS-RMIN (reconstruction) and its baselines.

RS-RMIN follows the two-phase recipe of Jedra et al. (ICML 2024); the official repository has no regret
code, so this is our reconstruction of the algorithm described in the paper::

    T1 = ceil(exploration_scale * (m + n)^{3/4} * sqrt(T))          (uniform exploration length)
    1. rounds 1..T1: pull a uniformly random arm; M~ = IPS matrix; (U^, U^_perp, V^, V^_perp) = rank-r SVD
    2. rounds T1+1..T: LinUCB (OFUL radius) in the reduced features phi(i, j) of dimension r(m+n) - r^2,
       warm-started with the exploration samples:
           A_t = lambda I + sum_s phi_s phi_s^T,  theta_t = A_t^{-1} sum_s r_s phi_s
           j_t = argmax_j phi(i_t, j)^T theta_t + beta_t ||phi(i_t, j)||_{A_t^{-1}},
           beta_t = sigma sqrt(log det(A_t / lambda) + 2 log(1/delta))

The misspecification of the reduced model (the dropped perp-perp block) is not added to ``beta_t``.
Baselines: ``LinUCBOneHot`` (the same LinUCB on the ``m n`` one-hot features; ``A_t`` is diagonal so
it runs in O(n) per round) and ``PairUCB`` (UCB1 on each (context, arm) pair).

Rounds are sequential, so each learner loops over time; every step inside a round is vectorized over arms.
``run`` returns the pseudo-regret ``max_j M[i_t, j] - M[i_t, j_t]`` of every round.
"""

from __future__ import annotations

import math

import numpy as np

from icml24._estimator import Simulator
from icml24._random import check_random_state
from icml24._validation import FittedAttributes, check_positive

from .environment import LowRankBandit
from .features import ReducedFeatures
from .subspace import ips_matrix, pair_counts, spectral_subspaces


class _OnlineLearner(FittedAttributes, Simulator):
    """Shared driver: draws the contexts and the noise up front, then asks the learner round by round.

    ``__init__`` stores the parameters as given (scikit-learn's contract); ``run`` checks them first."""

    _fit_call = "run(env, horizon)"

    def run(self, env: LowRankBandit, horizon: int, random_state=None) -> np.ndarray:
        """Play ``horizon`` rounds on ``env``; returns the per-round pseudo-regret ``[horizon]``."""
        self._check_params()
        if not isinstance(env, LowRankBandit):
            raise ValueError("env must be a LowRankBandit")
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        rng = check_random_state(random_state)
        contexts = env.sample_contexts(horizon, rng)
        noise = env.noise_std * rng.standard_normal(horizon)
        arms = self._play(env, contexts, noise, rng)
        matrix = env.reward_matrix
        self.contexts_, self.arms_ = contexts, arms
        self.regret_ = matrix[contexts].max(axis=1) - matrix[contexts, arms]
        return self.regret_

    def _check_params(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _play(self, env, contexts, noise, rng) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


def _check_delta(delta: float | None) -> None:
    if delta is not None and not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1) or be None (1 / T), got {delta}")


def _oful_radius(noise_std: float, log_det: float, delta: float) -> float:
    return noise_std * math.sqrt(max(log_det, 0.0) + 2.0 * math.log(1.0 / delta))


class RSRMIN(_OnlineLearner):
    """RS-RMIN: uniform exploration, subspace estimation, then LinUCB in the reduced features (reconstruction).

    Args:
        rank (int): the rank ``r``.
        exploration_scale (float): ``T1 = ceil(scale (m+n)^{3/4} sqrt(T))`` (default 0.5, fixed before any run).
        exploration_rounds (int, optional): overrides ``T1``.
        ridge (float): ``lambda`` of the ridge Gram matrix (default 1e-2).
        delta (float, optional): confidence level of the radius; ``1 / T`` when omitted.
        noise_std (float): the noise scale ``sigma`` used in the radius (default 1.0).
    """

    def __init__(self, rank: int, exploration_scale: float = 0.5, exploration_rounds: int | None = None,
                 ridge: float = 1e-2, delta: float | None = None, noise_std: float = 1.0):
        self.rank = rank  # stored as given; run() checks them (_check_params)
        self.exploration_scale = exploration_scale
        self.exploration_rounds = exploration_rounds
        self.ridge = ridge
        self.delta = delta
        self.noise_std = noise_std

    def _check_params(self) -> None:
        if self.rank < 1:
            raise ValueError(f"rank must be >= 1, got {self.rank}")
        check_positive("exploration_scale", self.exploration_scale)
        check_positive("ridge", self.ridge)
        check_positive("noise_std", self.noise_std, allow_zero=True)
        _check_delta(self.delta)

    def exploration_length(self, shape: tuple[int, int], horizon: int) -> int:
        if self.exploration_rounds is not None:
            return int(min(max(self.exploration_rounds, 1), horizon))
        length = math.ceil(self.exploration_scale * sum(shape) ** 0.75 * math.sqrt(horizon))
        return int(min(max(length, 1), horizon))

    def _play(self, env, contexts, noise, rng):
        m, n = env.shape
        horizon = len(contexts)
        matrix = env.reward_matrix
        explore = self.exploration_length(env.shape, horizon)
        arms = np.empty(horizon, dtype=np.int64)
        # phase 1: uniform exploration and subspace recovery
        arms[:explore] = rng.integers(n, size=explore)
        rewards = matrix[contexts[:explore], arms[:explore]] + noise[:explore]
        behaviour = np.full((m, n), 1.0 / n)
        estimate = ips_matrix(contexts[:explore], arms[:explore], rewards, behaviour, env.context_probs)
        self.features_ = features = ReducedFeatures(spectral_subspaces(estimate, self.rank))
        self.exploration_rounds_ = explore
        # phase 2: LinUCB in the reduced features, warm-started with the exploration samples
        counts, sums = pair_counts(contexts[:explore], arms[:explore], rewards, (m, n))
        dim = features.dim
        system = features.gram(counts) + self.ridge * np.eye(dim)
        inverse = np.linalg.inv(system)
        response = features.adjoint(sums)
        log_det = np.linalg.slogdet(system)[1] - dim * math.log(self.ridge)
        delta = self.delta if self.delta is not None else 1.0 / horizon
        for t in range(explore, horizon):
            context = contexts[t]
            phi = features.context_features(context)  # [n, d]
            theta = inverse @ response
            projected = phi @ inverse  # rows: A^{-1} phi(i, j) (A symmetric)
            widths = np.sqrt(np.maximum(np.einsum("jd,jd->j", projected, phi), 0.0))
            arm = int(np.argmax(phi @ theta + _oful_radius(self.noise_std, log_det, delta) * widths))
            arms[t] = arm
            reward = matrix[context, arm] + noise[t]
            direction = projected[arm]
            denominator = 1.0 + direction @ phi[arm]
            inverse -= np.outer(direction, direction) / denominator  # Sherman-Morrison
            response += reward * phi[arm]
            log_det += math.log(denominator)  # matrix determinant lemma
        self.theta_ = inverse @ response
        return arms

    def __repr__(self) -> str:
        return (f"RSRMIN(rank={self.rank}, exploration_scale={self.exploration_scale}, "
                f"exploration_rounds={self.exploration_rounds}, ridge={self.ridge}, delta={self.delta})")


class ExploreSubspaceRefine(RSRMIN):
    """ESTR-style low-rank baseline (explore subspace, then refine; Jun et al., ICML 2019, as cited by the paper).

    Stage 1 explores uniformly for ``T1 = ceil(scale sqrt(r (m + n) T))`` rounds (the length at which the
    exploration cost ``T1`` balances the refine stage's ``r (m + n) T / T1`` subspace-error cost) and estimates
    the rank-``r`` subspaces; stage 2 runs LinUCB in the reduced features. This is LowOFUL with the penalty on
    the perp-perp block taken to infinity (that block dropped), so it differs from RS-RMIN only in the
    exploration schedule: a like-with-like, structure-aware comparison for RS-RMIN's ``(m + n)^{3/4} sqrt(T)``.

    Args: as ``RSRMIN``; ``exploration_scale`` (default 1.0) multiplies ``sqrt(r (m + n) T)``.
    """

    def __init__(self, rank: int, exploration_scale: float = 1.0, exploration_rounds: int | None = None,
                 ridge: float = 1e-2, delta: float | None = None, noise_std: float = 1.0):
        super().__init__(rank, exploration_scale, exploration_rounds, ridge, delta, noise_std)

    def exploration_length(self, shape: tuple[int, int], horizon: int) -> int:
        if self.exploration_rounds is not None:
            return int(min(max(self.exploration_rounds, 1), horizon))
        length = math.ceil(self.exploration_scale * math.sqrt(self.rank * sum(shape) * horizon))
        return int(min(max(length, 1), horizon))

    def __repr__(self) -> str:
        return super().__repr__().replace("RSRMIN", "ExploreSubspaceRefine", 1)


class LinUCBOneHot(_OnlineLearner):
    """LinUCB (OFUL radius) on the ``m n`` one-hot features ``e_i (x) e_j``: ignores the low-rank structure.

    With one-hot features ``A_t = lambda I + diag(counts)``, so ``theta = sums / (lambda + counts)``,
    ``||phi||_{A^{-1}} = (lambda + counts)^{-1/2}`` and ``log det(A_t / lambda) = sum log(1 + counts / lambda)``.

    Args:
        ridge (float): ``lambda`` (default 1e-2). delta (float, optional): ``1 / T`` when omitted.
        noise_std (float): ``sigma`` in the radius.
    """

    def __init__(self, ridge: float = 1e-2, delta: float | None = None, noise_std: float = 1.0):
        self.ridge = ridge  # stored as given; run() checks them (_check_params)
        self.delta = delta
        self.noise_std = noise_std

    def _check_params(self) -> None:
        check_positive("ridge", self.ridge)
        check_positive("noise_std", self.noise_std, allow_zero=True)
        _check_delta(self.delta)

    def _play(self, env, contexts, noise, rng):
        m, n = env.shape
        horizon = len(contexts)
        matrix = env.reward_matrix
        counts = np.zeros((m, n))
        sums = np.zeros((m, n))
        arms = np.empty(horizon, dtype=np.int64)
        log_det = 0.0
        delta = self.delta if self.delta is not None else 1.0 / horizon
        for t in range(horizon):
            context = contexts[t]
            shrunk = self.ridge + counts[context]
            radius = _oful_radius(self.noise_std, log_det, delta)
            arm = int(np.argmax(sums[context] / shrunk + radius / np.sqrt(shrunk)))
            arms[t] = arm
            log_det += math.log1p(1.0 / shrunk[arm])
            counts[context, arm] += 1.0
            sums[context, arm] += matrix[context, arm] + noise[t]
        return arms

    def __repr__(self) -> str:
        return f"LinUCBOneHot(ridge={self.ridge}, delta={self.delta})"


class PairUCB(_OnlineLearner):
    """UCB1 run separately in every context: index ``mean[i, j] + sigma sqrt(2 log N_i / C[i, j])``.

    Unpulled arms of the current context are tried first.

    Args:
        noise_std (float): ``sigma`` in the bonus (default 1.0).
    """

    def __init__(self, noise_std: float = 1.0):
        self.noise_std = noise_std  # stored as given; run() checks it (_check_params)

    def _check_params(self) -> None:
        check_positive("noise_std", self.noise_std, allow_zero=True)

    def _play(self, env, contexts, noise, rng):
        m, n = env.shape
        horizon = len(contexts)
        matrix = env.reward_matrix
        counts = np.zeros((m, n))
        sums = np.zeros((m, n))
        visits = np.zeros(m)
        arms = np.empty(horizon, dtype=np.int64)
        for t in range(horizon):
            context = contexts[t]
            visits[context] += 1
            row = counts[context]
            if visits[context] <= n and np.any(row == 0):
                arm = int(np.argmin(row))
            else:
                bonus = self.noise_std * np.sqrt(2.0 * math.log(visits[context]) / row)
                arm = int(np.argmax(sums[context] / row + bonus))
            arms[t] = arm
            counts[context, arm] += 1.0
            sums[context, arm] += matrix[context, arm] + noise[t]
        return arms

    def __repr__(self) -> str:
        return f"PairUCB(noise_std={self.noise_std})"
