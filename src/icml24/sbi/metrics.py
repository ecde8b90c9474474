"""Classifier two-sample test (C2ST), the SBI benchmark metric (Lopez-Paz & Oquab, 2017; Lueckmann et al., 2021).

``sbi.utils.metrics.c2st`` computes it: z-score both sample sets with the mean and std of ``X``, label ``X`` 0 and
``Y`` 1, and report the mean accuracy of a classifier over a shuffled ``n_folds``-fold cross-validation (random
forest with scikit-learn defaults, or sbi's MLP). 0.5 means indistinguishable, 1.0 means disjoint. This wrapper
validates the inputs (shapes, NaN) and exposes the MLP's early-stopping patience.
"""

from __future__ import annotations

import numpy as np
import torch
from sbi.utils.metrics import c2st as _sbi_c2st

from icml24._random import seed_int
from icml24._validation import check_finite, check_positive_int


def c2st(X, Y, random_state=None, n_folds: int = 5, classifier: str = "rf", z_score: bool = True,
         mlp_patience: int = 50) -> float:
    """C2ST accuracy between samples ``X: [n, d]`` and ``Y: [m, d]`` (sbi's ``c2st``).

    Args:
        X, Y: arrays or tensors of samples with the same number of columns.
        random_state: classifier and fold-shuffling seed (sbi uses 1; None: a fresh one): an int is passed as
            is; a numpy or torch Generator gives one int draw (``icml24._random.seed_int``).
        n_folds: cross-validation folds (default 5).
        classifier: ``"rf"`` (RandomForestClassifier, sklearn defaults) or ``"mlp"`` (sbi's: two hidden layers of
            ``10 d`` ReLU units, adam, early stopping).
        z_score: standardize with ``X``'s mean and std (features with std < 1e-14 use std 1).
        mlp_patience: the MLP's early-stopping patience in epochs (default 50, sbi's; 10, scikit-learn's default,
            is about 5x cheaper in 10 dimensions).

    Returns:
        float: mean held-out accuracy.
    """
    X = torch.as_tensor(np.asarray(X) if not isinstance(X, torch.Tensor) else X, dtype=torch.float32)
    Y = torch.as_tensor(np.asarray(Y) if not isinstance(Y, torch.Tensor) else Y, dtype=torch.float32)
    if X.dim() != 2 or Y.dim() != 2 or X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must be [n, d] with the same d, got {tuple(X.shape)} and {tuple(Y.shape)}")
    check_finite("X", X)
    check_finite("Y", Y)
    check_positive_int("mlp_patience", mlp_patience)
    seed = seed_int(random_state)  # sbi's c2st takes an int (None: a fresh one)
    if classifier == "rf":
        kwargs = None  # scikit-learn's defaults
    elif classifier == "mlp":
        width = 10 * X.shape[1]  # sbi's MLP, with the patience made explicit
        kwargs = {"activation": "relu", "hidden_layer_sizes": (width, width), "max_iter": 1000, "solver": "adam",
                  "early_stopping": True, "n_iter_no_change": mlp_patience}
    else:
        raise ValueError(f"classifier must be 'rf' or 'mlp', got {classifier!r}")
    return float(_sbi_c2st(X, Y, seed=seed, n_folds=n_folds, classifier=classifier, classifier_kwargs=kwargs,
                           z_score=z_score))
