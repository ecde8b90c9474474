"""Small networks for GenCO's generators: an MLP generator of cost tensors, an MLP critic and a VAE encoder."""

from __future__ import annotations

import math

import torch
from torch import nn

from icml24._random import seed_int


class MLPGenerator(nn.Module):
    """``z`` (B, latent_dim) to a cost tensor (B, *shape): the problem representation a solver consumes.
    ``random_state`` (None, an int or a numpy Generator) fixes the initial weights without touching the global
    torch RNG (None: fresh entropy)."""

    def __init__(self, latent_dim: int, shape: tuple[int, ...], hidden: int = 128, random_state=None):
        super().__init__()
        self.latent_dim, self.shape = int(latent_dim), tuple(int(s) for s in shape)
        with torch.random.fork_rng():  # seeded initialisation; the caller's global RNG is left as it was
            torch.manual_seed(seed_int(random_state))  # None: fresh entropy (seed_int draws it)
            self.net = nn.Sequential(nn.Linear(self.latent_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                     nn.ReLU(), nn.Linear(hidden, math.prod(self.shape)))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z).reshape(z.shape[0], *self.shape)


class MLPCritic(nn.Module):
    """A discriminator on flattened designs (B, *shape) to one logit per design."""

    def __init__(self, shape: tuple[int, ...], hidden: int = 128):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(math.prod(shape), hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


class MLPEncoder(nn.Module):
    """A VAE encoder: a design (B, *shape) to the mean and log-variance of q(z | x)."""

    def __init__(self, shape: tuple[int, ...], latent_dim: int, hidden: int = 128):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(math.prod(shape), hidden), nn.ReLU(),
                                 nn.Linear(hidden, 2 * latent_dim))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, logvar = self.net(x).chunk(2, dim=-1)
        return mu, logvar.clamp(-8, 8)
