"""The BiE quantization flow on any model made of ``nn.Linear`` layers: calibrate, search thresholds, replace."""

from __future__ import annotations

import math
import time
from contextlib import contextmanager

import torch
from torch import nn

from icml24._estimator import Estimator
from icml24._progress import check_progress, tracked
from icml24._random import RandomState, spawn
from icml24._validation import FittedAttributes, check_fitted

from .calibration import collect_linear_inputs, linear_layers
from .qlinear import QuantLinear, replace_linears, restore
from .search import METHODS, search_layer


def _searchable(fmt) -> bool:
    return fmt is not None and hasattr(fmt, "with_threshold")


class LinearQuantizer(FittedAttributes, Estimator):
    """Fake-quantize the weights and/or inputs of every linear layer, with per-layer BiE thresholds (paper Sec. 3.3).

    ``fit`` collects calibration inputs of every linear layer and, for each BiE format, chooses the layer's outlier
    threshold that minimises the layer-output MSE (Bayesian optimization, ``minimize_threshold``);
    ``attach`` swaps the layers for ``QuantLinear`` inside a ``with`` block and puts the originals back after.

    Args:
        weight_format (BlockFormat | None): block format of the weights (``None``: float32 weights, the
            activation-only mode).
        act_format (BlockFormat | None): block format of the layer inputs (``None``: weight-only mode).
        search (str): ``"bayes"``, ``"grid"`` or ``"none"`` (keep each format's own threshold). Default: ``"bayes"``.
        n_trials (int): threshold evaluations per searched format and layer. Default: 12.
        threshold_range (tuple[float, float]): searched interval (log scale) of the relative threshold.
        exclude (tuple[str, ...]): layers whose name contains one of these stay in float32. Default: ``("lm_head",)``.
        random_state (None, int or numpy Generator): seed of the search (each layer gets its own child stream).
            Default: 0.

    Attributes:
        layers_ (list[str]): quantized layers.
        weight_thresholds_ (dict[str, float]): chosen weight thresholds (NaN where not searched).
        act_thresholds_ (dict[str, float]): chosen activation thresholds (NaN where not searched).
        calibration_mse_ (dict[str, float]): layer-output MSE on the calibration inputs after the search.
        default_mse_ (dict[str, float]): layer-output MSE on the calibration inputs at the default threshold.
        search_seconds_ (float): the time the search took.
        evaluations_ (int): threshold evaluations the search made.
    """

    def __init__(self, weight_format=None, act_format=None, search: str = "bayes", n_trials: int = 12,
                 threshold_range: tuple[float, float] = (1 / 64, 1.0), exclude: tuple[str, ...] = ("lm_head",),
                 random_state: RandomState = None):
        self.weight_format, self.act_format = weight_format, act_format
        self.search, self.n_trials = search, n_trials
        self.threshold_range, self.exclude, self.random_state = threshold_range, exclude, random_state

    def _check_params(self) -> None:
        if self.weight_format is None and self.act_format is None:
            raise ValueError("give a weight_format, an act_format or both")
        if self.search not in (*METHODS, "none"):
            raise ValueError(f"search must be one of {(*METHODS, 'none')}, got {self.search!r}")
        low, high = self.threshold_range
        if not 0 < low < high <= 1:  # also refuses NaN
            raise ValueError(f"threshold_range needs 0 < low < high <= 1, got {self.threshold_range}")

    def fit(self, model: nn.Module, calibration_ids: torch.Tensor | None = None, progress=None) -> LinearQuantizer:
        """Calibrate on ``calibration_ids`` ([sequences, tokens]); needed only when a BiE threshold is searched.
        ``progress(done, total)`` is called after each searched layer (``icml24._progress``)."""
        self._check_params()
        layers = linear_layers(model, tuple(self.exclude))
        if not layers:
            raise ValueError("the model has no nn.Linear layer to quantize (after exclude)")
        self.layers_ = list(layers)
        nan = dict.fromkeys(self.layers_, math.nan)
        self.weight_thresholds_, self.act_thresholds_ = dict(nan), dict(nan)
        self.calibration_mse_, self.default_mse_ = dict(nan), dict(nan)
        self.search_seconds_, self.evaluations_ = 0.0, 0
        searching = self.search != "none" and (_searchable(self.weight_format) or _searchable(self.act_format))
        if not searching:
            return self
        if calibration_ids is None:
            raise ValueError("searching BiE thresholds needs calibration_ids (token ids [sequences, tokens])")
        tick = time.perf_counter()
        inputs = collect_linear_inputs(model, calibration_ids, self.layers_)
        low, high = self.threshold_range
        names = tracked(self.layers_, check_progress(progress))  # progress(done, total) after each layer
        streams = spawn(self.random_state, len(self.layers_))  # one independent stream per layer
        for name, stream in zip(names, streams):
            r = search_layer(inputs[name], layers[name].weight.detach(), self.act_format, self.weight_format,
                             self.search, self.n_trials, low, high, random_state=stream)
            self.weight_thresholds_[name], self.act_thresholds_[name] = r["weight_threshold"], r["act_threshold"]
            self.calibration_mse_[name], self.default_mse_[name] = r["mse"], r["default_mse"]
            self.evaluations_ += int(r["evaluations"])
        self.search_seconds_ = time.perf_counter() - tick
        return self

    def formats(self, name: str):
        """The (weight, act) formats of layer ``name``, with its searched thresholds."""
        check_fitted(self, "layers_")
        wf, af = self.weight_format, self.act_format
        if _searchable(wf) and not math.isnan(self.weight_thresholds_[name]):
            wf = wf.with_threshold(self.weight_thresholds_[name])
        if _searchable(af) and not math.isnan(self.act_thresholds_[name]):
            af = af.with_threshold(self.act_thresholds_[name])
        return wf, af

    @contextmanager
    def attach(self, model: nn.Module):
        """Within the ``with`` block, ``model``'s linear layers are ``QuantLinear``; restored afterwards."""
        check_fitted(self, "layers_")
        layers = linear_layers(model, self.exclude)
        missing = [n for n in self.layers_ if n not in layers]
        if missing:
            raise ValueError(f"the model lacks layers this quantizer was fitted on ({missing[:3]}...); fit it on "
                             "this model")
        originals = replace_linears(model, {n: QuantLinear(layers[n], *self.formats(n)) for n in self.layers_})
        try:
            yield model
        finally:
            restore(model, originals)
