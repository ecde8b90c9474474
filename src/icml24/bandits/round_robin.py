"""Uniform round-robin: the non-adaptive policy that pulls every arm equally often, whatever it observes."""

from __future__ import annotations

import numpy as np

from .batched import BatchedPolicy


class RoundRobin(BatchedPolicy):
    """Pull every arm equally often, one arm after another, in a single batch of the whole horizon.

    It never looks at a reward, so its regret is ``T`` times the mean gap: linear in ``T`` (the null of a claim
    that a policy's regret grows like ``log T``). When ``K`` does not divide the horizon, the ``T mod K`` extra
    pulls go to arms drawn at random, so no arm is favoured by its index. One batch in all.
    """

    def next_batch(self, remaining: int) -> np.ndarray:
        num_arms = self.arms_.shape[0]
        counts = np.full(num_arms, remaining // num_arms, dtype=np.int64)
        counts[self.rng_.permutation(num_arms)[:remaining % num_arms]] += 1
        return counts

    def pull_order(self, counts: np.ndarray) -> np.ndarray:
        """Arms in turn (0, 1, ..., K-1, 0, 1, ...), an arm whose pulls are used up skipped."""
        arms = np.repeat(np.arange(counts.shape[0]), counts)
        turns = np.concatenate([np.arange(c) for c in counts])
        return arms[np.lexsort((arms, turns))]

    def __repr__(self) -> str:
        return "RoundRobin()"
