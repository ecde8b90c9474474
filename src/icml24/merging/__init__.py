"""icml24.merging: methods (no printing, no file I/O beyond what the caller asks)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("merging")  # the modules of icml24[merging] are installed, or an ImportError names the extra

# exported name -> submodule that defines it; each method adds its own line(s)
_EXPORTS: dict[str, str] = {
    "StateDictLayout": ".task_vectors",
    "compute_task_vectors": ".task_vectors",
    "TaskVectors": ".task_vectors",
    "select_coefficient": ".task_vectors",
    "TaskArithmetic": ".task_arithmetic",
    "task_arithmetic_vector": ".task_arithmetic",
    "TIESMerging": ".ties",
    "ties_vector": ".ties",
    "trim_top_k": ".ties",
    "elect_sign": ".ties",
    "disjoint_merge": ".ties",
    "TALLMasks": ".tall_masks",
    "compute_tall_masks": ".tall_masks",
    "multitask_vector": ".tall_masks",
    "random_masks_like": ".tall_masks",
    "ConsensusMerging": ".consensus",
    "consensus_mask": ".consensus",
    "mask_statistics": ".consensus",
    "mask_counts": ".consensus",
    "PackedMasks": ".packed_masks",
    "CompressedCheckpoints": ".packed_masks",
    "storage_bits": ".packed_masks",
    "task_vector_statistics": ".regime",
    "evaluate_merging": ".evaluation",
    "regime_metrics": ".evaluation",
    "TEXT_TASKS": ".text_tasks",
    "TextTask": ".text_tasks",
    "text_task": ".text_tasks",
    "text_tasks": ".text_tasks",
    "load_encoder": ".text_encoder",
    "minilm_path": ".text_encoder",
    "EncoderEvaluator": ".text_encoder",
    "TextMergingSetting": ".text_setting",
    "BroadBase": ".digits",
    "SmallPretrained": ".digits",
    "build_broad_base": ".digits",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
