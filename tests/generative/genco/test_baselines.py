"""Baselines: the plain generator (no guarantee), penalty training, generate-then-repair (feasible afterwards)."""

import numpy as np
import pytest
import torch

from icml24.generative import (
    MLPGenerator,
    PlainGenerator,
    RepairedGenerator,
    is_playable,
    one_hot,
    random_levels,
    zelda_milp,
    zelda_penalty,
)

H, W = 5, 6


def _fit(**kwargs):
    data = one_hot(random_levels(12, H, W, np.random.default_rng(0)))
    model = PlainGenerator(MLPGenerator(8, (H, W, 6), hidden=32, random_state=0), steps=3, batch_size=4, hidden=32,
                           feasibility=lambda b: [is_playable(x) for x in b], **{"random_state": 0, **kwargs})
    return model.fit(data)


def test_untrained_plain_generator_is_mostly_infeasible_and_repair_fixes_every_sample():
    plain = _fit()
    raw = plain.sample(6, torch.Generator().manual_seed(0))
    assert raw.shape == (6, H, W) and np.mean([is_playable(x) for x in raw]) < 1.0
    repaired = RepairedGenerator(plain, zelda_milp(H, W)).sample(6, torch.Generator().manual_seed(0))
    assert all(is_playable(x) for x in repaired)


def test_repair_is_the_closest_feasible_design():
    solver = zelda_milp(H, W)
    level = random_levels(1, H, W, np.random.default_rng(3))[0]
    costs = np.log(one_hot(level)[None] + 1e-3)  # a generator that already emits a playable level
    fixed = RepairedGenerator(_fit(), solver).repair(costs).argmax(-1)[0]
    assert (fixed == level).all()
    broken = level.copy()
    broken[0, 2] = 1  # a gap in the border wall: one change repairs it
    fixed = RepairedGenerator(_fit(), solver).repair(np.log(one_hot(broken)[None] + 1e-3)).argmax(-1)[0]
    assert is_playable(fixed) and (fixed != broken).sum() == 1


def test_penalty_enters_the_loss_and_sample_costs_shape():
    with_penalty, without = _fit(penalty=zelda_penalty, penalty_weight=5.0), _fit()
    assert with_penalty.losses_[0] > without.losses_[0]
    assert with_penalty.sample_costs(3).shape == (3, H, W, 6)


def test_repair_needs_a_maximizer():
    from icml24.generative import ShortestPathSolver

    with pytest.raises(ValueError, match="maximizing"):
        RepairedGenerator(_fit(), ShortestPathSolver(3, 3))
