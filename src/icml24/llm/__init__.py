"""icml24.llm: methods (no printing, no file I/O beyond what the caller asks)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("llm")  # the modules of icml24[llm] are installed, or an ImportError names the extra

# exported name -> submodule that defines it; each method adds its own line(s)
_EXPORTS: dict[str, str] = {
    "ACT": ".act",
    "AttentionCalibration": ".act",
    "HeadSearch": ".act",
    "PrefixCache": ".act",
    "attention_maps": ".act",
    "calibrate_attention": ".act",
    "detect_sinks": ".act",
    "hidden_sink_frequency": ".act",
    "hidden_sinks": ".act",
    "plot_attention_sinks": ".act",
    "sink_scores": ".act",
    "EncodedBatch": ".tasks",
    "LabelWordTask": ".tasks",
    "TASK_NAMES": ".tasks",
    "encode_task": ".tasks",
    "label_word_accuracy": ".tasks",
    "label_word_predictions": ".tasks",
    "load_task": ".tasks",
    # BiE block formats and the quantization flow (formats/, quantize/)
    "BFPFormat": ".formats", "BiEFormat": ".formats", "BlockFormat": ".formats", "IntFormat": ".formats",
    "MXFormat": ".formats", "Packed": ".formats",
    "LinearQuantizer": ".quantize", "QuantLinear": ".quantize", "channel_ratio": ".quantize",
    "collect_linear_inputs": ".quantize", "exponent_bimodality": ".quantize", "flushed_share": ".quantize",
    "kurtosis": ".quantize", "layer_output_mse": ".quantize", "linear_layers": ".quantize",
    "minimize_threshold": ".quantize", "outlier_share": ".quantize", "perplexity": ".quantize",
    "search_layer": ".quantize", "sqnr_db": ".quantize", "block_outlier_share": ".quantize",
    "perplexity_ratio_ci": ".quantize", "window_nll": ".quantize",
    # Evolving Subnetwork Training (est/)
    "GPT": ".est",
    "EvolvingSubnetworkSchedule": ".est",
    "EvolvingSubnetworkTrainer": ".est",
    "GPTConfig": ".est",
    "Stage": ".est",
    "Subnetwork": ".est",
    "SubnetworkSampler": ".est",
    "fit_lockstep": ".est",
    "layer_forward_flops": ".est",
    "measured_flops": ".est",
    "schedule_flops": ".est",
    "subnetwork_flops": ".est",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
