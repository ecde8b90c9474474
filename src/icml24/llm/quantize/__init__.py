"""The BiE quantization flow (Zou et al., ICML 2024) for any model made of ``nn.Linear`` layers.

- ``calibration``: linear layers and their calibration inputs.
- ``qlinear``: ``QuantLinear`` and module replacement.
- ``search``: per-layer threshold search (Bayesian optimization or grid).
- ``quantizer``: ``LinearQuantizer``, the whole flow.
- ``stats``: SQNR, kurtosis, outlier shares, flushed share, bimodality, perplexity (per
  window, and the bootstrap interval of a ratio).
"""

from .calibration import collect_linear_inputs, linear_layers
from .qlinear import QuantLinear, replace_linears, restore
from .quantizer import LinearQuantizer
from .search import layer_output_mse, minimize_threshold, search_layer
from .stats import (
    block_outlier_share,
    channel_ratio,
    exponent_bimodality,
    flushed_share,
    kurtosis,
    outlier_share,
    perplexity,
    perplexity_ratio_ci,
    sqnr_db,
    window_nll,
)

__all__ = ["LinearQuantizer", "QuantLinear", "block_outlier_share", "channel_ratio", "collect_linear_inputs",
           "exponent_bimodality", "flushed_share", "kurtosis", "layer_output_mse", "linear_layers",
           "minimize_threshold", "outlier_share", "perplexity", "perplexity_ratio_ci", "replace_linears", "restore",
           "search_layer", "sqnr_db", "window_nll"]
