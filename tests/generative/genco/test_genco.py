"""GenCO: every design it sees or samples is feasible; both group losses train; training fits the data's tile mix;
clear errors."""

import numpy as np
import pytest
import torch

from icml24._validation import NotFittedError
from icml24.generative import (
    GenCO,
    MILPSolver,
    MLPGenerator,
    SolverLayer,
    is_playable,
    one_hot,
    random_levels,
    tile_histogram_kl,
    wall_loss,
    zelda_milp,
)

H, W = 5, 6


def _data():
    return one_hot(random_levels(12, H, W, np.random.default_rng(0)))


def _feasible(batch):
    return [is_playable(level) for level in batch]


@pytest.mark.parametrize("group_loss, gradient", [("gan", "blackbox"), ("vae", "identity")])
def test_genco_is_feasible_in_every_training_step_and_every_sample(group_loss, gradient):
    model = GenCO(MLPGenerator(8, (H, W, 6), hidden=32, random_state=0), zelda_milp(H, W), group_loss=group_loss,
                  individual_loss=wall_loss, gradient=gradient, feasibility=_feasible, steps=4, batch_size=4,
                  hidden=32, random_state=0)
    model.fit(_data())
    assert len(model.train_feasible_) == 4 and min(model.train_feasible_) == 1.0
    samples = model.sample(6, torch.Generator().manual_seed(0))
    assert samples.shape == (6, H, W) and all(is_playable(level) for level in samples)
    assert all(np.isfinite(model.losses_)) and model.fit_seconds_ > 0
    assert model.solves_ >= 4 * 4  # one forward solve per design per step (plus the backward's)


def _choose(k, n):
    """The MILP "choose k of n items": binary x, sum(x) = k (not one-hot: k ones per design)."""
    return MILPSolver(n, A_eq=np.ones((1, n)), b_eq=[k], lb=np.zeros(n), ub=np.ones(n), integrality=np.ones(n))


def test_genco_samples_a_non_one_hot_milp_as_the_solvers_designs():
    """Choose 3 of 8: samples are the solver's 0/1 vectors (n, 8) with row sums 3 (argmax gave [0 0 0 0 0]); the
    feasibility checker sees the same designs in training."""
    solver, rng = _choose(3, 8), np.random.default_rng(0)
    assert not solver.is_one_hot(8)
    data = np.stack([np.isin(np.arange(8), rng.choice(8, 3, replace=False)) for _ in range(12)]).astype(float)
    seen = []

    def feasibility(designs):
        seen.append(designs)
        return list(designs.sum(-1) == 3)

    model = GenCO(MLPGenerator(8, (8,), hidden=32, random_state=0), solver, individual_loss=lambda x: -x[:, 0],
                  feasibility=feasibility, steps=3, batch_size=4, hidden=32, random_state=0).fit(data)
    assert model.train_feasible_ == [1.0] * 3 and all(d.shape == (4, 8) for d in seen)
    samples = model.sample(5, torch.Generator().manual_seed(1))
    assert samples.shape == (5, 8) and np.isin(samples, (0.0, 1.0)).all()
    np.testing.assert_array_equal(samples.sum(-1), 3)
    with torch.no_grad():  # exactly the solver's outputs for the generator's costs on the same latents
        costs = model.generator(torch.randn(5, 8, generator=torch.Generator().manual_seed(1))).double().numpy()
    np.testing.assert_array_equal(samples, solver.solve(costs))


def test_genco_samples_one_hot_levels_as_tile_indices():
    """The one-hot case (the paper's levels) is unchanged: the argmax over the tile axis of the solver's output."""
    solver = zelda_milp(H, W)
    assert solver.is_one_hot(6) and not solver.is_one_hot(3)
    model = GenCO(MLPGenerator(8, (H, W, 6), hidden=32, random_state=0), solver, steps=2, batch_size=4, hidden=32,
                  random_state=0).fit(_data())
    samples = model.sample(4, torch.Generator().manual_seed(2))
    with torch.no_grad():
        costs = model.generator(torch.randn(4, 8, generator=torch.Generator().manual_seed(2)))
        expected = SolverLayer(solver)(costs).argmax(-1).numpy()
    assert samples.shape == (4, H, W)
    np.testing.assert_array_equal(samples, expected)


def test_genco_gradient_reaches_the_generator():
    gen = MLPGenerator(8, (H, W, 6), hidden=32, random_state=0)
    before = [p.detach().clone() for p in gen.parameters()]
    GenCO(gen, zelda_milp(H, W), individual_loss=wall_loss, weight=10.0, lam=100.0, steps=2, batch_size=4,
          hidden=32, random_state=0).fit(_data())
    assert any(not torch.equal(a, b) for a, b in zip(before, gen.parameters()))


def test_genco_errors_and_not_fitted():
    gen, solver = MLPGenerator(8, (H, W, 6), hidden=32, random_state=0), zelda_milp(H, W)
    with pytest.raises(NotFittedError):
        GenCO(gen, solver).sample(2)
    with pytest.raises(ValueError, match="group_loss"):
        GenCO(gen, solver, group_loss="flow").fit(_data())
    with pytest.raises(ValueError, match="gradient"):
        GenCO(gen, solver, gradient="magic").fit(_data())
    with pytest.raises(TypeError, match="latent_dim"):
        GenCO(torch.nn.Linear(2, 2), solver).fit(_data())
    with pytest.raises(ValueError, match="steps"):
        GenCO(gen, solver, steps=0).fit(_data())
    bad = _data()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="data contains NaN"):
        GenCO(gen, solver, steps=1).fit(bad)


def test_training_lowers_the_tile_histogram_kl_below_the_untrained_generators_spread():
    """12 fixed levels, 40 steps of GenCO (GAN, straight-through): the tile mix of 16 samples moves to the data's.
    The bar comes from untrained generators alone: 8 initial seeds, each through the same solver on the same latents,
    give KL(data || samples) = 0.060 +- 0.011 (mean +- sd; Gaussian-noise costs through the solver: 0.049). Trained
    must lie 3 sd below the untrained mean (about 0.027); it reaches about 0.002 (0.003-0.007 from other seeds)."""
    levels = random_levels(12, H, W, np.random.default_rng(0))
    solver = zelda_milp(H, W)
    latents = torch.randn(16, 8, generator=torch.Generator().manual_seed(1))  # what GenCO.sample(16, gen(1)) draws
    untrained = []
    for seed in range(8):
        with torch.no_grad():
            costs = MLPGenerator(8, (H, W, 6), hidden=32, random_state=seed)(latents)
            untrained.append(tile_histogram_kl(SolverLayer(solver)(costs).argmax(-1).numpy(), levels))
    bar = np.mean(untrained) - 3 * np.std(untrained, ddof=1)
    assert bar > 0.01  # the untrained generators sit well away from the data's mix
    model = GenCO(MLPGenerator(8, (H, W, 6), hidden=32, random_state=0), solver, gradient="identity", steps=40,
                  batch_size=4, hidden=32, random_state=0).fit(one_hot(levels))
    trained = tile_histogram_kl(model.sample(16, torch.Generator().manual_seed(1)), levels)
    assert trained < bar, (trained, untrained)
