"""Reverse-time samplers for the Simformer: Euler–Maruyama on the reverse SDE and the probability-flow ODE.

Observed (conditioned) entries are held at their values throughout: drift and diffusion are multiplied by
``(1 - M_C)`` (paper Sec. 3.2), so they never change.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ._random import generator_or_fresh

ScoreFn = Callable[[Tensor, Tensor], Tensor]  # (x [batch, n], t [batch]) -> score [batch, n]


def _time_grid(sde, num_steps: int, dtype, device) -> Tensor:
    return torch.linspace(sde.t_max, sde.t_min, num_steps + 1, dtype=dtype, device=device)


def euler_maruyama(score_fn: ScoreFn, sde, x_init: Tensor, condition_mask: Tensor, num_steps: int = 500,
                   generator: torch.Generator | None = None, guidance: Callable | None = None) -> Tensor:
    r"""Integrate the reverse SDE ``dx = [f(x,t) - g(t)^2 s(x,t)] dt + g(t) d\bar W`` from ``t_max`` to ``t_min``.

    Args:
        score_fn: ``(x, t) -> score``.
        sde: a :class:`~icml24.sbi.sde.VESDE` or :class:`~icml24.sbi.sde.VPSDE`.
        x_init: ``[batch, n]`` start values (observed entries already set to their values).
        condition_mask: ``[batch, n]`` or ``[n]`` bool, ``True`` = observed (kept fixed).
        num_steps: Euler–Maruyama steps (paper: 500).
        generator: torch generator for the Brownian increments (``None``: a fresh, unseeded one).
        guidance: optional log-potential ``c(x0_hat, t) -> [batch]`` (e.g. :func:`interval_potential`); its gradient
            at the Tweedie estimate ``x0_hat = (x_t + sigma_t^2 s) / a_t`` is added to the score (paper Sec. 3.4).
    """
    generator = generator_or_fresh(generator)
    free = (~condition_mask.bool()).to(x_init.dtype).expand_as(x_init)
    times = _time_grid(sde, num_steps, x_init.dtype, x_init.device)
    x = x_init.clone()
    for t_now, t_next in zip(times[:-1], times[1:], strict=False):
        step = t_now - t_next
        t = t_now.expand(x.shape[0])
        g = sde.diffusion(t)[:, None]
        score = score_fn(x, t)
        if guidance is not None:
            score = score + _guidance_score(guidance, sde, x, t, score)
        drift = sde.drift(x, t) - g**2 * score
        noise = torch.randn(x.shape, generator=generator, dtype=x.dtype, device=x.device)
        x = x + free * (-drift * step + g * torch.sqrt(step) * noise)
    return x


def probability_flow_ode(score_fn: ScoreFn, sde, x_init: Tensor, condition_mask: Tensor,
                         num_steps: int = 500) -> Tensor:
    r"""Integrate the probability-flow ODE ``dx/dt = f(x,t) - \tfrac12 g(t)^2 s(x,t)`` backwards with Heun's method."""
    free = (~condition_mask.bool()).to(x_init.dtype).expand_as(x_init)
    times = _time_grid(sde, num_steps, x_init.dtype, x_init.device)

    def velocity(x: Tensor, t_scalar: Tensor) -> Tensor:
        t = t_scalar.expand(x.shape[0])
        return free * (sde.drift(x, t) - 0.5 * sde.diffusion(t)[:, None] ** 2 * score_fn(x, t))

    x = x_init.clone()
    for t_now, t_next in zip(times[:-1], times[1:], strict=False):
        dt = t_next - t_now  # negative
        slope = velocity(x, t_now)
        x_euler = x + slope * dt
        x = x + 0.5 * (slope + velocity(x_euler, t_next)) * dt
    return x


def _guidance_score(guidance: Callable, sde, x: Tensor, t: Tensor, score: Tensor) -> Tensor:
    """Gradient of the log-potential at the Tweedie estimate of ``x_0`` (no backpropagation through the network)."""
    x0_hat = (x + sde.std(t)[:, None] ** 2 * score) / sde.mean_factor(t)[:, None]
    with torch.enable_grad():
        x0_hat = x0_hat.detach().requires_grad_(True)
        (gradient,) = torch.autograd.grad(guidance(x0_hat, t).sum(), x0_hat)
    return gradient


def interval_potential(index: int, low: float, high: float, sharpness: float = 100.0) -> Callable:
    """Soft constraint ``low <= x[index] <= high``: ``log sigmoid(k (x - low)) + log sigmoid(k (high - x))``."""

    def potential(x0_hat: Tensor, t: Tensor) -> Tensor:
        value = x0_hat[:, index]
        return torch.nn.functional.logsigmoid(sharpness * (value - low)) + \
            torch.nn.functional.logsigmoid(sharpness * (high - value))

    return potential
