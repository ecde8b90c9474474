"""The pipeline: beta = 1 is the full-prompt model exactly; the closed loop touches only the wrong regions."""

import pytest
import torch

from icml24.generative.rpg.pipeline import closed_loop_edit, generate_full, generate_regional, plan_all


def test_beta_one_reproduces_full_prompt_generation_exactly(tiny_diffusion):
    prompts = ["red circle and blue square and green triangle and yellow circle"] * 2
    noise = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    full = generate_full(tiny_diffusion, prompts, noise, torch.Generator(), steps=3)
    same = generate_regional(tiny_diffusion, plan_all(prompts), noise, torch.Generator(), 1.0, steps=3)
    other = generate_regional(tiny_diffusion, plan_all(prompts), noise, torch.Generator(), 0.0, steps=3)
    assert torch.equal(full, same)
    assert not torch.equal(full, other)


def test_batches_must_share_a_layout(tiny_diffusion):
    plans = plan_all(["red circle and blue square", "red circle and blue square and green circle and red square"])
    with pytest.raises(ValueError, match="one layout"):
        generate_regional(tiny_diffusion, plans, torch.zeros(2, 3, 16, 16), torch.Generator(), 0.5, steps=2)


class _Judge:
    """Evaluator stub: slot 0 always right, slot 1 right only once its region changed."""

    def __init__(self, first):
        self.first = first

    def slot_correct(self, images, entities):
        changed = (images[:, :, :, 8:] != self.first[:, :, :, 8:]).any(dim=(1, 2, 3))
        return torch.stack([torch.ones(len(images), dtype=torch.bool), changed], dim=1)


def test_closed_loop_regenerates_only_wrong_regions(tiny_diffusion):
    prompts = ["red circle and blue square"] * 2
    plans = plan_all(prompts)
    entities = [("red circle", "blue square")] * 2
    start = generate_regional(tiny_diffusion, plans, torch.randn(2, 3, 16, 16), torch.Generator(), 0.5, steps=2)
    edited, history = closed_loop_edit(tiny_diffusion, _Judge(start), plans, entities, start,
                                       torch.Generator().manual_seed(1), rounds=2, steps=2)
    assert torch.equal(edited[:, :, :, :8], start[:, :, :, :8])  # the right region is kept bit for bit
    assert history[0].wrong_before == 2 and history[0].fixed == 2 and history[0].broken == 0
    assert history[1].wrong_before == 0 and history[1].accuracy_after == 1.0
    assert "Modify Region1" in history[0].edit_plans[0]


def test_closed_loop_without_regional_attention_regenerates_the_same_regions_with_the_whole_prompt(tiny_diffusion):
    prompts = ["red circle and blue square"] * 2
    plans = plan_all(prompts)
    entities = [("red circle", "blue square")] * 2
    start = generate_regional(tiny_diffusion, plans, torch.randn(2, 3, 16, 16), torch.Generator(), 0.5, steps=2)
    regional, _ = closed_loop_edit(tiny_diffusion, _Judge(start), plans, entities, start,
                                   torch.Generator().manual_seed(1), rounds=1, steps=2)
    plain, history = closed_loop_edit(tiny_diffusion, _Judge(start), plans, entities, start,
                                      torch.Generator().manual_seed(1), rounds=1, steps=2, regional=False)
    assert torch.equal(plain[:, :, :, :8], start[:, :, :, :8])  # the right region is kept bit for bit
    assert history[0].wrong_before == 2 and not torch.equal(plain, regional)  # same noise, other attention
    noise = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    keep = torch.ones(2, 1, 16, 16, dtype=torch.bool)
    keep[:, :, :, 8:] = False
    masked = generate_full(tiny_diffusion, prompts, noise, torch.Generator().manual_seed(3), steps=2, known=start,
                           keep=keep)
    assert torch.equal(masked[:, :, :, :8], start[:, :, :, :8])
