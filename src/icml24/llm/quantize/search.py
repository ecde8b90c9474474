"""The offline threshold optimization of BiE (paper contribution 3): per layer, the outlier threshold that minimises
the layer-output error on calibration inputs, found by Bayesian optimization (optuna's TPE) or, for comparison, a grid.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import torch

from icml24._random import seed_int, spawn
from icml24._validation import check_positive

METHODS = ("bayes", "grid")


def layer_output_mse(x: torch.Tensor, weight: torch.Tensor, act_format=None, weight_format=None,
                     reference: torch.Tensor | None = None) -> float:
    """Mean squared error of ``Q_a(x) @ Q_w(W).T`` against ``x @ W.T`` (the bias cancels)."""
    y = x @ weight.T if reference is None else reference
    xq = x if act_format is None else act_format.quantize(x)
    wq = weight if weight_format is None else weight_format.quantize(weight)
    return float(((y - xq @ wq.T) ** 2).mean())


def minimize_threshold(objective: Callable[[float], float], method: str = "bayes", n_trials: int = 12,
                       low: float = 1 / 64, high: float = 1.0, random_state=None,
                       start: float | None = 0.5) -> tuple[float, float, int]:
    """Minimise ``objective(threshold)`` over ``[low, high]`` (log scale).

    ``"bayes"``: optuna's TPE sampler (a sequential model-based, i.e. Bayesian, optimizer), seeded, first trying
    ``start`` (so the result is never worse than that default); ``"grid"``: ``n_trials`` log-spaced points.
    ``random_state`` (None, an int or a numpy Generator) seeds TPE.

    Returns:
        (best threshold, best objective value, evaluations).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not 0 < low < high <= 1:
        raise ValueError(f"need 0 < low < high <= 1, got low={low}, high={high}")
    check_positive("n_trials", n_trials)
    if method == "grid":
        grid = np.exp(np.linspace(math.log(low), math.log(high), int(n_trials)))
        values = [objective(float(t)) for t in grid]
        best = int(np.argmin(values))
        return float(grid[best]), float(values[best]), len(grid)
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=seed_int(random_state), n_startup_trials=min(4, int(n_trials)))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    if start is not None:
        study.enqueue_trial({"threshold": float(min(max(start, low), high))})
    study.optimize(lambda trial: objective(trial.suggest_float("threshold", low, high, log=True)),
                   n_trials=int(n_trials))
    return float(study.best_params["threshold"]), float(study.best_value), len(study.trials)


def search_layer(x: torch.Tensor, weight: torch.Tensor, act_format=None, weight_format=None, method: str = "bayes",
                 n_trials: int = 12, low: float = 1 / 64, high: float = 1.0, random_state=None,
                 max_rows: int = 256) -> dict[str, float]:
    """Thresholds for one layer: first the weight's (inputs in float32), then the input's given the quantized weight.

    Only formats with a ``threshold`` (BiE) are searched; the others are used as they are. The weight search scores
    ``max_rows`` evenly spaced output rows (an unbiased estimate of the layer-output MSE; 0 = all rows). The two
    searches draw from independent child streams of ``random_state``.

    Returns:
        dict with ``weight_threshold``/``act_threshold`` (NaN where not searched), ``mse`` (after the search),
        ``default_mse`` (at the formats' own thresholds), ``evaluations`` and ``seconds``.
    """
    tick = time.perf_counter()
    weight_stream, act_stream = spawn(random_state, 2)
    y = x @ weight.T
    default_mse = layer_output_mse(x, weight, act_format, weight_format, reference=y)
    default_threshold = {"weight_threshold": getattr(weight_format, "threshold", math.nan),
                         "act_threshold": getattr(act_format, "threshold", math.nan)}
    out = {"weight_threshold": math.nan, "act_threshold": math.nan, "evaluations": 0.0}
    if weight_format is not None and hasattr(weight_format, "with_threshold"):
        stride = max(weight.shape[0] // max_rows, 1) if max_rows else 1
        w_rows, y_rows = weight[::stride], y[:, ::stride]
        t, _, n = minimize_threshold(lambda t: layer_output_mse(x, w_rows, None, weight_format.with_threshold(t),
                                                                reference=y_rows),
                                     method, n_trials, low, high, weight_stream, start=weight_format.threshold)
        weight_format = weight_format.with_threshold(t)
        out["weight_threshold"], out["evaluations"] = t, out["evaluations"] + n
    wq = weight if weight_format is None else weight_format.quantize(weight)
    if act_format is not None and hasattr(act_format, "with_threshold"):
        t, _, n = minimize_threshold(lambda t: layer_output_mse(x, wq, act_format.with_threshold(t), None,
                                                                reference=y),
                                     method, n_trials, low, high, act_stream, start=act_format.threshold)
        act_format = act_format.with_threshold(t)
        out["act_threshold"], out["evaluations"] = t, out["evaluations"] + n
    out["mse"] = layer_output_mse(x, wq, act_format, None, reference=y)
    if out["mse"] > default_mse:  # the two 1-D searches can miss jointly: keep the defaults then
        for key in ("weight_threshold", "act_threshold"):
            if not math.isnan(out[key]):
                out[key] = default_threshold[key]
        out["mse"] = default_mse
    out["default_mse"] = default_mse
    out["seconds"] = time.perf_counter() - tick
    return out
