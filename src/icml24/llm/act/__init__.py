"""ACT: hidden attention sinks and training-free attention calibration (Yu et al., ICML 2024)."""

from icml24.llm.act.apply import ACT, act_attention_forward, attention_modules, normalize_heads
from icml24.llm.act.sinks import AttentionCalibration, calibrate_attention, causal_allowed, detect_sinks, sink_scores

__all__ = [
    "ACT",
    "AttentionCalibration",
    "act_attention_forward",
    "attention_modules",
    "calibrate_attention",
    "causal_allowed",
    "detect_sinks",
    "normalize_heads",
    "sink_scores",
]
