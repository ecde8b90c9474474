"""The failure landscape: what an exploration says about each action, and the paper's 3-D plot.

From the roll-outs of a trained agent (5000 episodes in the paper): per-action visit and failure counts, the mean
and std over states of softmax(Q) (the plot's colour and, through the rank of log std, its marker size) and the
"uncertain" actions, visited at most ``mean - 2 std`` times (red squares).
"""

from __future__ import annotations

import numpy as np

from icml24._estimator import Estimator
from icml24._validation import FittedAttributes, check_finite

from .concepts import ConceptGrid
from .result import ExplorationResult


class FailureLandscape(FittedAttributes, Estimator):
    """Landscape of one exploration over ``grid``; ``fit(result)`` sets the trailing-underscore statistics."""

    def __init__(self, grid: ConceptGrid):
        self.grid = grid

    def fit(self, result: ExplorationResult) -> FailureLandscape:
        if not isinstance(result, ExplorationResult):
            raise TypeError(f"fit takes the ExplorationResult of an explorer, got {type(result).__name__}")
        n = self.grid.num_actions
        if len(result.actions) and (result.actions.min() < 0 or result.actions.max() >= n):
            raise ValueError(f"result has actions outside [0, {n}); was it explored on another grid?")
        self.counts_ = np.bincount(result.actions, minlength=n).astype(float)
        self.failure_counts_ = np.bincount(result.actions[result.failures], minlength=n).astype(float)
        self.failure_rates_ = self.failure_counts_ / np.maximum(self.counts_, 1)
        self.uncertain_ = self.counts_ <= self.counts_.mean() - 2 * self.counts_.std()
        if result.q_softmax is not None:
            q = check_finite("q_softmax", np.asarray(result.q_softmax, dtype=float))
            if q.ndim != 2 or q.shape[1] != n:
                raise ValueError(f"q_softmax must be [episodes, {n}], got {q.shape}")
            self.q_mean_ = q.mean(axis=0)
            self.q_std_ = q.std(axis=0, ddof=1) if len(q) > 1 else np.zeros(n)
            self.q_std_rank_ = np.argsort(np.argsort(np.log(self.q_std_ + 1e-12))) + 1.0
        else:
            self.q_mean_ = self.q_std_ = self.q_std_rank_ = None
        return self

    def ranking(self) -> np.ndarray:
        """Actions from most to least failures found (ties: higher failure rate, then lower index)."""
        n = self.grid.num_actions
        return np.lexsort((np.arange(n), -self.failure_rates_, -self.failure_counts_))

    def top_actions(self, k: int) -> np.ndarray:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        return self.ranking()[:k]

    def precision_at_k(self, true_rates: np.ndarray, k: int = 10) -> float:
        """Fraction of this landscape's top-``k`` actions among the ground truth's top-``k`` (ties at the k-th true
        rate count as top-``k``)."""
        n = self.grid.num_actions
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
            raise ValueError(f"k must be an integer in [1, {n}] (the number of top actions compared), got {k!r}")
        true_rates = np.asarray(true_rates, dtype=float)
        check_finite("true_rates", true_rates)
        if true_rates.shape != (self.grid.num_actions,):
            raise ValueError(f"true_rates must have one rate per action ({self.grid.num_actions}), got "
                             f"{true_rates.shape}")
        cutoff = np.sort(true_rates)[::-1][k - 1]
        return float(np.mean(true_rates[self.top_actions(k)] >= cutoff - 1e-12))

    def failure_distribution(self) -> np.ndarray:
        """Failures found, normalized over actions (uniform where none was found)."""
        total = self.failure_counts_.sum()
        n = self.grid.num_actions
        return self.failure_counts_ / total if total > 0 else np.full(n, 1.0 / n)

    def plot(self, ax=None, title: str = "failure landscape"):
        """The paper's 3-D scatter over the first three concepts' level indices: colour log mean softmax(Q) (or the
        failure rate without Q), size the rank of log std, uncertain actions as red squares."""
        import matplotlib.pyplot as plt

        if self.grid.num_concepts < 3:
            raise ValueError("the 3-D landscape plot needs three concepts")
        if ax is None:
            fig = plt.figure(figsize=(6, 5))
            ax = fig.add_subplot(projection="3d")
        xyz = self.grid.coordinates[:, :3]
        colour = np.log(self.q_mean_) if self.q_mean_ is not None else self.failure_rates_
        size = self.q_std_rank_ / 2 * 4 if self.q_std_rank_ is not None else 10 + 80 * self.failure_rates_
        certain = ~self.uncertain_
        points = ax.scatter(*xyz[certain].T, c=colour[certain], s=size[certain], cmap="viridis",
                            edgecolors="black", linewidths=0.3)
        if self.uncertain_.any():
            ax.scatter(*xyz[self.uncertain_].T, c="red", marker="s", s=40, label="uncertain")
            ax.legend(fontsize=7)
        names = self.grid.names
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
        ax.set_zlabel(names[2])
        ax.set_title(title, fontsize=9)
        ax.figure.colorbar(points, ax=ax, shrink=0.6,
                           label="log mean softmax(Q)" if self.q_mean_ is not None else "failure rate")
        return ax


def landscape_distance(a: np.ndarray, b: np.ndarray, grid: ConceptGrid) -> float:
    """Wasserstein-1 distance between two distributions over actions (e.g. ``failure_distribution()`` before and
    after restructuring), with the ground metric the Euclidean distance between level coordinates."""
    from scipy.stats import wasserstein_distance_nd

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != (grid.num_actions,) or b.shape != a.shape:
        raise ValueError(f"both distributions need one weight per action ({grid.num_actions}), got {a.shape} and "
                         f"{b.shape}")
    if (a < 0).any() or (b < 0).any() or a.sum() <= 0 or b.sum() <= 0:
        raise ValueError("distributions must be non-negative with positive mass")
    coords = grid.coordinates.astype(float)
    return float(wasserstein_distance_nd(coords, coords, a / a.sum(), b / b.sum()))


def value_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The official ``Utils/plots.py`` shift: 1-D Wasserstein distance between two sets of values (the mean softmax
    Q of every action before and after); ``a`` and ``b`` must be non-empty and finite."""
    from scipy.stats import wasserstein_distance

    a, b = np.ravel(np.asarray(a, dtype=float)), np.ravel(np.asarray(b, dtype=float))
    for name, values in (("a", a), ("b", b)):
        if values.size == 0:
            raise ValueError(f"{name} is empty; value_distance needs at least one value on each side")
        check_finite(name, values)
    return float(wasserstein_distance(a, b))
