"""Graph distillation: GDEM (Liu, Bo & Shi, ICML 2024), coreset baselines and the distilled-graph evaluation."""

from .coresets import herding_coreset, induced_coreset, random_coreset
from .gdem import GDEM
from .initialization import synthetic_label_counts, synthetic_labels
from .losses import discrimination_loss, eigenbasis_matching_loss, eigenbasis_matching_loss_naive, orthogonality_loss
from .spectral import (
    LaplacianSpectrum,
    default_cache_dir,
    laplacian_eigenpairs,
    largest_connected_component,
    select_eigenpairs,
)
from .training import prepare_real_graph, train_on_synthetic, train_on_whole_graph

__all__ = ["GDEM", "LaplacianSpectrum", "default_cache_dir", "discrimination_loss", "eigenbasis_matching_loss",
           "eigenbasis_matching_loss_naive", "herding_coreset", "induced_coreset", "laplacian_eigenpairs",
           "largest_connected_component", "orthogonality_loss", "prepare_real_graph", "random_coreset",
           "select_eigenpairs", "synthetic_label_counts", "synthetic_labels", "train_on_synthetic",
           "train_on_whole_graph"]
