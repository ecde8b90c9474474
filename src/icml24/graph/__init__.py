"""icml24.graph: methods (no printing, no file I/O beyond what the caller asks)."""

from icml24._lazy import lazy_exports

# exported name -> submodule that defines it; each method adds its own line(s)
_EXPORTS: dict[str, str] = {
    "ResidualPropagation": ".rp",
    "GeneralizedRP": ".rp",
    "normalized_adjacency": ".operators",
    "centered_kernel_alignment": ".alignment",
    "empirical_ntk": ".alignment",
    "graph_kernel": ".alignment",
    "TwoLayerGCN": ".alignment",
    "AlignmentTracker": ".alignment",
    "track_gcn_alignment": ".alignment",
    "NodeAwareSmoothing": ".certify",
    "CollectiveCertificate": ".certify",
    "samplewise_certified": ".certify",
    "clopper_pearson": ".certify",
    "GDEM": ".distill",
    "herding_coreset": ".distill",
    "random_coreset": ".distill",
    "train_on_synthetic": ".distill",
    "train_on_whole_graph": ".distill",
    "laplacian_eigenpairs": ".distill",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
