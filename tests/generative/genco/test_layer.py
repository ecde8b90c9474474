"""The solver layer: feasible forward, finite gradients that reduce a simple objective, every estimator."""

import numpy as np
import pytest
import torch

from icml24.generative import MILPSolver, ShortestPathSolver, SolverLayer


def _choose_k(n=6, k=2):
    return MILPSolver(n, A_eq=np.ones((1, n)), b_eq=[k], ub=np.ones(n), integrality=np.ones(n))


@pytest.mark.parametrize("gradient", ["blackbox", "perturbed", "identity"])
def test_forward_feasible_and_gradient_descent_reduces_a_linear_loss(gradient):
    layer = SolverLayer(_choose_k(), gradient=gradient, lam=2.0, sigma=1.0, samples=8, random_state=0)
    target = torch.tensor([[0.0, 0, 0, 0, 1, 1]])  # loss = -target^T x is lowest at choosing 4 and 5
    costs = torch.tensor([[1.0, 0.9, 0.8, 0.0, -0.5, -0.6]], requires_grad=True)
    opt = torch.optim.SGD([costs], lr=1.0)
    losses = []
    for _ in range(20):
        x = layer(costs)
        assert x.sum().item() == 2 and set(x.unique().tolist()) <= {0.0, 1.0}  # feasible every step
        loss = -(x * target).sum()
        opt.zero_grad()
        loss.backward()
        assert torch.isfinite(costs.grad).all()
        opt.step()
        losses.append(loss.item())
        if losses[-1] == -2:
            break
    assert losses[0] == 0 and losses[-1] == -2  # from choosing neither to choosing both


def test_blackbox_gradient_sign_for_a_minimizer():
    layer = SolverLayer(ShortestPathSolver(2, 3, diagonal=False), gradient="blackbox", lam=5.0)
    costs = torch.tensor([[1.0, 1.0, 1.0, 3.0, 3.0, 1.0]], requires_grad=True)
    x = layer(costs)
    assert x[0].tolist() == [1, 1, 1, 0, 0, 1]
    x[0, 1].backward()  # penalize visiting cell 1: descent must raise its cost until the path avoids it
    grad = costs.grad[0]
    assert grad[1] == pytest.approx(-1 / 5) and torch.isfinite(grad).all()
    with torch.no_grad():
        assert layer(costs - 5.0 * costs.grad)[0, 1] == 0


def test_layer_rejects_bad_input():
    with pytest.raises(ValueError, match="gradient"):
        SolverLayer(_choose_k(), gradient="straight")
    with pytest.raises(TypeError, match="sense"):
        SolverLayer(object())
    with pytest.raises(ValueError, match="batch"):
        SolverLayer(_choose_k())(torch.ones(6))
    with pytest.raises(ValueError, match="NaN"):
        SolverLayer(_choose_k())(torch.full((1, 6), float("nan")))
