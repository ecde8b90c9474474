"""Random streams of the sbi methods: the caller's generator, or a fresh one; never torch's global generator."""

from __future__ import annotations

import torch


def generator_or_fresh(generator: torch.Generator | None) -> torch.Generator:
    """``generator`` itself, or (``None``) a new generator seeded from OS entropy, so that an unseeded call neither
    draws from nor advances ``torch``'s global random state."""
    if generator is not None:
        return generator
    fresh = torch.Generator()
    fresh.seed()
    return fresh
