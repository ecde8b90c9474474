"""icml24.agents: multi-agent infectious jailbreak (Gu et al., "Agent Smith", ICML 2024)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("agents")  # the modules of icml24[agents] are installed, or an ImportError names the extra

# exported name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    # vectorized randomized pair-wise chat simulation
    "InfectionSimulation": ".simulation",
    "random_matching": ".simulation",
    "first_round_reaching": ".simulation",
    "sequential_jailbreak": ".simulation",
    "sequential_rounds_to": ".simulation",
    "rate_grid": ".simulation",
    # the theory (Sec. 3.1, App. B)
    "recurrence": ".theory",
    "closed_form": ".theory",
    "ode_solution": ".theory",
    "infected_ratio": ".theory",
    "limit_ratio": ".theory",
    "contained": ".theory",
    "rounds_needed": ".theory",
    "fit_rates": ".theory",
    # the small real-retrieval society
    "society_experiment": ".society",
    "border_fraction": ".society",
    "DEFINITIONS": ".simulation",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
