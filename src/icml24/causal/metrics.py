"""Structure metrics between a true DAG and an estimated CPDAG (0/1 adjacency, see ``graphs``).

- ``skeleton_f1``: F1 of the estimated adjacencies against the true ones (the official evaluation).
- ``arrow_f1``: F1 of the estimated directed edges against the directed edges of the true CPDAG (only the
  equivalence class is identifiable, so compelled arrows are the target).
- ``normalized_shd``: cdt's SHD with ``double_for_anticausal=True`` (sum of |true - estimate| over entries, so a
  reversed edge counts 2 and an undirected one on a true edge counts 1) divided by d (d - 1), as the paper.
"""

from __future__ import annotations

import numpy as np

from .graphs import dag_to_cpdag, directed, skeleton


def _f1(true: np.ndarray, est: np.ndarray) -> float:
    tp = float(np.sum(true & est))
    fp = float(np.sum(~true & est))
    fn = float(np.sum(true & ~est))
    if tp == 0:
        return 1.0 if fp == 0 and fn == 0 else 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


def _check(true_dag, estimate) -> tuple[np.ndarray, np.ndarray]:
    true_dag, estimate = np.asarray(true_dag) != 0, np.asarray(estimate) != 0
    if true_dag.shape != estimate.shape or true_dag.ndim != 2 or true_dag.shape[0] != true_dag.shape[1]:
        raise ValueError(f"need two square adjacency matrices of one size, got {true_dag.shape} and {estimate.shape}")
    return true_dag, estimate


def skeleton_f1(true_dag: np.ndarray, estimate: np.ndarray) -> float:
    """F1 of adjacencies (each unordered pair once); 1.0 when both graphs are empty."""
    true_dag, estimate = _check(true_dag, estimate)
    upper = np.triu(np.ones(true_dag.shape, dtype=bool), k=1)
    return _f1(skeleton(true_dag)[upper], skeleton(estimate)[upper])


def arrow_f1(true_dag: np.ndarray, estimate: np.ndarray) -> float:
    """F1 of directed edges of the estimate against the directed (compelled) edges of the true CPDAG."""
    true_dag, estimate = _check(true_dag, estimate)
    return _f1(directed(dag_to_cpdag(true_dag)).ravel(), directed(estimate).ravel())


def normalized_shd(true_dag: np.ndarray, estimate: np.ndarray) -> float:
    """cdt SHD(double_for_anticausal=True) / (d (d - 1))."""
    true_dag, estimate = _check(true_dag, estimate)
    d = true_dag.shape[0]
    return float(np.abs(true_dag.astype(int) - estimate.astype(int)).sum()) / (d * (d - 1))
