import math

import torch

from icml24.sbi.sde import VESDE, VPSDE, make_sde


def test_vesde_std_matches_sigma_schedule():
    sde = VESDE(sigma_min=1e-4, sigma_max=15.0)
    t = torch.tensor([0.0, 0.25, 0.5, 1.0])
    expected = 1e-4 * (15.0 / 1e-4) ** t
    assert torch.allclose(sde.std(t), expected, rtol=1e-5)
    assert torch.allclose(sde.mean_factor(t), torch.ones(4))
    # g(t)^2 = d sigma^2 / dt for a variance-exploding SDE
    h = 1e-4
    t = torch.tensor([0.3], dtype=torch.float64)
    derivative = (sde.std(t + h) ** 2 - sde.std(t - h) ** 2) / (2 * h)
    assert torch.allclose(sde.diffusion(t) ** 2, derivative, rtol=1e-4)
    assert torch.allclose(sde.loss_weight(t), sde.diffusion(t) ** 2)


def test_vesde_simulated_marginal_std():
    """Simulate the forward SDE dx = g dW with Euler–Maruyama; its std at t must be sigma(t) (x0 = 0, sigma_min ~ 0)."""
    sde = VESDE(sigma_min=0.01, sigma_max=5.0)
    generator = torch.Generator().manual_seed(0)
    x = torch.zeros(20000, dtype=torch.float64)
    grid = torch.linspace(0, 0.8, 401, dtype=torch.float64)
    for t0, t1 in zip(grid[:-1], grid[1:], strict=True):
        x = x + sde.diffusion(t0.reshape(1)) * torch.sqrt(t1 - t0) * torch.randn(x.shape, generator=generator,
                                                                                   dtype=torch.float64)
    expected = math.sqrt(float(sde.std(torch.tensor(0.8)) ** 2 - 0.01**2))
    assert abs(float(x.std()) / expected - 1) < 0.03


def test_vpsde_marginals_and_simulation():
    sde = VPSDE(beta_min=0.01, beta_max=10.0)
    t = torch.linspace(1e-5, 1.0, 50, dtype=torch.float64)
    assert torch.allclose(sde.mean_factor(t) ** 2 + sde.std(t) ** 2, torch.ones_like(t))
    assert float(sde.mean_factor(torch.tensor(1.0))) < 0.1  # the end is close to N(0, 1)
    generator = torch.Generator().manual_seed(1)
    x0 = 2.0
    x = torch.full((20000,), x0, dtype=torch.float64)
    grid = torch.linspace(0, 0.6, 601, dtype=torch.float64)
    for t0, t1 in zip(grid[:-1], grid[1:], strict=True):
        tt = t0.reshape(1)
        x = x + sde.drift(x, tt) * (t1 - t0) + sde.diffusion(tt) * torch.sqrt(t1 - t0) * torch.randn(
            x.shape, generator=generator, dtype=torch.float64)
    t_end = torch.tensor(0.6, dtype=torch.float64)
    assert abs(float(x.mean()) - x0 * float(sde.mean_factor(t_end))) < 0.03
    assert abs(float(x.std()) / float(sde.std(t_end)) - 1) < 0.03
    assert torch.all(sde.loss_weight(torch.tensor([0.0])) >= 1e-4)


def test_make_sde_rejects_unknown():
    assert isinstance(make_sde("VPSDE"), VPSDE)
    try:
        make_sde("subvp")
    except ValueError as err:
        assert "vesde" in str(err)
    else:
        raise AssertionError("expected ValueError")
