"""The official baselines as they run (``Baselines/Classification``): a uniformly random action per query, and an
adaptive choice of which *class* the image is drawn from.

* ``ClassEpsilonGreedy`` (``e greddy.py``): class weights start at 1; a class is drawn in proportion to its
  weight, then a random image of it; a failure adds ``epsilon`` (0.1) to the class's weight, a correct prediction
  subtracts it (floored at 0.01).
* ``ClassThreshold`` (``threshold.py``): keep drawing images of one random class until it has given
  ``patience`` (5) correct predictions in all, then switch to another random class.

Both make exactly ``budget`` macroscopic queries of a ``FailureEnv``, as the action-adaptive baselines do.
"""

from __future__ import annotations

import numpy as np

from icml24._estimator import Explorer
from icml24._random import RandomState, check_random_state
from icml24._validation import FittedAttributes, check_positive, check_positive_int

from .baselines import _check
from .environment import FailureEnv
from .result import ExplorationResult


class _ClassAdaptive(FittedAttributes, Explorer):
    """Shared loop: ``pick_class(random_state)``, a random image of it, a uniformly random action, ``observe`` the
    outcome (``explore`` hands ``pick_class`` one numpy Generator, used as is). ``__init__`` stores the parameters
    as given (scikit-learn's contract); ``explore`` checks them first (``_check_params``)."""

    _fit_call = "explore(env, budget)"

    def _check_params(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def pick_class(self, random_state: RandomState = None) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def observe(self, label: int, failure: bool) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def explore(self, env: FailureEnv, budget: int, random_state=None) -> ExplorationResult:
        """``budget`` queries; ``random_state`` (None, an int or a numpy Generator) seeds them."""
        self._check_params()
        _check(env, budget)
        rng = check_random_state(random_state)
        members = [np.flatnonzero(env.labels == c) for c in range(env.num_classes)]
        self._start(members)
        env.reset_log()
        for _ in range(budget):
            label = self.pick_class(rng)
            env.reset(options={"index": int(rng.choice(members[label]))})
            _, _, _, _, info = env.step(int(rng.integers(env.grid.num_actions)))
            self.observe(label, info["failure"])
        return ExplorationResult(*env.query_log())


class ClassEpsilonGreedy(_ClassAdaptive):
    """The official epsilon-greedy: classes re-weighted by +-``epsilon`` per failure / success, actions random."""

    def __init__(self, epsilon: float = 0.1, floor: float = 0.01):
        self.epsilon, self.floor = epsilon, floor

    def _check_params(self) -> None:
        check_positive("epsilon", self.epsilon)
        check_positive("floor", self.floor)

    def _start(self, members):
        self.present_ = np.array([len(m) > 0 for m in members])
        self.weights_ = np.ones(len(members))

    def pick_class(self, random_state=None):
        w = self.weights_ * self.present_  # classes absent from the pool cannot be drawn
        return int(check_random_state(random_state).choice(len(w), p=w / w.sum()))

    def observe(self, label, failure):
        self.weights_[label] += self.epsilon if failure else -self.epsilon
        self.weights_ = np.where(self.weights_ <= 0, self.floor, self.weights_)


class ClassThreshold(_ClassAdaptive):
    """The official threshold: one class until ``patience`` correct predictions, then another random class."""

    def __init__(self, patience: int = 5):
        self.patience = patience

    def _check_params(self) -> None:
        check_positive_int("patience", self.patience)

    def _start(self, members):  # learned state: the classes present, the current one and its correct count
        self.classes_ = np.flatnonzero([len(m) > 0 for m in members])
        self.current_, self.correct_ = None, 0

    def pick_class(self, random_state=None):
        if self.current_ is None or self.correct_ >= self.patience:
            self.current_, self.correct_ = int(check_random_state(random_state).choice(self.classes_)), 0
        return self.current_

    def observe(self, label, failure):
        self.correct_ += not failure
