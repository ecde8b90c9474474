"""The shared loop: reproducible under a seed, the global torch RNG untouched."""

import numpy as np
import torch

from icml24.generative import MLPGenerator, PlainGenerator, one_hot, random_levels


def _run(seed):
    data = one_hot(random_levels(8, 5, 6, np.random.default_rng(0)))
    model = PlainGenerator(MLPGenerator(4, (5, 6, 6), hidden=16, random_state=seed), group_loss="vae", steps=3,
                           batch_size=4, hidden=16, random_state=seed).fit(data)
    return model.losses_, model.sample(4, torch.Generator().manual_seed(0))


def test_same_seed_same_run_and_global_rng_untouched():
    state = torch.random.get_rng_state()
    (a, sa), (b, sb) = _run(1), _run(1)
    assert a == b and (sa == sb).all()
    assert torch.equal(state, torch.random.get_rng_state())
    assert _run(2)[0] != a
