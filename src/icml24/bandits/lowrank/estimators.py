"""Offline estimators of Jedra et al. (ICML 2024): policy evaluation (PE) and best policy identification (BPI).

Every estimator is fitted on behaviour-policy samples and then exposes

- ``reward_matrix_ [m, n]``: its estimate of ``M``;
- ``evaluate(policy)``: the plug-in value ``sum_i omega_i sum_j pi(j|i) M^[i, j]`` (IPS overrides it);
- ``policy_ [m]``: the greedy policy ``argmax_j M^[i, j]`` (BPI).

=================  ===========================================================================
``IPS``            importance-weighted value ``(1/T) sum_t pi(j_t|i_t) / rho(j_t|i_t) r_t``
``IPSGreedy``      greedy on the IPS matrix (the paper's "Benchmark" for BPI)
``SIPS``           plug-in on the rank-r SVD of the IPS matrix (PE)
``SBPI``           greedy on the rank-r SVD of the IPS matrix (BPI)
``RSPE``           two-phase: subspaces of the IPS matrix, then ridge on reduced features (PE)
``RSBPI``          greedy on the RSPE reward estimate (BPI; tau = 1e-5 as in the official code)
=================  ===========================================================================

The paper's PE comparison (RS-PE vs SIPS vs IPS) and BPI comparison (RS-BPI vs SBPI vs Benchmark) are blocks 3
and 6 of the official script.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from icml24._estimator import Estimator
from icml24._validation import FittedAttributes, check_finite, check_fitted, check_positive

from .environment import as_policy_matrix
from .features import ReducedFeatures
from .subspace import ips_matrix, pair_counts, spectral_subspaces


def _validate_samples(contexts, arms, rewards, behaviour, context_probs):
    behaviour = check_finite("behaviour", np.asarray(behaviour, dtype=float))
    if behaviour.ndim != 2:
        raise ValueError(f"behaviour must be the behaviour policy rho [m, n], got shape {behaviour.shape}")
    m, n = behaviour.shape
    contexts, arms = np.asarray(contexts), np.asarray(arms)
    rewards = check_finite("rewards", np.asarray(rewards, dtype=float))
    if not (contexts.shape == arms.shape == rewards.shape) or contexts.ndim != 1 or len(contexts) == 0:
        raise ValueError("contexts, arms and rewards must be non-empty 1-D arrays of the same length")
    if contexts.min() < 0 or contexts.max() >= m or arms.min() < 0 or arms.max() >= n:
        raise ValueError(f"contexts must lie in [0, {m}) and arms in [0, {n}) for behaviour of shape {(m, n)}")
    if np.any(behaviour[contexts, arms] <= 0):
        raise ValueError("some samples have zero behaviour probability; importance weights are undefined")
    omega = np.full(m, 1.0 / m) if context_probs is None else np.asarray(context_probs, dtype=float)
    check_finite("context_probs", omega)
    if omega.shape != (m,):
        raise ValueError(f"context_probs must have shape ({m},), got {omega.shape}")
    return contexts, arms, rewards, behaviour, omega


def _check_rank(rank) -> None:
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
        raise ValueError(f"rank must be an integer >= 1, got {rank!r}")


class _PlugIn(Estimator, FittedAttributes):
    """Shared ``evaluate`` and ``policy_`` of estimators that hold a ``reward_matrix_``."""

    _fit_call = "fit(contexts, arms, rewards, behaviour)"

    def _check_fitted(self):
        check_fitted(self, "reward_matrix_")

    def evaluate(self, policy) -> float:
        """Estimated value of ``policy`` (integer arms ``[m]`` or probabilities ``[m, n]``)."""
        self._check_fitted()
        pi = as_policy_matrix(policy, self.reward_matrix_.shape)
        return float(self.context_probs_ @ np.sum(pi * self.reward_matrix_, axis=1))

    @property
    def policy_(self) -> np.ndarray:
        """Greedy policy ``[m]`` on the estimated reward matrix."""
        self._check_fitted()
        return np.argmax(self.reward_matrix_, axis=1)


class IPSGreedy(_PlugIn):
    """Greedy policy on the IPS matrix ``M~`` (the paper's BPI "Benchmark")."""

    def fit(self, contexts, arms, rewards, behaviour, context_probs=None):
        contexts, arms, rewards, behaviour, omega = _validate_samples(contexts, arms, rewards, behaviour, context_probs)
        self.context_probs_ = omega
        self.reward_matrix_ = ips_matrix(contexts, arms, rewards, behaviour, omega)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class IPS(IPSGreedy):
    """Inverse propensity scoring: ``v^(pi) = (1/T) sum_t pi(j_t | i_t) / rho(j_t | i_t) r_t``."""

    def fit(self, contexts, arms, rewards, behaviour, context_probs=None):
        super().fit(contexts, arms, rewards, behaviour, context_probs)
        self._samples = _validate_samples(contexts, arms, rewards, behaviour, context_probs)[:4]
        return self

    def evaluate(self, policy) -> float:
        self._check_fitted()
        contexts, arms, rewards, behaviour = self._samples
        pi = as_policy_matrix(policy, behaviour.shape)
        return float(np.mean(pi[contexts, arms] / behaviour[contexts, arms] * rewards))


class SIPS(_PlugIn):
    """Spectral plug-in: the rank-``r`` truncated SVD of the IPS matrix, ``M^ = U^ diag(s) V^^T``.

    Args:
        rank (int): the rank ``r`` of the reward matrix.
    """

    def __init__(self, rank: int):
        self.rank = rank

    def fit(self, contexts, arms, rewards, behaviour, context_probs=None):
        _check_rank(self.rank)
        contexts, arms, rewards, behaviour, omega = _validate_samples(contexts, arms, rewards, behaviour, context_probs)
        self.context_probs_ = omega
        self.ips_matrix_ = ips_matrix(contexts, arms, rewards, behaviour, omega)
        self.subspaces_ = spectral_subspaces(self.ips_matrix_, self.rank)
        self.reward_matrix_ = self.subspaces_.low_rank()
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rank={self.rank})"


class SBPI(SIPS):
    """Spectral best policy identification: ``policy_`` is greedy on the rank-``r`` SVD of the IPS matrix."""


class RSPE(_PlugIn):
    """Two-phase policy evaluation (RS-PE) of Jedra et al., ICML 2024.

    Algorithm (samples ``(i_t, j_t, r_t)``, ``t <= T``, collected under ``rho``)::

        T1 = floor(split * T)              (split=None: both phases reuse all T samples, the paper's "RS-PE")
        1. M~ = IPS matrix of samples 1..T1;  (U^, U^_perp, V^, V^_perp) = rank-r SVD of M~
        2. phi(i, j) = reduced features (dimension r(m+n) - r^2)
           theta^ = (tau I + sum_{t in phase 2} phi_t phi_t^T)^{-1} sum_{t in phase 2} r_t phi_t
        3. M^[i, j] = phi(i, j)^T theta^;  v^(pi) = sum_i omega_i sum_j pi(j|i) M^[i, j] = v_pi^T theta^

    Args:
        rank (int): the rank ``r``.
        tau (float): ridge regularization (default 1e-4, the official value).
        split (float or None): fraction of samples for phase 1; ``None`` reuses all samples in both phases.
        phase1_samples (int or None): if given, phase 1 uses only the first ``phase1_samples`` samples and phase 2
            uses ALL samples passed to ``fit``. This is the official script's protocol: at every ``T`` of its curve
            it builds the subspaces from the first ``T`` samples but fits the regression on all 20k, so its small-T
            errors use data a learner with ``T`` samples does not have. Kept to reproduce the paper's curve;
            leave it ``None`` for a leak-free estimate.

    Attributes:
        subspaces_: the singular subspaces estimated from the IPS matrix (phase 1).
        features_ (ReducedFeatures): the reduced features built on them.
        theta_: the ridge estimate on those features, ``[d]`` (phase 2).
        reward_matrix_: the estimated reward matrix, ``[m, n]``.
    """

    def __init__(self, rank: int, tau: float = 1e-4, split: float | None = None, phase1_samples: int | None = None):
        self.rank = rank
        self.tau = tau
        self.split = split
        self.phase1_samples = phase1_samples

    def _check_params(self) -> None:
        _check_rank(self.rank)
        check_positive("tau", self.tau, allow_zero=True)
        split, phase1_samples = self.split, getattr(self, "phase1_samples", None)
        if split is not None and not 0.0 < split < 1.0:
            raise ValueError(f"split must lie in (0, 1) or be None (no split), got {split}")
        if phase1_samples is not None and (split is not None or int(phase1_samples) < 1):
            raise ValueError(f"phase1_samples must be a positive int and cannot be combined with split; got "
                             f"phase1_samples={phase1_samples}, split={split}")

    def fit(self, contexts, arms, rewards, behaviour, context_probs=None):
        self._check_params()
        contexts, arms, rewards, behaviour, omega = _validate_samples(contexts, arms, rewards, behaviour, context_probs)
        num_samples = len(rewards)
        if self.phase1_samples is not None:  # the official script's protocol (see phase1_samples)
            phase1, phase2 = slice(0, min(int(self.phase1_samples), num_samples)), slice(None)
        elif self.split is None:
            phase1 = phase2 = slice(None)
        else:
            first = min(max(math.floor(self.split * num_samples), 1), num_samples - 1)
            phase1, phase2 = slice(0, first), slice(first, None)
        self.context_probs_ = omega
        # phase 1: subspace recovery from the IPS matrix
        self.ips_matrix_ = ips_matrix(contexts[phase1], arms[phase1], rewards[phase1], behaviour, omega)
        self.subspaces_ = spectral_subspaces(self.ips_matrix_, self.rank)
        # phase 2: ridge regression on the reduced features (structured Gram, no [mn, d] design matrix)
        self.features_ = ReducedFeatures(self.subspaces_)
        counts, sums = pair_counts(contexts[phase2], arms[phase2], rewards[phase2], behaviour.shape)
        observed = int(np.count_nonzero(counts))
        if observed < self.features_.dim:
            warnings.warn(f"{type(self).__name__}: phase 2 saw {observed} distinct (context, arm) pairs, fewer than "
                          f"the {self.features_.dim} reduced features r(m + n) - r^2; the ridge fit is underdetermined "
                          f"and shrinks the estimate toward 0 (tau = {self.tau}). Collect more samples.",
                          UserWarning, stacklevel=2)
        self.theta_ = self.features_.ridge(counts, sums, self.tau)
        self.reward_matrix_ = self.features_.to_matrix(self.theta_)
        return self

    def __repr__(self) -> str:
        extra = "" if self.phase1_samples is None else f", phase1_samples={self.phase1_samples}"
        return f"{type(self).__name__}(rank={self.rank}, tau={self.tau}, split={self.split}{extra})"


class RSBPI(RSPE):
    """Two-phase best policy identification (RS-BPI): ``policy_`` is greedy on the RS-PE reward estimate.

    Same algorithm as ``RSPE``; the official code uses ``tau = 1e-5`` here.
    """

    def __init__(self, rank: int, tau: float = 1e-5, split: float | None = None):
        super().__init__(rank=rank, tau=tau, split=split)
