"""Random streams of the sbi methods: the caller's generator, or a fresh one; never torch's global generator."""

from __future__ import annotations

import torch

from icml24._random import torch_generator


def generator_or_fresh(generator: torch.Generator | None) -> torch.Generator:
    """``generator`` itself, or (``None``) a new generator seeded from OS entropy, so that an unseeded call neither
    draws from nor advances ``torch``'s global random state (:func:`icml24._random.torch_generator`)."""
    return torch_generator(generator, name="generator")
