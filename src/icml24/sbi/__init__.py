"""icml24.sbi: methods (no printing, no file I/O beyond what the caller asks)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("sbi")  # the modules of icml24[sbi] are installed, or an ImportError names the extra

# exported name -> submodule that defines it; each method adds its own line(s)
_EXPORTS: dict[str, str] = {
    "Simformer": ".simformer",
    "NPE": ".npe",
    "ScoreTransformer": ".transformer",
    "VESDE": ".sde",
    "VPSDE": ".sde",
    "euler_maruyama": ".sampling",
    "probability_flow_ode": ".sampling",
    "interval_potential": ".sampling",
    "moralize": ".masks",
    "faithful_inverse_mask": ".masks",
    "attention_mask": ".masks",
    "structured_condition_masks": ".masks",
    "c2st": ".metrics",
    "LinearGaussianTask": ".tasks",
    "TwoMoons": ".tasks",
    "ProductTask": ".tasks",
    "get_task": ".tasks",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
