"""icml24.bandits: methods (no printing, no file I/O beyond what the caller asks)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("bandits")  # the modules of icml24[bandits] are installed, or an ImportError names the extra

# exported name -> submodule that defines it; each method adds its own line(s)
_EXPORTS: dict[str, str] = {
    "LowRankBandit": ".lowrank",
    "ReducedFeatures": ".lowrank",
    "SingularSubspaces": ".lowrank",
    "spectral_subspaces": ".lowrank",
    "ips_matrix": ".lowrank",
    "IPS": ".lowrank",
    "IPSGreedy": ".lowrank",
    "SIPS": ".lowrank",
    "SBPI": ".lowrank",
    "RSPE": ".lowrank",
    "RSBPI": ".lowrank",
    "RSRMIN": ".lowrank",
    "ExploreSubspaceRefine": ".lowrank",
    "LinUCBOneHot": ".lowrank",
    "PairUCB": ".lowrank",
    "LinearBandit": ".linear_bandit",
    "end_of_optimism_instance": ".linear_bandit",
    "random_instance": ".linear_bandit",
    "BatchedPolicy": ".batched",
    "BanditRun": ".batched",
    "run_batched": ".batched",
    "d_optimal_design": ".design",
    "optimal_allocation": ".allocation",
    "E4": ".e4",
    "PhasedElimination": ".phased_elimination",
    "RoundRobin": ".round_robin",
    "RarelySwitchingOFUL": ".rs_oful",
    "EndOfOptimism": ".end_of_optimism",
    "LinUCB": ".linucb",
    "LinTS": ".lints",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
