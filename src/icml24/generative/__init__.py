"""icml24.generative: constrained and compositional generation (GenCO; RPG regional diffusion)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("generative")  # the modules of icml24[generative] are installed, or an ImportError names the extra

# exported name -> submodule that defines it; each method adds its own block
_EXPORTS: dict[str, str] = {
    # GenCO (genco/)
    "MILPSolver": ".genco.solvers",
    "ShortestPathSolver": ".genco.solvers",
    "shortest_path_milp": ".genco.solvers",
    "SolverLayer": ".genco.layer",
    "GenCO": ".genco.genco",
    "PlainGenerator": ".genco.baselines",
    "RepairedGenerator": ".genco.baselines",
    "MLPGenerator": ".genco.models",
    "zelda_milp": ".genco.zelda",
    "is_playable": ".genco.zelda",
    "random_levels": ".genco.zelda",
    "parse_level": ".genco.zelda",
    "level_text": ".genco.zelda",
    "one_hot": ".genco.zelda",
    "wall_fraction": ".genco.zelda",
    "tile_histogram": ".genco.zelda",
    "tile_histogram_kl": ".genco.zelda",
    "wall_loss": ".genco.zelda",
    "zelda_penalty": ".genco.zelda",
    "c2st_accuracy": ".genco.fit",
    # RPG (rpg/)
    "RegionLayout": ".rpg.layout", "parse_split_ratio": ".rpg.layout", "grid_layout": ".rpg.layout",
    "RegionPlan": ".rpg.planner", "RuleBasedPlanner": ".rpg.planner", "parse_plan": ".rpg.planner",
    "plan_edits": ".rpg.planner", "parse_edits": ".rpg.planner",
    "RegionalAttnProcessor": ".rpg.regional_attention", "regional_hook": ".rpg.regional_attention",
    "TinyTextUNet": ".rpg.unet", "TextDiffusion": ".rpg.diffusion", "CellClassifier": ".rpg.evaluator",
    "sample_scenes": ".rpg.scenes", "tokenize": ".rpg.scenes", "caption": ".rpg.scenes", "OBJECTS": ".rpg.scenes",
    "split_prompts": ".rpg.scenes", "generate_full": ".rpg.pipeline", "generate_regional": ".rpg.pipeline",
    "closed_loop_edit": ".rpg.pipeline", "plan_all": ".rpg.pipeline", "LLMPlanner": ".rpg.llm_planner",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
