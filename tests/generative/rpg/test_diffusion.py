"""The local DDPM: input checks, cached state round trip, deterministic DDIM, masked re-diffusion keeps pixels."""

import numpy as np
import pytest
import torch

from icml24._validation import NotFittedError
from icml24.generative.rpg.diffusion import TextDiffusion, cosine_alpha_bar


def test_schedule_decreases_from_one_to_near_zero():
    ab = cosine_alpha_bar(100)
    assert ab.shape == (100,) and ab[0] > 0.99 and ab[-1] < 1e-3 and (ab[1:] < ab[:-1]).all()


def test_refuses_bad_input_and_use_before_fit():
    with pytest.raises(NotFittedError):
        _ = TextDiffusion().model_
    bad = np.zeros((2, 3, 16, 16))
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="images"):
        TextDiffusion(train_steps=1).fit(bad, np.zeros((2, 12)))
    with pytest.raises(ValueError, match="16, 16"):
        TextDiffusion(train_steps=1).fit(np.zeros((2, 3, 8, 8)), np.zeros((2, 12)))


def test_state_round_trip_and_deterministic_sampling(tiny_diffusion):
    again = TextDiffusion.from_state(tiny_diffusion.state())
    context = tiny_diffusion.encode([["red circle and blue square"]])
    a = tiny_diffusion.sample(context, torch.Generator().manual_seed(3), steps=3)
    b = again.sample(again.encode([["red circle and blue square"]]), torch.Generator().manual_seed(3), steps=3)
    assert torch.equal(a, b) and a.shape == (1, 3, 16, 16) and a.abs().max() <= 1 + 1e-5
    chunks = tiny_diffusion.encode([["red", "blue circle", "and"], ["", "", ""]])
    assert chunks.shape == (2, 3 * tiny_diffusion.chunk_len, tiny_diffusion.text_dim)
    with pytest.raises(ValueError, match="same number of chunks"):
        tiny_diffusion.encode([["red circle"], ["red circle", "blue square"]])


def test_masked_rediffusion_keeps_the_kept_pixels_exactly(tiny_diffusion):
    known = torch.rand(2, 3, 16, 16) * 2 - 1
    keep = torch.zeros(2, 1, 16, 16, dtype=torch.bool)
    keep[:, :, :, :8] = True
    out = tiny_diffusion.sample(tiny_diffusion.encode([["red circle"]] * 2), torch.Generator().manual_seed(0),
                                steps=3, known=known, keep=keep)
    assert torch.equal(out[:, :, :, :8], known[:, :, :, :8])
    assert not torch.allclose(out[:, :, :, 8:], known[:, :, :, 8:])


@pytest.mark.parametrize("steps", [0, -1, 2.5, 101, True])
def test_bad_step_counts_are_refused(tiny_diffusion, steps):
    """steps=0 used to return the input noise unchanged."""
    context = tiny_diffusion.encode([["red circle"]])
    with pytest.raises(ValueError, match="steps must be an integer"):
        tiny_diffusion.sample(context, torch.Generator().manual_seed(0), steps=steps)


@pytest.mark.parametrize("guidance", [float("nan"), float("inf")])
def test_non_finite_guidance_is_refused(tiny_diffusion, guidance):
    """guidance=nan used to return NaN images."""
    context = tiny_diffusion.encode([["red circle"]])
    with pytest.raises(ValueError, match="guidance must be a finite"):
        tiny_diffusion.sample(context, torch.Generator().manual_seed(0), steps=2, guidance=guidance)
    with pytest.raises(ValueError, match="noise"):
        tiny_diffusion.sample(context, torch.Generator(), steps=2, noise=torch.full((1, 3, 16, 16), float("nan")))
