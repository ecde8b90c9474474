"""icml24.graph: methods (no printing, no file I/O beyond what the caller asks)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("graph")  # the modules of icml24[graph] are installed, or an ImportError names the extra

# exported name -> submodule that defines it; each method adds its own line(s)
_EXPORTS: dict[str, str] = {
    # shared operators, models and training
    "normalized_adjacency": ".operators",
    "gcn_propagate": ".operators",
    "normalize_features": ".operators",
    "sparse_features": ".operators",
    "GCN": ".nn",
    "GAT": ".nn",
    "MLP": ".nn",
    "fit_node_classifier": ".training",
    "TrainingResult": ".training",
    "forked_rng": ".training",
    # RP (Yang et al.)
    "ResidualPropagation": ".rp",
    "GeneralizedRP": ".rp",
    "centered_kernel_alignment": ".alignment",
    "empirical_ntk": ".alignment",
    "graph_kernel": ".alignment",
    "TwoLayerGCN": ".alignment",
    "AlignmentTracker": ".alignment",
    "track_gcn_alignment": ".alignment",
    # collective certificate (Lai et al.)
    "NodeAwareSmoothing": ".certify",
    "CollectiveCertificate": ".certify",
    "samplewise_certified": ".certify",
    "samplewise_radius": ".certify",
    "clopper_pearson": ".certify",
    "top_two": ".certify",
    "smoothed_votes": ".certify",
    "flip_weights": ".certify",
    "path_costs": ".certify",
    "path_cost": ".certify",
    "RowNormalizedGCN": ".certify",
    "lp1": ".certify",
    "lp2": ".certify",
    "lp2_reduced": ".certify",
    "attack_all_injections": ".certify",
    "bqclp_conditions": ".certify.bruteforce",
    # GDEM (Liu et al.)
    "GDEM": ".distill",
    "herding_coreset": ".distill",
    "random_coreset": ".distill",
    "prepare_real_graph": ".distill",
    "synthetic_label_counts": ".distill",
    "train_on_synthetic": ".distill",
    "train_on_whole_graph": ".distill",
    "laplacian_eigenpairs": ".distill",
    "select_gdem": ".distill",
    "GCond": ".distill",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
