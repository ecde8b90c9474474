"""Graph distillation: GDEM (Liu, Bo & Shi, ICML 2024), the GCond and coreset baselines, the distilled-graph
evaluation and validation-based selection of GDEM's hyper-parameters."""

from .coresets import herding_coreset, induced_coreset, random_coreset
from .gcond import GCond, gradient_distance
from .gdem import GDEM
from .initialization import synthetic_label_counts, synthetic_labels
from .losses import discrimination_loss, eigenbasis_matching_loss, eigenbasis_matching_loss_naive, orthogonality_loss
from .selection import select_gdem
from .spectral import (
    LaplacianSpectrum,
    default_cache_dir,
    laplacian_eigenpairs,
    largest_connected_component,
    select_eigenpairs,
)
from .structure import PairwiseStructure, normalize_dense_adjacency
from .training import prepare_real_graph, train_on_synthetic, train_on_whole_graph

__all__ = ["GCond", "GDEM", "LaplacianSpectrum", "PairwiseStructure", "default_cache_dir", "discrimination_loss",
           "eigenbasis_matching_loss", "eigenbasis_matching_loss_naive", "gradient_distance", "herding_coreset",
           "induced_coreset", "laplacian_eigenpairs", "largest_connected_component", "normalize_dense_adjacency",
           "orthogonality_loss", "prepare_real_graph", "random_coreset", "select_eigenpairs", "select_gdem",
           "synthetic_label_counts", "synthetic_labels", "train_on_synthetic", "train_on_whole_graph"]
