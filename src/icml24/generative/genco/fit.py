"""How closely generated designs match the data: a classifier two-sample test (C2ST; Lopez-Paz & Oquab, 2017).

GenCO's generative loss is meant to learn the data distribution on feasible designs; a tile histogram (``zelda.py``)
sees only the global tile mix, a C2ST also sees where the tiles are. A logistic regression on one-hot cells is
trained to tell generated designs from held-out data designs; its cross-validated accuracy is 0.5 when the two
samples are indistinguishable and 1 when every design gives itself away.
"""

from __future__ import annotations

import numpy as np

from icml24._random import seed_int


def c2st_accuracy(generated: np.ndarray, reference: np.ndarray, random_state=None, folds: int = 5) -> float:
    """Cross-validated accuracy of a logistic regression telling ``generated`` from ``reference`` designs.

    Both are integer arrays (N, ...) of tile indices (or any categorical cells); each is one-hot encoded per cell.
    The larger sample is cut to the smaller one's size (balanced classes, so chance is 0.5); ``folds``-fold
    stratified cross-validation, shuffled by ``random_state`` (None, an int or a numpy Generator).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    a, b = np.asarray(generated), np.asarray(reference)
    if a.shape[1:] != b.shape[1:]:
        raise ValueError(f"generated designs {a.shape[1:]} and reference designs {b.shape[1:]} differ in shape")
    if not (np.issubdtype(a.dtype, np.integer) and np.issubdtype(b.dtype, np.integer)):
        raise ValueError("designs must be integer tile indices (argmax the one-hot designs first)")
    n = min(len(a), len(b))
    if n < folds:
        raise ValueError(f"a {folds}-fold two-sample test needs >= {folds} designs per sample, got {n}")
    cells = np.concatenate([a[:n], b[:n]]).reshape(2 * n, -1)
    tiles = int(cells.max()) + 1
    features = np.eye(tiles)[cells].reshape(2 * n, -1)  # one-hot per cell
    labels = np.r_[np.ones(n), np.zeros(n)]
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed_int(random_state))
    scores = cross_val_score(LogisticRegression(C=1.0, max_iter=2000), features, labels, cv=split)
    return float(np.mean(scores))
