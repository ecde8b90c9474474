"""Low-rank contextual bandits via two-to-infinity singular subspace recovery (Jedra et al., ICML 2024).

Phase 1 estimates the singular subspaces of the reward matrix from an importance-weighted estimate;
phase 2 solves a misspecified linear problem in reduced features of dimension ``r(m + n) - r^2``.
"""

from .environment import LowRankBandit, as_policy_matrix
from .estimators import IPS, RSBPI, RSPE, SBPI, SIPS, IPSGreedy
from .features import ReducedFeatures
from .regret import RSRMIN, ExploreSubspaceRefine, LinUCBOneHot, PairUCB
from .subspace import (
    SingularSubspaces,
    ips_matrix,
    pair_counts,
    spectral_subspaces,
    two_to_infinity_distance,
)

__all__ = [
    "IPS", "ExploreSubspaceRefine", "IPSGreedy", "LinUCBOneHot", "LowRankBandit", "PairUCB", "RSBPI", "RSPE", "RSRMIN",
    "ReducedFeatures", "SBPI", "SIPS",
    "SingularSubspaces", "as_policy_matrix", "ips_matrix", "pair_counts", "spectral_subspaces",
    "two_to_infinity_distance",
]
