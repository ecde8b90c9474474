"""The one training loop shared by GenCO and its baselines: a group loss (GAN or VAE) on decoded designs plus a
weighted individual loss, where only the decoding differs (a solver for GenCO, a softmax for the baselines).

Total loss (GenCO, Ferber et al., ICML 2024, Sec. 3; reconstructed): ``L = L_group({x}) + weight * sum_i
L_ind(x_i)`` with ``x = decode(G(z))``.
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from icml24._estimator import Estimator
from icml24._random import seed_int, torch_generator
from icml24._validation import FittedAttributes, check_finite, check_fitted, check_positive, check_positive_int

from .models import MLPCritic, MLPEncoder

GROUP_LOSSES = ("gan", "vae")


class GenerativeTrainer(FittedAttributes, Estimator):
    """Base class: subclasses define ``_decode(costs, train)`` (designs that the losses see) and may add a
    ``_penalty(costs, x)``. Learned state: ``critic_`` (GAN) or ``encoder_`` (VAE), ``losses_`` per step,
    ``train_feasible_`` (share of each step's designs that ``feasibility`` accepts), ``fit_seconds_``.
    ``random_state`` (None, an int or a numpy Generator) seeds the side network's initialization and the training
    noise; ``generator`` is the generative model (a module with ``latent_dim``), trained in place by ``fit``."""

    def __init__(self, generator: torch.nn.Module, group_loss: str = "gan", individual_loss=None,
                 weight: float = 1.0, feasibility=None, steps: int = 200, batch_size: int = 8, lr: float = 1e-3,
                 beta_kl: float = 1.0, hidden: int = 128, random_state=None):
        self.generator, self.group_loss, self.individual_loss = generator, group_loss, individual_loss
        self.weight, self.feasibility, self.steps, self.batch_size = weight, feasibility, steps, batch_size
        self.lr, self.beta_kl, self.hidden, self.random_state = lr, beta_kl, hidden, random_state

    def _check_params(self) -> None:
        if self.group_loss not in GROUP_LOSSES:
            raise ValueError(f"group_loss must be one of {GROUP_LOSSES}, got {self.group_loss!r}")
        if not hasattr(self.generator, "latent_dim"):
            raise TypeError("generator needs a latent_dim attribute (the size of z), e.g. MLPGenerator")
        check_positive("weight", self.weight, allow_zero=True)
        check_positive("lr", self.lr)
        check_positive("beta_kl", self.beta_kl, allow_zero=True)
        for name in ("steps", "batch_size", "hidden"):
            check_positive_int(name, getattr(self, name))

    # --- what subclasses change -------------------------------------------------------------------------------
    def _decode(self, costs: torch.Tensor, train: bool) -> torch.Tensor:
        raise NotImplementedError

    def _penalty(self, costs: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(costs.shape[0])

    def _before_fit(self) -> None:
        """Build what ``fit`` needs from the parameters (GenCO: its solver layer)."""

    # --- training ---------------------------------------------------------------------------------------------
    def fit(self, data) -> GenerativeTrainer:
        """Train on feasible designs ``data`` (N, *shape), e.g. one-hot levels."""
        self._check_params()
        data = torch.as_tensor(check_finite("data", np.asarray(data, dtype=np.float32)))
        shape = tuple(data.shape[1:])
        init_seed, torch_gen = seed_int(self.random_state), torch_generator(self.random_state)  # int: the same seed
        self._before_fit()
        with torch.random.fork_rng():
            torch.manual_seed(init_seed)  # network initialization only; global state restored on exit
            side = MLPCritic(shape, self.hidden) if self.group_loss == "gan" else \
                MLPEncoder(shape, self.generator.latent_dim, self.hidden)
        params = list(self.generator.parameters()) + ([] if self.group_loss == "gan" else list(side.parameters()))
        opt_g = torch.optim.Adam(params, lr=self.lr, betas=(0.5, 0.999))
        opt_d = torch.optim.Adam(side.parameters(), lr=self.lr, betas=(0.5, 0.999)) if self.group_loss == "gan" \
            else None
        self.losses_, self.train_feasible_ = [], []
        start = time.perf_counter()
        for _ in range(self.steps):
            real = data[torch.randint(len(data), (self.batch_size,), generator=torch_gen)]
            if self.group_loss == "gan":
                z = torch.randn(self.batch_size, self.generator.latent_dim, generator=torch_gen)
                costs = self.generator(z)
                x = self._decode(costs, train=True)
                d_loss = F.binary_cross_entropy_with_logits(side(real), torch.ones(len(real))) + \
                    F.binary_cross_entropy_with_logits(side(x.detach()), torch.zeros(len(x)))
                opt_d.zero_grad()
                d_loss.backward()
                opt_d.step()
                group = F.binary_cross_entropy_with_logits(side(x), torch.ones(len(x)), reduction="none")
            else:
                mu, logvar = side(real)
                z = mu + torch.randn(mu.shape, generator=torch_gen) * (0.5 * logvar).exp()
                costs = self.generator(z)
                x = self._decode(costs, train=True)
                recon = ((x - real) ** 2).flatten(1).sum(1)
                kl = -0.5 * (1 + logvar - mu**2 - logvar.exp()).sum(1)
                group = recon + self.beta_kl * kl
            individual = self.individual_loss(x) if self.individual_loss is not None else torch.zeros(len(x))
            loss = (group + self.weight * individual + self._penalty(costs, x)).mean()
            opt_g.zero_grad()
            loss.backward()
            opt_g.step()
            self.losses_.append(float(loss.detach()))
            if self.feasibility is not None:
                self.train_feasible_.append(float(np.mean(self.feasibility(self._hard(x.detach())))))
        self.fit_seconds_ = time.perf_counter() - start
        if self.group_loss == "gan":
            self.critic_ = side
        else:
            self.encoder_ = side
        self.shape_ = shape
        return self

    def _one_hot(self, size: int) -> bool:
        """Whether the decoded designs are one-hot over their last axis (of length ``size``). The softmax decoding
        of the baselines is; GenCO asks its solver (``GenCO._one_hot``)."""
        return True

    def _hard(self, x: torch.Tensor) -> np.ndarray:
        """Designs as the checker reads them: one-hot designs (``_one_hot``) as the argmax over the last axis (level
        tiles (B, H, W, T) -> tile indices (B, H, W)); any other design space as decoded, in its own shape."""
        return x.argmax(-1).numpy() if self._one_hot(x.shape[-1]) else x.numpy()

    def sample(self, n: int, random_state=None) -> np.ndarray:
        """``n`` designs from the prior (N(0, I) latents), hard-decoded (``_hard``): for one-hot levels, (n, H, W)
        tile indices; for any other design space, the designs themselves, (n, *shape) (GenCO: the solver's feasible
        solutions). ``random_state``: None, an int, a numpy Generator or a torch Generator (used as is)."""
        check_fitted(self, "shape_")
        with torch.no_grad():
            z = torch.randn(int(n), self.generator.latent_dim, generator=torch_generator(random_state))
            return self._hard(self._decode(self.generator(z), train=False))
