"""icml24.sdr: sufficient dimension reduction (SIR, SAVE, DR, MAVE, DCOV) and Hellinger-correlation refinement."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("sdr")  # the modules of icml24[sdr] are installed, or an ImportError names the extra

# exported name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    "SIR": ".inverse",
    "SAVE": ".inverse",
    "DirectionalRegression": ".inverse",
    "OPG": ".mave",
    "MAVE": ".mave",
    "DCOVSDR": ".dcov",
    "distance_covariance": ".dcov",
    "HellingerSDR": ".refine",
    "INITIALIZERS": ".refine",
    "make_initializer": ".refine",
    "HellingerCorrelation": ".hellinger",
    "ProjectionObjective": ".hellinger",
    "bhattacharyya": ".hellinger",
    "hellinger_correlation": ".hellinger",
    "hellinger_from_bhattacharyya": ".hellinger",
    "nn_distances": ".hellinger",
    "copula_ranks": ".hellinger",
    "subspace_distance": ".metrics",
    "projection": ".metrics",
    "MODELS": ".simulate",
    "DESIGNS": ".simulate",
    "single_index_data": ".simulate",
    "true_direction": ".simulate",
    "signal_to_noise": ".simulate",
    "from_sphere": ".sphere",
    "to_sphere": ".sphere",
    "anneal": ".sphere",
    "nelder_mead": ".sphere",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
