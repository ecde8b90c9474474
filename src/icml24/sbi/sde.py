"""Forward SDEs of the Simformer (Gloeckler et al., ICML 2024): the variance-exploding and variance-preserving SDEs.

Both are linear SDEs ``dx = f(t) x dt + g(t) dW`` with a Gaussian transition kernel
``p_t(x_t | x_0) = N(mean_factor(t) x_0, std(t)^2)``, used for denoising score matching and the reverse-time samplers.
Times are tensors of shape ``[batch]`` (or scalars); values are ``[batch, num_nodes]``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


class VESDE:
    r"""Variance-exploding SDE (Song et al., 2021), the Simformer's default.

    .. math::
        \sigma(t) = \sigma_{min} (\sigma_{max}/\sigma_{min})^t,\quad
        f = 0,\quad g(t) = \sigma(t)\sqrt{2 \ln(\sigma_{max}/\sigma_{min})},\quad
        x_t = x_0 + \sigma(t)\,\varepsilon,\quad \lambda(t) = g(t)^2.

    Args:
        sigma_min (float): noise scale at ``t = 0`` (default ``1e-4``, as in the paper).
        sigma_max (float): noise scale at ``t = 1`` (default ``15``).
        t_min (float): smallest training / sampling time (default ``1e-5``).
        t_max (float): largest time (default ``1``).
    """

    def __init__(self, sigma_min: float = 1e-4, sigma_max: float = 15.0, t_min: float = 1e-5, t_max: float = 1.0):
        if not 0 < sigma_min < sigma_max:
            raise ValueError(f"need 0 < sigma_min < sigma_max, got sigma_min={sigma_min}, sigma_max={sigma_max}")
        if not 0 <= t_min < t_max:
            raise ValueError(f"need 0 <= t_min < t_max, got t_min={t_min}, t_max={t_max}")
        self.sigma_min, self.sigma_max, self.t_min, self.t_max = float(sigma_min), float(sigma_max), t_min, t_max
        self._log_ratio = math.log(self.sigma_max / self.sigma_min)

    def mean_factor(self, t: Tensor) -> Tensor:
        """Factor ``a(t)`` in ``E[x_t | x_0] = a(t) x_0`` (1 for the VESDE)."""
        return torch.ones_like(t)

    def std(self, t: Tensor) -> Tensor:
        """Standard deviation ``sigma(t)`` of ``x_t | x_0``."""
        return self.sigma_min * torch.exp(t * self._log_ratio)

    def drift(self, x: Tensor, t: Tensor) -> Tensor:
        """Forward drift ``f(x, t)`` (zero)."""
        return torch.zeros_like(x)

    def diffusion(self, t: Tensor) -> Tensor:
        """Diffusion coefficient ``g(t) = sigma(t) sqrt(2 ln(sigma_max / sigma_min))``."""
        return self.std(t) * math.sqrt(2.0 * self._log_ratio)

    def loss_weight(self, t: Tensor) -> Tensor:
        """Loss weight ``lambda(t) = g(t)^2``."""
        return self.diffusion(t) ** 2

    def __repr__(self) -> str:
        return f"VESDE(sigma_min={self.sigma_min}, sigma_max={self.sigma_max}, t_min={self.t_min}, t_max={self.t_max})"


class VPSDE:
    r"""Variance-preserving SDE (Song et al., 2021).

    .. math::
        \beta(t) = \beta_{min} + t(\beta_{max}-\beta_{min}),\quad f(x,t) = -\tfrac12\beta(t)x,\quad
        g(t)=\sqrt{\beta(t)},\\
        a(t) = \exp(-\tfrac14 t^2 \Delta\beta - \tfrac12 t \beta_{min}),\quad \sigma(t)^2 = 1 - a(t)^2,\quad
        \lambda(t) = \max(1 - a(t)^2, 10^{-4}).

    Args:
        beta_min (float): default ``0.01`` (paper's setting).
        beta_max (float): default ``10``.
        t_min (float): default ``1e-5``.
        t_max (float): default ``1``.
    """

    def __init__(self, beta_min: float = 0.01, beta_max: float = 10.0, t_min: float = 1e-5, t_max: float = 1.0):
        if not 0 <= beta_min < beta_max:
            raise ValueError(f"need 0 <= beta_min < beta_max, got beta_min={beta_min}, beta_max={beta_max}")
        if not 0 <= t_min < t_max:
            raise ValueError(f"need 0 <= t_min < t_max, got t_min={t_min}, t_max={t_max}")
        self.beta_min, self.beta_max, self.t_min, self.t_max = float(beta_min), float(beta_max), t_min, t_max

    def beta(self, t: Tensor) -> Tensor:
        return self.beta_min + t * (self.beta_max - self.beta_min)

    def _log_mean_factor(self, t: Tensor) -> Tensor:
        return -0.25 * t**2 * (self.beta_max - self.beta_min) - 0.5 * t * self.beta_min

    def mean_factor(self, t: Tensor) -> Tensor:
        """``a(t) = exp(-t^2 (beta_max - beta_min) / 4 - t beta_min / 2)``."""
        return torch.exp(self._log_mean_factor(t))

    def std(self, t: Tensor) -> Tensor:
        """``sigma(t) = sqrt(1 - a(t)^2)`` (``-expm1`` keeps it accurate near ``t = 0``)."""
        return torch.sqrt(-torch.expm1(2.0 * self._log_mean_factor(t)))

    def drift(self, x: Tensor, t: Tensor) -> Tensor:
        return -0.5 * _expand(self.beta(t), x) * x

    def diffusion(self, t: Tensor) -> Tensor:
        return torch.sqrt(self.beta(t))

    def loss_weight(self, t: Tensor) -> Tensor:
        return torch.clamp(-torch.expm1(2.0 * self._log_mean_factor(t)), min=1e-4)

    def __repr__(self) -> str:
        return f"VPSDE(beta_min={self.beta_min}, beta_max={self.beta_max}, t_min={self.t_min}, t_max={self.t_max})"


def denoising_loss(score_fn, sde, x0: Tensor, t: Tensor, eps: Tensor, condition_mask: Tensor) -> Tensor:
    r"""Denoising score-matching loss (paper Eq. 4) at fixed times ``t [batch]`` and noise ``eps [batch, n]``.

    .. math::
        x_t = a(t) x_0 + \sigma(t)\varepsilon \ (\text{observed entries kept at } x_0),\quad
        L = \operatorname{mean}_b \lambda(t_b) \sum_{i: M_{C,i}=0} (s(x_t, t)_i + \varepsilon_i / \sigma(t_b))^2.

    ``score_fn(x_t, t) -> [batch, n]``; ``condition_mask [batch, n]`` bool, ``True`` = observed (no loss there).
    """
    std = sde.std(t)
    x_t = torch.where(condition_mask, x0, sde.mean_factor(t)[:, None] * x0 + std[:, None] * eps)
    score = score_fn(x_t, t)
    residual = (score + eps.to(score.device) / std[:, None].to(score.device)) ** 2
    residual = torch.where(condition_mask.to(score.device), 0.0, residual)
    return (sde.loss_weight(t).to(score.device) * residual.sum(1)).mean()


def _expand(values: Tensor, like: Tensor) -> Tensor:
    """Reshape a per-sample ``[batch]`` (or scalar) tensor to broadcast against ``like`` ``[batch, ...]``."""
    values = torch.as_tensor(values, dtype=like.dtype, device=like.device)
    return values.reshape(values.shape + (1,) * (like.dim() - values.dim()))


def make_sde(name: str, **kwargs) -> VESDE | VPSDE:
    """``"vesde"`` or ``"vpsde"`` -> the SDE object (keyword arguments go to its constructor)."""
    sdes = {"vesde": VESDE, "vpsde": VPSDE}
    if name.lower() not in sdes:
        raise ValueError(f"unknown sde {name!r}; use one of {sorted(sdes)}")
    return sdes[name.lower()](**kwargs)
