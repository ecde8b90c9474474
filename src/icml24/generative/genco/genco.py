"""GenCO: a generator whose output parameterizes a combinatorial solver (Ferber et al., ICML 2024).

Algorithm (Sec. 3, reconstructed; see the paper page): ``z ~ N(0, I)``, ``c = G(z)``, ``x = x*(c) = argmax_{x in X}
c^T x`` (every ``x`` feasible, in training as at sampling), ``L = L_group({x}) + weight * sum L_ind(x)``, with
``dx*/dc`` from blackbox differentiation, perturbed optimizers or straight-through (``SolverLayer``).
"""

from __future__ import annotations

import torch

from icml24._random import seed_int

from .layer import SolverLayer
from .training import GenerativeTrainer


class GenCO(GenerativeTrainer):
    """``GenCO(generator, solver, group_loss="gan"|"vae", individual_loss=...)``.

    ``generator`` maps ``z`` to costs of the solver's shape (e.g. ``MLPGenerator(16, (H, W, 6))`` for
    ``zelda_milp(H, W)``); ``solver`` is a ``MILPSolver``/``ShortestPathSolver``; ``gradient``, ``lam``, ``sigma``,
    ``samples`` configure the ``SolverLayer``. ``individual_loss(x) -> (B,)`` is the combinatorial objective on
    feasible designs, weighted by ``weight``. ``feasibility(designs) -> bools`` (an independent checker) is
    recorded at every training step in ``train_feasible_``; ``solves_`` counts solver calls.

    ``sample`` (and ``feasibility``) see the solver's designs in the design space's shape, except where the solver
    says the space is one-hot over the last axis (``solver.is_one_hot(T)``: ``MILPSolver`` reads it from its
    constraints, e.g. ``zelda_milp``'s one tile per cell): then the argmax, e.g. (n, H, W) tile indices. A
    "choose 3 of 8" MILP samples (n, 8) 0/1 vectors with row sums 3.
    """

    def __init__(self, generator: torch.nn.Module, solver, group_loss: str = "gan", individual_loss=None,
                 weight: float = 1.0, gradient: str = "blackbox", lam: float = 10.0, sigma: float = 1.0,
                 samples: int = 4, feasibility=None, steps: int = 200, batch_size: int = 8, lr: float = 1e-3,
                 beta_kl: float = 1.0, hidden: int = 128, random_state=None):
        super().__init__(generator, group_loss=group_loss, individual_loss=individual_loss, weight=weight,
                         feasibility=feasibility, steps=steps, batch_size=batch_size, lr=lr, beta_kl=beta_kl,
                         hidden=hidden, random_state=random_state)
        self.solver, self.gradient, self.lam, self.sigma, self.samples = solver, gradient, lam, sigma, samples

    def _before_fit(self) -> None:
        """The solver layer, its perturbation noise seeded by ``random_state`` (as the training's)."""
        self.layer_ = SolverLayer(self.solver, gradient=self.gradient, lam=self.lam, sigma=self.sigma,
                                  samples=self.samples, random_state=seed_int(self.random_state))

    def _decode(self, costs: torch.Tensor, train: bool) -> torch.Tensor:
        return self.layer_(costs)  # x*(c): feasible by construction

    def _one_hot(self, size: int) -> bool:
        """One-hot only where the solver says so (a solver without ``is_one_hot`` returns its designs as they are)."""
        check = getattr(self.solver, "is_one_hot", None)
        return bool(check(size)) if callable(check) else False

    @property
    def solves_(self) -> int:
        return self.layer_.solves_
