"""Recaption, plan and generate on the local model, and the closed loop (RPG, Sec. 3 and Sec. 3.4).

``generate_full`` is the full-prompt baseline; ``generate_regional`` plans each prompt and generates with the
regional hook at base ratio beta; ``closed_loop_edit`` evaluates, re-plans (the wrong regions become 'modify'
operations) and regenerates only those regions by masked re-diffusion. The loop is a reconstruction: it is
described in the paper but not in the released code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from icml24._random import torch_generator

from .diffusion import TextDiffusion
from .evaluator import CellClassifier
from .planner import RegionPlan, RuleBasedPlanner, parse_edits, plan_edits
from .regional_attention import regional_hook

CANVAS = (16, 16)


def generate_full(diffusion: TextDiffusion, prompts: list[str], noise: torch.Tensor, random_state,
                  steps: int = 20, guidance: float = 3.0, known: torch.Tensor | None = None,
                  keep: torch.Tensor | None = None) -> torch.Tensor:
    """The base model on the whole prompt (one chunk per sample); ``known``/``keep`` as in ``generate_regional``."""
    return diffusion.sample(diffusion.encode([[p] for p in prompts]), random_state, steps, guidance, noise=noise,
                            known=known, keep=keep)


def regional_context(diffusion: TextDiffusion, plans: list[RegionPlan], use_base: bool = True) -> torch.Tensor:
    chunks = [([p.base_prompt] if use_base else []) + list(p.regional_prompts) for p in plans]
    return diffusion.encode(chunks)


def _one_layout(plans: list[RegionPlan]):
    ratios = {p.split_ratio for p in plans}
    if len(ratios) != 1:
        raise ValueError(f"a batch must share one layout, got split ratios {sorted(ratios)}; group plans by ratio")
    return plans[0].layout


def generate_regional(diffusion: TextDiffusion, plans: list[RegionPlan], noise: torch.Tensor,
                      random_state, base_ratio: float | None = 0.5, steps: int = 20,
                      guidance: float = 3.0, known: torch.Tensor | None = None,
                      keep: torch.Tensor | None = None) -> torch.Tensor:
    """Complementary regional diffusion with the plans' regions; ``base_ratio=None`` drops the base prompt."""
    layout = _one_layout(plans)
    context = regional_context(diffusion, plans, use_base=base_ratio is not None)
    with regional_hook(diffusion.model_, layout, CANVAS, diffusion.chunk_len, base_ratio):
        return diffusion.sample(context, random_state, steps, guidance, noise=noise, known=known, keep=keep)


@dataclass
class EditRound:
    """One closed-loop round: how many objects were wrong before it, and how many of those it fixed / broke."""

    wrong_before: int
    fixed: int
    broken: int
    accuracy_after: float
    edit_plans: list[str] = field(repr=False, default_factory=list)


def closed_loop_edit(diffusion: TextDiffusion, evaluator: CellClassifier, plans: list[RegionPlan],
                     entities: list[tuple[str, ...]], images: torch.Tensor, random_state,
                     rounds: int = 1, base_ratio: float | None = 0.5, steps: int = 20,
                     guidance: float = 3.0, regional: bool = True) -> tuple[torch.Tensor, list[EditRound]]:
    """Evaluate -> re-plan -> regenerate the wrong regions (masked re-diffusion, fresh noise), ``rounds`` times.

    ``regional=False`` regenerates the same regions with the base model on the whole prompt (no regional
    attention): the plain model in the regional method's slot."""
    layout = _one_layout(plans)
    boxes = layout.boxes(*CANVAS)
    generator = torch_generator(random_state)  # one stream for every round's fresh noise and sampling
    history = []
    for _ in range(rounds):
        correct = evaluator.slot_correct(images, entities)
        texts = [plan_edits(p, c.tolist()) for p, c in zip(plans, correct)]
        todo = [parse_edits(t) for t in texts]
        keep = torch.ones((len(images), 1, *CANVAS), dtype=torch.bool)
        for b, regions in enumerate(todo):
            for k in regions:
                top, bottom, left, right = boxes[k]
                keep[b, :, top:bottom, left:right] = False
        rows = [b for b, regions in enumerate(todo) if regions]
        new = images.clone()
        if rows:
            noise = torch.randn((len(rows), 3, *CANVAS), generator=generator)
            if regional:
                new[rows] = generate_regional(diffusion, [plans[b] for b in rows], noise, generator, base_ratio,
                                              steps, guidance, known=images[rows], keep=keep[rows])
            else:
                new[rows] = generate_full(diffusion, [plans[b].base_prompt for b in rows], noise, generator, steps,
                                          guidance, known=images[rows], keep=keep[rows])
        after = evaluator.slot_correct(new, entities)
        history.append(EditRound(int((~correct).sum()), int((~correct & after).sum()), int((correct & ~after).sum()),
                                 float(after.float().mean()), texts))
        images = new
    return images, history


def plan_all(prompts: list[str], planner=None) -> list[RegionPlan]:
    planner = planner or RuleBasedPlanner()
    return [planner.plan(p) for p in prompts]
