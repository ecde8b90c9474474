"""Networks: shapes, and a seeded generator that is reproducible without touching global RNG."""

import torch

from icml24.generative import MLPGenerator


def test_generator_shape_and_seed():
    state = torch.random.get_rng_state()
    a, b = MLPGenerator(4, (3, 5, 6), hidden=8, random_state=0), MLPGenerator(4, (3, 5, 6), hidden=8, random_state=0)
    z = torch.zeros(2, 4)
    assert a(z).shape == (2, 3, 5, 6) and torch.equal(a(z), b(z))
    assert torch.equal(state, torch.random.get_rng_state())
