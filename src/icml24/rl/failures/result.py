"""What an explorer leaves behind: one row per query of the model under test."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ExplorationResult:
    """``actions [q]``, ``failures [q]`` (bool), ``rewards [q]`` of ``q`` queries; ``q_softmax [e, A]`` (the DQN's
    softmax of Q at each roll-out episode's start state) where the explorer has one."""

    actions: np.ndarray
    failures: np.ndarray
    rewards: np.ndarray
    q_softmax: np.ndarray | None = None

    def __post_init__(self):
        self.actions = np.asarray(self.actions, dtype=np.int64)
        self.failures = np.asarray(self.failures, dtype=bool)
        self.rewards = np.asarray(self.rewards, dtype=np.float64)
        if not len(self.actions) == len(self.failures) == len(self.rewards):
            raise ValueError(f"actions, failures and rewards need one entry per query, got {len(self.actions)}, "
                             f"{len(self.failures)} and {len(self.rewards)}")

    @property
    def num_queries(self) -> int:
        return int(len(self.actions))

    @property
    def failures_per_query(self) -> float:
        return float(self.failures.mean()) if len(self.failures) else 0.0

    @property
    def distinct_failure_actions(self) -> int:
        """How many different actions produced at least one failure (coverage of the landscape)."""
        return int(len(np.unique(self.actions[self.failures])))

    def __add__(self, other: ExplorationResult) -> ExplorationResult:
        q = None
        if self.q_softmax is not None or other.q_softmax is not None:
            q = np.concatenate([r for r in (self.q_softmax, other.q_softmax) if r is not None])
        return ExplorationResult(np.concatenate([self.actions, other.actions]),
                                 np.concatenate([self.failures, other.failures]),
                                 np.concatenate([self.rewards, other.rewards]), q)
