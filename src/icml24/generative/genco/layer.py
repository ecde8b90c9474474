"""A combinatorial solver as a torch layer: feasible forward, a selectable gradient estimator backward.

GenCO (Ferber et al., ICML 2024) puts a solver after the generator so every output is feasible; the
generative loss sees only solver outputs and reaches the generator through an estimate of ``dx*/dc``:

- ``"blackbox"``: differentiation of blackbox combinatorial solvers (Vlastelica et al., 2020, Eq. 7). For a
  minimizer ``y(w) = argmin w^T y`` the gradient is ``-(y(w) - y(w + lam * dL/dy)) / lam``; for a maximizer
  (``c = -w``) it is ``(x(c) - x(c - lam * dL/dx)) / lam``. One extra solve per sample.
- ``"perturbed"``: perturbed optimizers (Berthet et al., 2020, Prop. 3.1): ``dL/dc = E[(x*(c + s Z) - x*(c))^T
  dL/dx * Z] / s`` with Gaussian ``Z`` (the ``x*(c)`` term is a zero-mean control variate), ``samples`` solves.
- ``"identity"``: straight-through, ``dL/dc = dL/dx`` for a maximizer (the negative identity of Sahoo et al.,
  2023, for a minimizer).

The forward always returns the unperturbed ``x*(c)``, never an average, so what the loss sees is feasible.
"""

from __future__ import annotations

import numpy as np
import torch

from icml24._random import seed_int
from icml24._validation import check_positive

GRADIENTS = ("blackbox", "perturbed", "identity")


class _Solve(torch.autograd.Function):
    @staticmethod
    def forward(ctx, costs, layer):
        x = layer.solver.solve(costs.detach().cpu().double().numpy().reshape(costs.shape[0], -1))
        out = torch.as_tensor(x, dtype=costs.dtype, device=costs.device).reshape(costs.shape)
        ctx.layer = layer
        ctx.save_for_backward(costs, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        costs, x = ctx.saved_tensors
        layer = ctx.layer
        sign = 1.0 if layer.solver.sense == "max" else -1.0  # work with a maximizer: c_max = sign * c
        shape = costs.shape
        c = sign * costs.detach().cpu().double().numpy().reshape(shape[0], -1)
        g = grad_out.detach().cpu().double().numpy().reshape(shape[0], -1)
        x0 = x.detach().cpu().double().numpy().reshape(shape[0], -1)
        if layer.gradient == "identity":
            grad = g
        elif layer.gradient == "blackbox":
            x_lam = layer.solver.solve(sign * (c - layer.lam * g))  # Vlastelica et al. 2020, Eq. 7 (maximizer)
            grad = (x0 - x_lam) / layer.lam
        else:
            rng = np.random.default_rng(layer._next_seed())
            grad = np.zeros_like(c)
            base = np.einsum("bi,bi->b", x0, g)
            for _ in range(layer.samples):  # Berthet et al. 2020, Prop. 3.1
                z = rng.standard_normal(c.shape)
                xs = layer.solver.solve(sign * (c + layer.sigma * z))
                grad += (np.einsum("bi,bi->b", xs, g) - base)[:, None] * z
            grad /= layer.samples * layer.sigma
        grad = sign * grad
        return torch.as_tensor(grad, dtype=costs.dtype, device=costs.device).reshape(shape), None


class SolverLayer(torch.nn.Module):
    """``x = SolverLayer(solver)(c)``: a batch of costs (B, ...) to feasible solutions of the same shape.

    ``gradient`` picks the estimator (``"blackbox"``, ``"perturbed"``, ``"identity"``); ``lam`` is the blackbox
    interpolation strength, ``sigma``/``samples`` the perturbation scale and count. ``random_state`` (None, an
    int, a numpy Generator or SeedSequence) fixes the perturbation noise (a private stream; global RNG state is
    never touched).
    """

    def __init__(self, solver, gradient: str = "blackbox", lam: float = 10.0, sigma: float = 1.0, samples: int = 4,
                 random_state=None):
        super().__init__()
        if gradient not in GRADIENTS:
            raise ValueError(f"gradient must be one of {GRADIENTS}, got {gradient!r}")
        if not hasattr(solver, "solve") or getattr(solver, "sense", None) not in ("max", "min"):
            raise TypeError("solver needs solve(costs) and sense 'max'/'min' (see MILPSolver, ShortestPathSolver)")
        self.solver, self.gradient = solver, gradient
        self.lam, self.sigma = check_positive("lam", lam), check_positive("sigma", sigma)
        if int(samples) < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.samples = int(samples)
        self._seeds = (random_state if isinstance(random_state, np.random.SeedSequence)
                       else np.random.SeedSequence(seed_int(random_state)))
        self.solves_ = 0

    def _next_seed(self) -> int:
        return int(self._seeds.spawn(1)[0].generate_state(1)[0])

    def forward(self, costs: torch.Tensor) -> torch.Tensor:
        if costs.dim() < 2:
            raise ValueError(f"costs must be a batch (B, ...), got shape {tuple(costs.shape)}; use costs[None]")
        if not torch.isfinite(costs).all():
            raise ValueError("costs contains NaN or infinite values; check the generator's output")
        extra = {"blackbox": 1, "perturbed": self.samples, "identity": 0}[self.gradient]
        self.solves_ += costs.shape[0] * (1 + (extra if costs.requires_grad else 0))
        return _Solve.apply(costs, self)
