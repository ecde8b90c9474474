import numpy as np
import pytest
import torch

from icml24.generative.rpg.diffusion import TextDiffusion
from icml24.generative.rpg.scenes import sample_scenes, tokenize


@pytest.fixture(scope="package")
def tiny_diffusion():
    """A barely trained 8-channel DDPM: enough to exercise sampling, hooks and editing (not image quality)."""
    images, captions = sample_scenes(64, np.random.default_rng(0))
    return TextDiffusion(channels=8, train_steps=3, batch_size=8,
                         random_state=torch.Generator().manual_seed(0)).fit(images, tokenize(captions))
