"""GenCO's baselines: the same generator without the solver, with a constraint penalty, or repaired afterwards.

- ``PlainGenerator``: ``x = softmax(G(z))`` over the last axis in training (the losses see soft designs); samples
  are the argmax. With ``penalty`` (a differentiable violation measure on soft designs) it is the penalty-method
  baseline: ``L = L_group + weight * L_ind + penalty_weight * penalty(x)``.
- ``RepairedGenerator``: generate-then-repair (Zhang et al., 2020): each sample of a trained generator is
  projected onto the feasible set by the solver, ``argmax_{x in X} (onehot(x_gen) + eps * softmax(c))^T x``,
  i.e. the fewest changed cells (ties broken by the generator's confidence).
"""

from __future__ import annotations

import numpy as np
import torch

from icml24._random import torch_generator
from icml24._validation import check_fitted, check_positive

from .training import GenerativeTrainer


class PlainGenerator(GenerativeTrainer):
    """The generator alone (``penalty=None``) or trained with a penalty (``penalty(soft_x) -> (B,)``)."""

    def __init__(self, generator: torch.nn.Module, group_loss: str = "gan", individual_loss=None,
                 weight: float = 1.0, penalty=None, penalty_weight: float = 1.0, feasibility=None, steps: int = 200,
                 batch_size: int = 8, lr: float = 1e-3, beta_kl: float = 1.0, hidden: int = 128, random_state=None):
        super().__init__(generator, group_loss=group_loss, individual_loss=individual_loss, weight=weight,
                         feasibility=feasibility, steps=steps, batch_size=batch_size, lr=lr, beta_kl=beta_kl,
                         hidden=hidden, random_state=random_state)
        self.penalty, self.penalty_weight = penalty, penalty_weight

    def _before_fit(self) -> None:
        check_positive("penalty_weight", self.penalty_weight, allow_zero=True)

    def _decode(self, costs: torch.Tensor, train: bool) -> torch.Tensor:
        return costs.softmax(-1)

    def _penalty(self, costs: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        if self.penalty is None:
            return torch.zeros(costs.shape[0])
        return self.penalty_weight * self.penalty(x)

    def sample_costs(self, n: int, random_state=None) -> np.ndarray:
        """The generator's raw scores (n, *shape) for ``n`` prior latents (the input of a repair)."""
        check_fitted(self, "shape_")
        with torch.no_grad():
            z = torch.randn(int(n), self.generator.latent_dim, generator=torch_generator(random_state))
            return self.generator(z).numpy()


class RepairedGenerator:
    """Generate-then-repair: ``base`` (a fitted ``PlainGenerator``) samples, ``solver`` projects each sample."""

    KIND = "component"  # icml24._contract

    def __init__(self, base: PlainGenerator, solver, eps: float = 0.01):
        self.base, self.solver, self.eps = base, solver, check_positive("eps", eps)
        if getattr(solver, "sense", None) != "max":
            raise ValueError("repair needs a maximizing solver (x* = argmax c^T x over the feasible set)")

    def repair(self, costs: np.ndarray) -> np.ndarray:
        """Project raw scores (n, ..., T) to the closest feasible one-hot designs (n, ..., T)."""
        costs = np.asarray(costs, dtype=float)
        hard = np.eye(costs.shape[-1])[costs.argmax(-1)]
        soft = np.exp(costs - costs.max(-1, keepdims=True))
        soft /= soft.sum(-1, keepdims=True)
        target = hard + self.eps * soft  # Hamming distance to the generated design, then its confidence
        return self.solver.solve(target.reshape(len(costs), -1)).reshape(costs.shape)

    def sample(self, n: int, random_state=None) -> np.ndarray:
        return self.repair(self.base.sample_costs(n, random_state)).argmax(-1)
