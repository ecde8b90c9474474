"""Reverse-time samplers for the Simformer: Euler–Maruyama on the reverse SDE and the probability-flow ODE.

Observed (conditioned) entries are held at their values throughout: drift and diffusion are multiplied by
``(1 - M_C)`` (paper Sec. 3.2), so they never change.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch
from torch import Tensor

from icml24._random import torch_generator

ScoreFn = Callable[[Tensor, Tensor], Tensor]  # (x [batch, n], t [batch]) -> score [batch, n]


def _time_grid(sde, num_steps: int, dtype, device) -> Tensor:
    return torch.linspace(sde.t_max, sde.t_min, num_steps + 1, dtype=dtype, device=device)


def euler_maruyama(score_fn: ScoreFn, sde, x_init: Tensor, condition_mask: Tensor, num_steps: int = 500,
                   random_state=None, guidance: Callable | None = None) -> Tensor:
    r"""Integrate the reverse SDE ``dx = [f(x,t) - g(t)^2 s(x,t)] dt + g(t) d\bar W`` from ``t_max`` to ``t_min``.

    Args:
        score_fn: ``(x, t) -> score``.
        sde: a ``VESDE`` or ``VPSDE``.
        x_init: ``[batch, n]`` start values (observed entries already set to their values).
        condition_mask: ``[batch, n]`` or ``[n]`` bool, ``True`` = observed (kept fixed).
        num_steps: Euler–Maruyama steps (paper: 500).
        random_state: the Brownian increments' stream: None (fresh entropy), an int, or a numpy or torch Generator (a
            torch Generator is used as is; ``icml24._random.torch_generator``).
        guidance: optional log-potential ``c(x0_hat, t) -> [batch]`` (e.g. ``interval_potential``); its gradient
            at the Tweedie estimate ``x0_hat = (x_t + sigma_t^2 s) / a_t`` is added to the score (paper Sec. 3.4).
    """
    generator = torch_generator(random_state, device=str(x_init.device))
    free = (~condition_mask.bool()).to(x_init.dtype).expand_as(x_init)
    times = _time_grid(sde, num_steps, x_init.dtype, x_init.device)
    x = x_init.clone()
    for t_now, t_next in zip(times[:-1], times[1:], strict=False):
        step = t_now - t_next
        t = t_now.expand(x.shape[0])
        score = score_fn(x, t)
        if guidance is not None:
            score = score + _guidance_score(guidance, sde, x, t, score)
        noise = torch.randn(x.shape, generator=generator, dtype=x.dtype, device=x.device)
        x = euler_maruyama_step(sde, x, t, step, score, free, noise)
    return x


def euler_maruyama_step(sde, x: Tensor, t: Tensor, step: Tensor, score: Tensor, free: Tensor, noise: Tensor) -> Tensor:
    r"""One reverse-time Euler–Maruyama step from ``t`` to ``t - step`` (``noise ~ N(0, I)``; ``free`` = 1 - M_C):

    .. math:: x \leftarrow x + (1 - M_C)\,[-(f(x,t) - g(t)^2 s)\,\Delta t + g(t)\sqrt{\Delta t}\,z].
    """
    g = sde.diffusion(t)[:, None]
    drift = sde.drift(x, t) - g**2 * score
    return x + free * (-drift * step + g * torch.sqrt(step) * noise)


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


def probability_flow_ode_adaptive(score_fn: ScoreFn, sde, x_init: Tensor, condition_mask: Tensor,
                                  rtol: float = 1e-3, atol: float = 1e-3) -> tuple[Tensor, int]:
    r"""Probability-flow ODE ``dx/dt = f(x,t) - \tfrac12 g(t)^2 s(x,t)`` from ``t_max`` to ``t_min`` with an adaptive
    Runge–Kutta 4(5) solver (scipy's ``solve_ivp(method="RK45")``, Dormand–Prince) over the whole batch at once.

    The step size follows the error estimate, so the cost is set by ``rtol`` / ``atol`` rather than a step count: few
    evaluations where the flow is smooth (large noise), more near the data. Returns ``(x, score_evaluations)``, the
    number of batched score-network calls, so that accuracy can be read against cost.
    """
    import numpy as np
    from scipy.integrate import solve_ivp

    free = (~condition_mask.bool()).to(x_init.dtype).expand_as(x_init)
    shape, dtype, device = x_init.shape, x_init.dtype, x_init.device
    calls = 0

    def velocity(t_value: float, flat: np.ndarray) -> np.ndarray:
        nonlocal calls
        calls += 1
        x = torch.as_tensor(flat, dtype=dtype, device=device).reshape(shape)
        t = torch.full((shape[0],), float(t_value), dtype=dtype, device=device)
        slope = free * (sde.drift(x, t) - 0.5 * sde.diffusion(t)[:, None] ** 2 * score_fn(x, t))
        return slope.reshape(-1).double().cpu().numpy()

    solution = solve_ivp(velocity, (float(sde.t_max), float(sde.t_min)), x_init.reshape(-1).double().cpu().numpy(),
                         method="RK45", rtol=rtol, atol=atol)
    if not solution.success:
        raise RuntimeError(f"the probability-flow ODE solver failed: {solution.message}; loosen rtol / atol")
    x = torch.as_tensor(solution.y[:, -1], dtype=dtype, device=device).reshape(shape)
    return torch.where(free.bool(), x, x_init), calls


def rejection_sample(draw: Callable[[int], Tensor], num_samples: int, low: Tensor, high: Tensor,
                     max_rounds: int = 20) -> tuple[Tensor, float]:
    """Keep the draws inside the box ``low <= x <= high`` (per column) until ``num_samples`` are kept.

    ``draw(count) -> [count, n]``. Returns ``(samples [num_samples, n], rejection rate over all draws)``. When
    ``max_rounds`` rounds do not fill the request (the model nearly misses the support), the rest are the last
    draws clamped onto the box, with a ``RuntimeWarning`` that gives the rate.
    """
    kept, drawn, have, batch = [], 0, 0, None
    for _ in range(max_rounds):
        if have >= num_samples:
            break
        batch = draw(max(num_samples - have, 16))
        drawn += batch.shape[0]
        kept.append(batch[((batch >= low) & (batch <= high)).all(1)])
        have += kept[-1].shape[0]
    rate = 1.0 - have / max(drawn, 1)
    if have < num_samples:
        warnings.warn(f"only {have} of {num_samples} samples fell inside the support after {max_rounds} rounds "
                      f"(rejection rate {rate:.3f}); the rest are clamped onto it. Check the condition, train "
                      "longer, or raise max_rounds", RuntimeWarning, stacklevel=2)
        kept.append(torch.maximum(torch.minimum(batch[: num_samples - have], high), low))
    return torch.cat(kept)[:num_samples], rate


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
