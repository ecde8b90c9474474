"""icml24.causal: score-based causal discovery with learned kernels (Wang et al., ICML 2024)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("causal")  # the modules of icml24[causal] are installed, or an ImportError names the extra

# exported name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    # kernel-ges: learned-kernel generalized score, GES, synthetic benchmark, metrics, causal-learn peer
    "KernelScore": ".scores",
    "LearnedKernelScore": ".scores",
    "MarginalKernelScore": ".scores",
    "MedianKernelScore": ".scores",
    "median_width": ".likelihood",
    "negative_score": ".likelihood",
    "GES": ".ges",
    "dag_to_cpdag": ".graphs",
    "pdag_to_dag": ".graphs",
    "from_causallearn": ".graphs",
    "skeleton_f1": ".metrics",
    "arrow_f1": ".metrics",
    "normalized_shd": ".metrics",
    "SyntheticData": ".synthetic",
    "random_dag": ".synthetic",
    "simulate": ".synthetic",
    "generate": ".synthetic",
    "causallearn_ges": ".peer",
    "CausalLearnScore": ".peer",
    "MarginalLikelihoodScore": ".marginal",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
