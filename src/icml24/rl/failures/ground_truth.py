"""Exhaustive ground truth: the failure rate of every macroscopic action over a pool of images.

With 125 actions and a few hundred 8x8 test images this is 45k forward passes, batched through the model in
chunks of whole actions: the yardstick that turns the paper's "landscape" into a measurable precision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .adapter import as_classifier
from .concepts import ConceptGrid
from .inputs import check_outputs, check_pool
from .model import failure_reward


@dataclass
class GroundTruth:
    """Per action: ``rates [A]`` (failure fraction over the pool), ``mean_reward [A]``; ``failures [A, n]`` (bool)
    and the clean accuracy of the model on the pool."""

    rates: np.ndarray
    mean_reward: np.ndarray
    failures: np.ndarray
    clean_accuracy: float

    @property
    def global_rate(self) -> float:
        """The regime: the failure rate of a uniformly random (image, action) query."""
        return float(self.rates.mean())

    def top_actions(self, k: int) -> np.ndarray:
        """The ``k`` actions with the highest failure rate (ties: lower index first)."""
        return np.lexsort((np.arange(len(self.rates)), -self.rates))[:k]


def _pool(model, images, labels):
    """The checked pool, the model as a module, its clean scores checked against the labels."""
    x, y = check_pool(images, labels)
    model = as_classifier(model)
    clean = model(x)
    check_outputs(clean, y)
    return model, x, y, float((clean.argmax(-1).numpy() == y).mean())


@torch.no_grad()
def exhaustive_failure_rates(model, images: np.ndarray, labels: np.ndarray, grid: ConceptGrid,
                             batch_size: int = 16384) -> GroundTruth:
    """Every (action, image) pair through ``model`` (a torch module or a classifier with ``predict_proba``),
    ``max(1, batch_size // n)`` actions per forward pass."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    model, x, y, clean = _pool(model, images, labels)
    n = len(x)
    per_chunk = max(1, batch_size // n)
    failures = np.zeros((grid.num_actions, n), dtype=bool)
    rewards = np.zeros((grid.num_actions, n), dtype=np.float64)
    for start in range(0, grid.num_actions, per_chunk):
        actions = np.arange(start, min(start + per_chunk, grid.num_actions))
        batch = grid.perturb_actions(x.repeat(len(actions), 1, 1), np.repeat(actions, n))
        reward, failure, _ = failure_reward(model(batch), np.tile(y, len(actions)))
        failures[actions] = failure.numpy().reshape(len(actions), n)
        rewards[actions] = reward.double().numpy().reshape(len(actions), n)
    return GroundTruth(failures.mean(axis=1), rewards.mean(axis=1), failures, clean)


@torch.no_grad()
def looped_failure_rates(model, images: np.ndarray, labels: np.ndarray, grid: ConceptGrid) -> GroundTruth:
    """The same ground truth one (image, action) query at a time, as an environment step computes it (the peer of
    the benchmark; slow)."""
    model, x, y, clean = _pool(model, images, labels)
    failures = np.zeros((grid.num_actions, len(x)), dtype=bool)
    rewards = np.zeros((grid.num_actions, len(x)), dtype=np.float64)
    for a in range(grid.num_actions):
        for i in range(len(x)):
            reward, failure, _ = failure_reward(model(grid.perturb_actions(x[i:i + 1], [a])), y[i:i + 1])
            failures[a, i], rewards[a, i] = bool(failure[0]), float(reward[0])
    return GroundTruth(failures.mean(axis=1), rewards.mean(axis=1), failures, clean)
