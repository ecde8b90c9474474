"""Reverse-time samplers: exact-score Gaussian conditionals, guidance, and no use of torch's global generator."""

import math

import torch

from icml24.sbi.sampling import euler_maruyama, interval_potential, probability_flow_ode
from icml24.sbi.sde import VESDE


def test_samplers_with_exact_score_recover_a_gaussian_conditional():
    """With the exact score of a 2-d Gaussian under the VESDE, both samplers reproduce p(x_1 | x_0 = 1)."""
    sde = VESDE(sigma_min=1e-3, sigma_max=5.0)
    # x ~ N(0, [[1, 0.8], [0.8, 1]]): x_1 | x_0 ~ N(0.8 x_0, 0.36)
    observed_value = 1.0
    cond_mean, cond_var = 0.8 * observed_value, 1.0 - 0.8**2

    def score(x, t):  # only the free coordinate's score matters; p_t(x_1 | x_0) = N(cond_mean, cond_var + sigma^2)
        out = torch.zeros_like(x)
        out[:, 1] = -(x[:, 1] - cond_mean) / (cond_var + sde.std(t) ** 2)
        return out

    generator = torch.Generator().manual_seed(0)
    x_init = torch.stack([torch.full((4000,), observed_value, dtype=torch.float64),
                          cond_mean + math.sqrt(cond_var + 25.0) * torch.randn(4000, generator=generator,
                                                                                dtype=torch.float64)], 1)
    condition = torch.tensor([True, False])
    for samples in (euler_maruyama(score, sde, x_init, condition, 300, generator),
                    probability_flow_ode(score, sde, x_init, condition, 100)):
        assert torch.all(samples[:, 0] == observed_value)
        assert abs(float(samples[:, 1].mean()) - cond_mean) < 0.05
        assert abs(float(samples[:, 1].std()) / math.sqrt(cond_var) - 1) < 0.06


def test_guidance_pushes_samples_into_interval():
    """With a zero score (pure noise model) guidance alone must move samples into the interval."""
    sde = VESDE(sigma_min=0.01, sigma_max=1.0)
    x_init = torch.randn(200, 2, generator=torch.Generator().manual_seed(0))
    condition = torch.zeros(2, dtype=torch.bool)
    zero_score = lambda x, t: torch.zeros_like(x)  # noqa: E731
    free = euler_maruyama(zero_score, sde, x_init, condition, 50, torch.Generator().manual_seed(1))
    guided = euler_maruyama(zero_score, sde, x_init, condition, 50, torch.Generator().manual_seed(1),
                            guidance=interval_potential(0, 1.0, 2.0, sharpness=20.0))
    inside = lambda s: float(((s[:, 0] > 1.0) & (s[:, 0] < 2.0)).float().mean())  # noqa: E731
    assert inside(guided) > inside(free) + 0.3
    assert torch.allclose(guided[:, 1], free[:, 1])  # the other coordinate is untouched


def test_sampler_without_a_generator_leaves_the_global_one_alone():
    state = torch.get_rng_state()
    x = euler_maruyama(lambda x, t: -x, VESDE(), torch.zeros(5, 2), torch.tensor([True, False]), 3)
    assert torch.isfinite(x).all() and torch.all(x[:, 0] == 0)
    assert torch.equal(state, torch.get_rng_state())
