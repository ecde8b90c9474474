"""RPG: Recaption, Plan and Generate (Yang et al., ICML 2024): planned regional diffusion, model-agnostic.

The planner format and split-ratio grammar (``layout``, ``planner``), the regional cross-attention hook
(``regional_attention``), a small local text-to-image DDPM with its scenes and evaluator (``scenes``, ``unet``,
``diffusion``, ``evaluator``) and the pipeline with the closed loop (``pipeline``).
"""
