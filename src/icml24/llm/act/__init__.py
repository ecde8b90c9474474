"""ACT: hidden attention sinks and training-free attention calibration (Yu et al., ICML 2024).

- ``sinks``: ``col_j`` scores, sink detection, calibration of one map (pure tensor code).
- ``apply``: ``ACT`` attaches calibration to chosen heads via transformers' AttentionInterface.
- ``search``: ``HeadSearch``, the offline head filtering.
- ``analysis``: where sinks occur, and attention-map figures.
"""

from .analysis import attention_maps, hidden_sink_frequency, hidden_sinks, plot_attention_sinks
from .apply import ACT, act_attention_forward, attention_modules, normalize_heads
from .search import HeadSearch, PrefixCache
from .sinks import AttentionCalibration, calibrate_attention, causal_allowed, detect_sinks, sink_scores

__all__ = [
    "ACT",
    "AttentionCalibration",
    "HeadSearch",
    "PrefixCache",
    "act_attention_forward",
    "attention_maps",
    "attention_modules",
    "calibrate_attention",
    "causal_allowed",
    "detect_sinks",
    "hidden_sink_frequency",
    "hidden_sinks",
    "normalize_heads",
    "plot_attention_sinks",
    "sink_scores",
]
