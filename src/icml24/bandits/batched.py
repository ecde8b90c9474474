"""Batched play of a linear bandit: the policy interface every linear-bandit policy implements, and
``run_batched``, which plays one policy for a horizon.

A batch is a fixed allocation decided before its rewards are seen: the policy returns pull counts per arm,
the runner draws all the batch's rewards in one array operation and hands them back. A fully sequential
policy (LinUCB, LinTS) is the special case of one pull per batch.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from icml24._estimator import Policy
from icml24._random import RandomState, check_random_state, spawn
from icml24._validation import FittedAttributes, check_finite, check_positive

from .least_squares import ArmLeastSquares
from .linear_bandit import LinearBandit


class BatchedPolicy(FittedAttributes, Policy):
    """Base class of a policy for a finite-armed linear bandit played in batches.

    Subclasses implement ``next_batch`` (and usually extend ``reset`` and ``update``). The runner calls
    ``reset(arms, horizon, random_state)`` once, then repeats ``counts = next_batch(remaining)``,
    ``sequence = pull_order(counts)``, ``used = update(sequence, rewards)`` until the horizon is spent.

    ``update`` may return how many of the pulls it used (the rest are discarded as never pulled: rewards are
    independent, so drawing and dropping them changes nothing). A policy that checks a stopping rule after
    each pull uses this to run its checks on a whole block at once. ``sequential = True`` marks a policy whose
    every pull is its own batch; the runner then counts pulls as batches.

    ``requires_unique_best = True`` marks a policy whose stopping rule assumes a unique optimal arm;
    ``run_batched`` warns when the bandit has tied best arms.

    Attributes set by ``reset``: ``arms_ [K, d]``, ``horizon_``, ``rng_``, ``stats_`` (ridge least squares).
    Reading one before ``reset`` raises ``NotFittedError``. A policy's ``__init__`` stores its parameters as given
    (scikit-learn's contract, ``icml24._estimator.Policy``); ``reset`` checks them first (``_check_params``).
    """

    sequential: bool = False
    requires_unique_best: bool = False
    reg: float = 1.0
    _fit_call = "reset(arms, horizon) (run_batched does)"

    def reset(self, arms: np.ndarray, horizon: int, random_state: RandomState = None) -> None:
        """Start a run on ``arms [K, d]`` for ``horizon`` pulls; ``rng_`` is ``random_state`` (None, an int or a numpy
        Generator, used as is) as a numpy Generator: the policy's own randomness."""
        self._check_params()
        arms = check_finite("arms", np.asarray(arms, dtype=float))
        if arms.ndim != 2 or arms.shape[0] < 1:
            raise ValueError(f"arms must be a [num_arms, dim] array, got shape {arms.shape}")
        if int(horizon) < 1:
            raise ValueError(f"horizon must be a positive integer, got {horizon}")
        self.arms_ = arms
        self.horizon_ = int(horizon)
        self.rng_ = check_random_state(random_state)
        self.stats_ = ArmLeastSquares(arms, self.reg)

    def _check_params(self) -> None:
        """Check the parameters ``__init__`` stored (a ValueError naming the first bad one); called by ``reset``."""
        check_positive("reg", self.reg)

    def next_batch(self, remaining: int) -> np.ndarray:
        """Pull counts ``[K]`` (non-negative ints, at least one pull) of the next batch."""
        raise NotImplementedError

    def pull_order(self, counts: np.ndarray) -> np.ndarray:
        """The order of the batch's pulls: arm by arm, as the official code pulls them."""
        return np.repeat(np.arange(counts.shape[0]), counts)

    def update(self, arm_sequence: np.ndarray, rewards: np.ndarray) -> int | None:
        """Learn from the batch; return how many pulls were used (``None``: all)."""
        self.stats_.add(arm_sequence, rewards)
        return None

    def _one_pull(self, arm: int) -> np.ndarray:
        counts = np.zeros(self.arms_.shape[0], dtype=np.int64)
        counts[arm] = 1
        return counts


@dataclass
class BanditRun:
    """What one run of a policy produced.

    Attributes:
        regret (``[T]``): cumulative pseudo-regret ``sum_s gap(a_s)`` after each pull.
        batch_ends (``[B]``): number of pulls made when each batch ended.
        num_batches (int): batches used (pulls, for a sequential policy).
        pulls (``[K]``): pulls of each arm.
        seconds (float): wall time of the run.
        info (dict): policy diagnostics (e.g. E4's Chernoff test outcome).
    """

    regret: np.ndarray
    batch_ends: np.ndarray
    num_batches: int
    pulls: np.ndarray
    seconds: float
    info: dict = field(default_factory=dict)

    @property
    def final_regret(self) -> float:
        return float(self.regret[-1])


def fit_to_horizon(counts: np.ndarray, remaining: int, mode: str = "proportional") -> np.ndarray:
    """Cut a batch that asks for more than ``remaining`` pulls.

    ``proportional`` keeps the batch's proportions (largest-remainder rounding), so no arm is favoured by its
    index; ``in_order`` pulls arm 0 first, then arm 1, ... (the official code's loop).
    """
    total = int(counts.sum())
    if total <= remaining:
        return counts
    if mode == "in_order":
        before = np.cumsum(counts) - counts
        return np.clip(remaining - before, 0, counts).astype(np.int64)
    if mode != "proportional":
        raise ValueError(f"truncation must be 'proportional' or 'in_order', got {mode!r}")
    share = counts * (remaining / total)
    cut = np.floor(share).astype(np.int64)
    short = remaining - int(cut.sum())
    if short > 0:
        cut[np.argsort(-(share - cut), kind="stable")[:short]] += 1
    return cut


def run_batched(policy: BatchedPolicy, bandit: LinearBandit, horizon: int, random_state: RandomState = None,
                truncation: str = "proportional") -> BanditRun:
    """Play ``policy`` on ``bandit`` for ``horizon`` pulls.

    Args:
        policy: a ``BatchedPolicy``.
        bandit: the environment.
        horizon (int): number of pulls ``T``.
        random_state: None, an int, a ``numpy.random.SeedSequence`` or a numpy Generator; the reward noise and the
            policy's own randomness use independent streams spawned from it (``icml24._random.spawn``).
        truncation (str, default ``"proportional"``): how a batch that overshoots the horizon is cut
            (see ``fit_to_horizon``).
    """
    horizon = int(horizon)
    if horizon < 1:
        raise ValueError(f"horizon must be a positive integer, got {horizon}")
    tied = bandit.optimal_arms
    if policy.requires_unique_best and tied.size > 1:
        warnings.warn(f"arms {tied.tolist()} tie for the best mean: {type(policy).__name__}'s stopping test assumes a "
                      "unique optimal arm and (almost) never passes, so it falls back to elimination, which cannot "
                      "separate tied arms; with a batch 3 longer than the horizon (E4's gamma=10) it spends the rest "
                      "of the horizon on a design over every arm and regret grows linearly in T",
                      UserWarning, stacklevel=2)
    env_rng, policy_rng = spawn(random_state, 2)
    start = time.perf_counter()
    policy.reset(bandit.arms, horizon, policy_rng)
    gap_per_pull = np.empty(horizon)
    pulls = np.zeros(bandit.num_arms, dtype=np.int64)
    batch_ends: list[int] = []
    num_batches = 0
    t = 0
    while t < horizon:
        counts = np.asarray(policy.next_batch(horizon - t))
        if counts.shape != (bandit.num_arms,) or counts.min() < 0 or counts.sum() < 1:
            raise ValueError(f"{type(policy).__name__}.next_batch must return {bandit.num_arms} non-negative "
                             f"pull counts with at least one pull, got {counts}")
        counts = fit_to_horizon(counts.astype(np.int64), horizon - t, truncation)
        sequence = policy.pull_order(counts)
        rewards = bandit.pull(sequence, env_rng)
        used = policy.update(sequence, rewards)
        used = sequence.shape[0] if used is None else int(used)
        if not 1 <= used <= sequence.shape[0]:
            raise ValueError(f"{type(policy).__name__}.update used {used} of {sequence.shape[0]} pulls")
        gap_per_pull[t:t + used] = bandit.gaps[sequence[:used]]
        pulls += np.bincount(sequence[:used], minlength=bandit.num_arms)
        t += used
        num_batches += used if policy.sequential else 1
        batch_ends.append(t)
    info = dict(getattr(policy, "info_", {}))
    return BanditRun(np.cumsum(gap_per_pull), np.asarray(batch_ends), num_batches, pulls,
                     time.perf_counter() - start, info)
