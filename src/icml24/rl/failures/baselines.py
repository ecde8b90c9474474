"""Baseline explorers at a fixed query budget: random search, epsilon-greedy, threshold, Bayesian optimization.

The official repository's baselines (``Baselines/Classification``) draw random actions and adapt which *images*
they test (epsilon-greedy re-weights classes that failed, threshold keeps a class until 5 correct predictions).
Here every baseline adapts the *action*, over the same environment and images as the DQN: the fair comparison
for "which combinations of concepts make the model fail". Each ``explore(env, budget, random_state)`` makes exactly
``budget`` macroscopic queries.
"""

from __future__ import annotations

import numpy as np

from icml24._estimator import Explorer
from icml24._random import RandomState, check_random_state, seed_int
from icml24._validation import FittedAttributes, check_positive, check_positive_int

from .environment import FailureEnv
from .result import ExplorationResult


def _check(env: FailureEnv, budget: int) -> None:
    if not isinstance(env, FailureEnv) or env.mode != "macro":
        raise ValueError("baselines explore a FailureEnv in mode='macro'")
    if budget < 1:
        raise ValueError(f"budget must be >= 1 query, got {budget}")


class _Baseline(FittedAttributes, Explorer):
    """Shared loop: ``choose(random_state)`` an action, query one random image, ``observe`` the outcome.

    ``choose`` draws from ``random_state`` (None, an int or a numpy Generator); ``explore`` hands it one Generator,
    used as is, so the choices continue one stream. ``__init__`` stores the parameters as given (scikit-learn's
    contract); ``explore`` checks them first (``_check_params``)."""

    _fit_call = "explore(env, budget)"

    def _check_params(self) -> None:
        """Check the parameters ``__init__`` stored; called by ``explore``."""

    def _start(self, env: FailureEnv) -> None:
        self.counts_ = np.zeros(env.grid.num_actions)
        self.fails_ = np.zeros(env.grid.num_actions)

    def choose(self, random_state: RandomState = None) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def observe(self, action: int, failure: bool) -> None:
        self.counts_[action] += 1
        self.fails_[action] += failure

    def explore(self, env: FailureEnv, budget: int, random_state=None) -> ExplorationResult:
        """``budget`` queries; ``random_state`` (None, an int or a numpy Generator) seeds the choices and the env."""
        self._check_params()
        _check(env, budget)
        seed = seed_int(random_state)  # an int: itself (gymnasium's reset takes an int)
        rng = np.random.default_rng(seed)
        self._start(env)
        env.reset_log()
        env.reset(seed=seed)
        for _ in range(budget):
            action = self.choose(rng)
            _, _, _, _, info = env.step(action)
            self.observe(action, info["failure"])
            env.reset()
        return ExplorationResult(*env.query_log())


class RandomSearch(_Baseline):
    """A uniformly random action per query."""

    def choose(self, random_state=None):
        return int(check_random_state(random_state).integers(len(self.counts_)))


class EpsilonGreedy(_Baseline):
    """With probability ``epsilon`` a random action, else the highest empirical failure rate so far (ties at
    random; the official epsilon is 0.1)."""

    def __init__(self, epsilon: float = 0.1):
        self.epsilon = epsilon

    def _check_params(self) -> None:
        if not 0 <= self.epsilon <= 1:
            raise ValueError(f"epsilon must lie in [0, 1], got {self.epsilon}")

    def choose(self, random_state=None):
        rng = check_random_state(random_state)
        if rng.random() < self.epsilon:
            return int(rng.integers(len(self.counts_)))
        rate = self.fails_ / np.maximum(self.counts_, 1)
        best = np.flatnonzero(rate == rate.max())
        return int(rng.choice(best))


class Threshold(_Baseline):
    """Keep the current action until it has given ``patience`` correct predictions (the official threshold 5), then
    jump to a random action."""

    def __init__(self, patience: int = 5):
        self.patience = patience

    def _check_params(self) -> None:
        check_positive_int("patience", self.patience)

    def _start(self, env):
        super()._start(env)
        self._current, self._misses = None, 0

    def choose(self, random_state=None):
        if self._current is None or self._misses >= self.patience:
            self._current, self._misses = int(check_random_state(random_state).integers(len(self.counts_))), 0
        return self._current

    def observe(self, action, failure):
        super().observe(action, failure)
        self._misses += not failure


class BayesianOptimization(_Baseline):
    """GP-UCB over the concept grid: a Gaussian process (RBF kernel on level coordinates scaled to [0, 1]) on each
    action's empirical failure rate, with noise variance ``noise / count``; after ``initial`` random queries the
    next ``refit_every`` queries go to the action of highest ``mean + beta * std``."""

    def __init__(self, length_scale: float = 0.3, beta: float = 2.0, noise: float = 0.25, initial: int = 10,
                 refit_every: int = 10):
        self.length_scale, self.beta, self.noise = length_scale, beta, noise
        self.initial, self.refit_every = initial, refit_every

    def _check_params(self) -> None:
        check_positive("length_scale", self.length_scale)
        check_positive("noise", self.noise)
        check_positive("beta", self.beta, allow_zero=True)

    def _start(self, env):
        super()._start(env)
        coords = env.grid.coordinates / np.maximum(np.array(env.grid.shape) - 1, 1)
        sq = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(-1)
        self._kernel = np.exp(-0.5 * sq / self.length_scale**2)
        self._queries, self._next = 0, None

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """GP posterior mean and std of every action's failure rate given the queries so far."""
        seen = np.flatnonzero(self.counts_)
        prior = self.fails_.sum() / max(self.counts_.sum(), 1)
        if not len(seen):
            return np.full(len(self.counts_), prior), np.ones(len(self.counts_))
        y = self.fails_[seen] / self.counts_[seen] - prior
        k_ss = self._kernel[np.ix_(seen, seen)] + np.diag(self.noise / self.counts_[seen])
        k_as = self._kernel[:, seen]
        chol = np.linalg.cholesky(k_ss)
        alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, y))
        v = np.linalg.solve(chol, k_as.T)
        var = np.clip(1.0 - (v**2).sum(0), 1e-12, None)
        return prior + k_as @ alpha, np.sqrt(var)

    def choose(self, random_state=None):
        rng = check_random_state(random_state)
        self._queries += 1
        if self._queries <= int(self.initial):
            return int(rng.integers(len(self.counts_)))
        if self._next is None or (self._queries - int(self.initial) - 1) % max(1, int(self.refit_every)) == 0:
            mean, std = self.posterior()
            ucb = mean + self.beta * std
            self._next = int(rng.choice(np.flatnonzero(ucb >= ucb.max() - 1e-12)))
        return self._next
