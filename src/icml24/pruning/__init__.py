"""icml24.pruning: sparse networks and pruning algorithms (Zhang et al., "Sparsest Models Elude Pruning", ICML 2024)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("pruning")  # the modules of icml24[pruning] are installed, or an ImportError names the extra

# exported name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    "cubist_spiral": ".spiral",
    "spiral_vertices": ".spiral",
    "spiral_validation": ".spiral",
    "BatchedMaskedMLP": ".masked_mlp",
    "train_batched": ".masked_mlp",
    "lr_at": ".masked_mlp",
    "check_eligible": ".masks",
    "is_eligible": ".masks",
    "eligible_masks": ".masks",
    "count_eligible": ".masks",
    "dead_path_counts": ".masks",
    "CombinatorialSearch": ".search",
    "minimal_widths": ".search",
    "candidate_masks": ".search",
    "search_space_size": ".search",
    "neuron_masks": ".search",
    "keep_top": ".criteria",
    "global_magnitude": ".criteria",
    "snip": ".criteria",
    "snip_scores": ".criteria",
    "iterative_snip": ".criteria",
    "force": ".criteria",
    "grasp": ".criteria",
    "grasp_scores": ".criteria",
    "per_class": ".criteria",
    "synflow": ".criteria",
    "GradualMagnitude": ".schedules",
    "cubic_nnz": ".schedules",
    "geometric_nnz": ".schedules",
    "prospr": ".prospect",
    "prospr_scores": ".prospect",
    "RigL": ".rigl",
    "erk_counts": ".rigl",
    "rigl_update": ".rigl",
    "drop_fraction": ".rigl",
    "PrunerComparison": ".pruners",
    "at_init_masks": ".pruners",
    "METHODS": ".pruners",
    "AT_INIT": ".pruners",
    "OFFICIAL_GRID": ".pruners",
    "PerNetworkSGD": ".masked_mlp",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
