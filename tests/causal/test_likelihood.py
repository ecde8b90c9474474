"""The marginal likelihood and Jacobian term: autograd gradients against finite differences, the median heuristic."""

import numpy as np
import pytest
import torch

from icml24.causal import LearnedKernelScore, MarginalKernelScore, median_width
from icml24.causal.likelihood import jacobian_term, log_marginal_likelihood, squared_distances


def _pair(seed=0, n=40):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n)
    b = np.sin(2 * a) + 0.3 * rng.standard_normal(n)
    c = a**2 + b + 0.2 * rng.standard_normal(n)
    return np.column_stack([a, b, c])


@pytest.mark.parametrize("parents", [[0, 1], [], [1]])
def test_gradient_of_the_score_matches_central_finite_differences(parents):
    score = LearnedKernelScore().fit(_pair())
    objective, init, _ = score.problem(2, parents)
    theta = torch.tensor(init * 1.1, requires_grad=True)  # away from the initialisation
    objective(theta).backward()
    numeric = []
    for i in range(len(init)):
        step = np.zeros_like(init)
        step[i] = 1e-6
        plus = objective(torch.tensor(init * 1.1 + step)).item()
        minus = objective(torch.tensor(init * 1.1 - step)).item()
        numeric.append((plus - minus) / 2e-6)
    assert np.allclose(theta.grad.numpy(), numeric, rtol=1e-4, atol=1e-7)
    assert np.abs(numeric).max() > 1e-4  # the check is not vacuous: the score moves with the parameters


def test_marginal_likelihood_matches_a_dense_formula():
    """The official data-fit term: the n columns of Phi = K_X are GP outputs, -1/2 tr(K_X A^-1 K_X) (official
    MIModel.ConditionalLikelihood), written densely with an explicit inverse; the trace of A^-1 K_X alone (the
    RKHS feature-map form an earlier version used) is a different number and is refused."""
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((12, 1)))
    kx = torch.exp(-0.5 * squared_distances(x))
    kpa = torch.exp(-0.5 * squared_distances(torch.tensor(rng.standard_normal((12, 2)))))
    n, noise = 12, 0.3
    k = kpa + noise * torch.eye(n, dtype=torch.float64)
    inverse = torch.linalg.inv(k)
    log_2pi = 0.5 * n * n * np.log(2 * np.pi)
    expected = -0.5 * torch.trace(kx @ inverse @ kx) - 0.5 * n * torch.logdet(k) - log_2pi
    value = log_marginal_likelihood(kx, kpa, torch.tensor(noise, dtype=torch.float64)).item()
    assert value == pytest.approx(expected.item(), rel=1e-10)
    old = -0.5 * torch.trace(kx @ inverse) - 0.5 * n * torch.logdet(k) - log_2pi
    assert abs(value - old.item()) > 1e-3 * abs(value)


def test_jacobian_term_matches_the_explicit_derivative_norms():
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.standard_normal((15, 2)))
    width = torch.tensor(0.8, dtype=torch.float64)
    dist = squared_distances(x)
    kx = torch.exp(-0.5 * dist / width**2)
    grad = -(x[:, None, :] - x[None, :, :]) / width**2 * kx[:, :, None]
    norms = torch.linalg.norm(grad, dim=2)
    kept = norms**2 > 1e-3
    expected = torch.log(norms[kept]).sum() * (15 * 15 / int(kept.sum()))
    assert jacobian_term(dist, kx, width).item() == pytest.approx(expected.item(), rel=1e-10)


def test_median_width_is_the_official_heuristic_and_survives_constants():
    z = np.array([[0.0], [1.0], [3.0]])  # squared distances 1, 9, 4 -> median 4
    assert median_width(z) == pytest.approx(2.5 * np.sqrt(2.0))
    assert median_width(np.ones((5, 1))) == pytest.approx(2.5)


@pytest.mark.parametrize("cls", [LearnedKernelScore, MarginalKernelScore])
@pytest.mark.parametrize("parents", [[0, 1], [], [1]])
def test_closed_form_gradient_equals_autograd(cls, parents):
    """L-BFGS-B uses value_and_grad (closed form): it must be the autograd objective and gradient, to rounding."""
    objective, init, _ = cls().fit(_pair()).problem(2, parents)
    for theta in (init * 1.1, np.array([0.3] * (len(init) - 1) + [0.02])):  # the second: many Jacobian entries cut
        t = torch.tensor(theta, requires_grad=True)
        objective(t).backward()
        value, grad = objective.value_and_grad(theta)
        assert value == pytest.approx(objective(torch.tensor(theta)).item(), rel=1e-12, abs=1e-12)
        assert np.allclose(grad, t.grad.numpy(), rtol=1e-9, atol=1e-12)
        assert np.abs(grad).max() > 1e-4


@pytest.mark.parametrize("z,factor,message", [
    (np.array([[0.0], [np.nan], [3.0]]), 2.5, "z contains NaN or infinite"),
    (np.array([[0.0], [np.inf]]), 2.5, "z contains NaN or infinite"),
    (np.zeros((0, 2)), 2.5, "z must hold at least one sample"),
    (np.array([[0.0], [1.0]]), -1.0, r"factor must be a finite number > 0"),
])
def test_median_width_refuses_bad_input_naming_it(z, factor, message):
    with pytest.raises(ValueError, match=message):
        median_width(z, factor)
