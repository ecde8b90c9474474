"""The seeded NPE baseline: sbi's neural spline flow behind the Simformer's interface, no global RNG."""

import math

import pytest
import torch

pytest.importorskip("sbi")

from icml24._validation import NotFittedError  # noqa: E402
from icml24.sbi import NPE, get_task  # noqa: E402


def _fit(seed=0, epochs=1):
    task = get_task("gaussian_linear")
    joint = task.simulate_joint(300, torch.Generator().manual_seed(0))
    npe = NPE(task.prior(), hidden_features=8, num_transforms=1, num_bins=4, random_state=seed)
    return task, npe.append_simulations(joint[:, :10], joint[:, 10:]).train(max_epochs=epochs, batch_size=100)


@pytest.mark.filterwarnings("ignore")
def test_same_seed_same_samples_and_the_global_generator_is_left_alone():
    state = torch.get_rng_state()
    task, first = _fit()
    _, second = _fit()
    x_o = task.observation(1)
    a = first.sample_posterior(6, x_o, random_state=1)
    b = second.sample_posterior(6, x_o, random_state=1)
    assert a.shape == (6, 10) and torch.equal(a, b)
    assert first.epochs_ >= 1 and first.seconds_ > 0 and "NPE(" in repr(first)
    assert torch.equal(state, torch.get_rng_state())


def test_unfitted_and_bad_input():
    npe = NPE(get_task("gaussian_linear").prior())
    with pytest.raises(NotFittedError, match="train\\(\\)"):
        npe.sample_posterior(3, torch.zeros(10))
    with pytest.raises(NotFittedError):
        npe.posterior_  # noqa: B018
    with pytest.raises(ValueError, match="append_simulations"):
        npe.train()
    with pytest.raises(ValueError, match="theta contains NaN"):
        npe.append_simulations(torch.full((4, 10), math.nan), torch.zeros(4, 10))
    with pytest.raises(ValueError, match="same N"):
        npe.append_simulations(torch.zeros(4, 10), torch.zeros(3, 10))
