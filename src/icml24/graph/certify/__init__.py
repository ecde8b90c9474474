"""Certified robustness of GNNs against node injection (Lai et al., ICML 2024; node-aware bi-smoothing, S&P 2024).

- ``smoothing``: the smoothed classifier (edge deletion ``p_e``, node deletion ``p_n``), Monte Carlo votes,
  Clopper–Pearson bounds.
- ``samplewise``: the per-node certificate.
- ``collective``: the collective certificate (LP1, LP2 and the exact symmetry-reduced LP2, HiGHS), with the
  receptive field of the base classifier (``hops=3`` for the symmetric GCN, ``hops=2`` as the paper).
- ``models``: a row-normalized GCN, whose 2-hop receptive field is the one the paper's certificate assumes.
- ``bruteforce``: exhaustive attacks on tiny graphs to test soundness.
"""

from ..nn import GAT, GCN  # the base classifiers, re-exported for compatibility
from .bruteforce import attack_all_injections, bqclp_optimum, enumerate_injections, exact_smoothed_probabilities
from .collective import (
    CollectiveCertificate,
    LPSolution,
    flip_weights,
    lp1,
    lp2,
    lp2_reduced,
    path_cost,
    path_costs,
    three_hop_paths,
)
from .models import RowNormalizedGCN, row_propagate
from .samplewise import disconnection_probability, samplewise_certified, samplewise_radius
from .smoothing import NodeAwareSmoothing, clopper_pearson, smoothed_votes, top_two, train_under_smoothing

__all__ = [
    "CollectiveCertificate", "GAT", "GCN", "LPSolution", "NodeAwareSmoothing", "attack_all_injections",
    "bqclp_optimum", "clopper_pearson", "disconnection_probability", "enumerate_injections",
    "exact_smoothed_probabilities", "flip_weights", "lp1", "lp2", "lp2_reduced", "path_cost", "path_costs",
    "RowNormalizedGCN", "row_propagate", "samplewise_certified", "samplewise_radius", "smoothed_votes",
    "three_hop_paths", "top_two",
    "train_under_smoothing",
]
