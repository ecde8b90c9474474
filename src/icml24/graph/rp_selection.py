"""Validation-based choice of Generalized RP's hyperparameters, for graphs without an official configuration."""

from __future__ import annotations

import itertools
import warnings

# A small grid around the official settings (Cora: k 3, gamma 1, lr 10; CiteSeer: k 3, gamma 20, lr 10):
# even and odd propagation depths, narrow to wide kernels, and a smaller step size.
SELECTION_GRID: dict[str, list] = {"k": [2, 3, 4], "gamma": [1.0, 5.0, 20.0], "lr": [1.0, 10.0]}


def select_on_validation(cls, data, grid: dict[str, list] | None = None, **fixed):
    """Fit ``cls(**fixed, **point)`` for every point of ``grid`` and keep the best validation accuracy (ties: the
    first point in grid order). Candidates' warnings (a poor point below the majority class) are collected into
    ``selection_`` instead of being raised; the chosen model's own warnings are raised again."""
    grid = grid or SELECTION_GRID
    unknown = set(grid) - {"k", "gamma", "lr", "alpha", "steps"}
    if unknown:
        raise ValueError(f"grid names unknown hyperparameters {sorted(unknown)}; use k, gamma, lr, alpha, steps")
    if getattr(data, "val_mask", None) is None or not bool(data.val_mask.any()):
        raise ValueError("select needs data.val_mask (validation nodes) to choose on; add a validation split")
    names = list(grid)
    table, best, best_score = [], None, -1.0
    for values in itertools.product(*(grid[name] for name in names)):
        point = dict(zip(names, values))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = cls(**{**fixed, **point}).fit(data)
        table.append({**point, "val_accuracy": model.best_val_accuracy_, "warnings": [str(w.message) for w in caught]})
        if model.best_val_accuracy_ > best_score:
            best, best_score = model, model.best_val_accuracy_
    best.selection_ = table
    for message in table[[row["val_accuracy"] for row in table].index(best_score)]["warnings"]:
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    return best
