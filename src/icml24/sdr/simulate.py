"""The single-index models of the paper's simulations (official ``run_hcsdr.R``): ``y = f(X beta) + eps``.

``n = 400``, ``p = 10``, ``X ~ N(0, I_p)``, ``eps ~ N(0, 0.2^2)``. Each model has its own true direction, as in the
official script (scenario ``k`` takes ``beta1, beta2, beta1, beta3``):

======================  ================================  =========================  ===========================
model                   link ``f(t)``                     sparse ``beta``            dense ``beta`` (unit length)
======================  ================================  =========================  ===========================
``linear``              ``t``                             ``(1_5, 0_5)``             ``1_10``
``quadratic``           ``t^2``                           ``(1, -1, 0_8)``           ``(1,1,1,-1,-1,-1,-1,1,1,-1)``
``exponential``         ``exp(t)``                        ``(1_5, 0_5)``             ``1_10``
``sine``                ``5 sin(t)``                      ``(1, 1, 0_8)``            ``(3,-1,4,-2,-4,5,1,-3,-5,2)``
======================  ================================  =========================  ===========================

The official script leaves the sparse ``beta`` unnormalized (so ``Var(X beta) = 5`` or ``2``) and normalizes the
dense ones; ``normalize_sparse=True`` puts the sparse ones on the unit sphere too.
"""

from __future__ import annotations

import numpy as np

from icml24._random import check_random_state

MODELS = ("linear", "quadratic", "exponential", "sine")
DESIGNS = ("gaussian", "t3")
_LINKS = {"linear": lambda t: t, "quadratic": lambda t: t ** 2, "exponential": np.exp,
          "sine": lambda t: 5.0 * np.sin(t)}
_SPARSE = {"a": [1, 1, 1, 1, 1, 0, 0, 0, 0, 0], "b": [1, -1, 0, 0, 0, 0, 0, 0, 0, 0],
           "c": [1, 1, 0, 0, 0, 0, 0, 0, 0, 0]}
_DENSE = {"a": [1] * 10, "b": [1, 1, 1, -1, -1, -1, -1, 1, 1, -1], "c": [3, -1, 4, -2, -4, 5, 1, -3, -5, 2]}
_WHICH = {"linear": "a", "quadratic": "b", "exponential": "a", "sine": "c"}


def true_direction(model: str, sparse: bool = True, normalize_sparse: bool = False) -> np.ndarray:
    """The ``beta [10]`` that generates ``model``'s response (the official pairing of models and betas)."""
    if model not in _LINKS:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
    beta = np.asarray((_SPARSE if sparse else _DENSE)[_WHICH[model]], dtype=np.float64)
    return beta / np.linalg.norm(beta) if (not sparse or normalize_sparse) else beta


def single_index_data(model: str, random_state=None, n: int = 400, sparse: bool = True,
                      noise: float = 0.2, normalize_sparse: bool = False, design: str = "gaussian"
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X [n, 10], y [n], beta [10])`` of one replicate of ``model``.

    ``design``: ``"gaussian"`` (X ~ N(0, I), the official scripts) or ``"t3"``, a heavy-tailed design of i.i.d.
    Student-t(3) entries scaled to unit variance (our reading of the paper's heavy-tailed settings; not elliptical,
    so the linearity and constant-variance conditions of SIR, SAVE and DR fail)."""
    rng = check_random_state(random_state)
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {', '.join(DESIGNS)}, got {design!r}")
    beta = true_direction(model, sparse, normalize_sparse)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 3:
        raise ValueError(f"n must be an integer >= 3, got {n!r}")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite standard deviation >= 0, got {noise!r}")
    X = (rng.standard_normal((n, beta.shape[0])) if design == "gaussian"
         else rng.standard_t(3, size=(n, beta.shape[0])) / np.sqrt(3.0))
    y = _LINKS[model](X @ beta) + noise * rng.standard_normal(n)
    return X, y, beta


def signal_to_noise(model: str, sparse: bool = True, noise: float = 0.2, normalize_sparse: bool = False) -> float:
    """``Var f(X beta) / Var eps`` in closed form (``X beta ~ N(0, s^2)``): the regime of a model."""
    beta = true_direction(model, sparse, normalize_sparse)
    s2 = float(beta @ beta)
    variance = {"linear": s2, "quadratic": 2 * s2 ** 2, "exponential": np.exp(2 * s2) - np.exp(s2),
                "sine": 25 * 0.5 * (1 - np.exp(-2 * s2))}[model]
    return float(variance / noise ** 2)
