import math

import numpy as np
import pytest
import torch

from icml24.sbi.metrics import c2st
from icml24.sbi.tasks import LinearGaussianTask, TwoMoons, gaussian_linear, gaussian_tree, get_task, markov_chain


def test_gaussian_linear_posterior_closed_form():
    task = gaussian_linear(10)
    x_o = np.linspace(-0.5, 0.5, 10)
    mask = np.arange(20) >= 10
    mean, cov = task.conditional(mask, np.concatenate([np.zeros(10), x_o]))
    # prior N(0, 0.1 I), likelihood N(theta, 0.1 I) -> posterior N(x/2, 0.05 I)
    assert np.allclose(mean, x_o / 2)
    assert np.allclose(cov, 0.05 * np.eye(10))


def test_tree_conditional_matches_precision_formula():
    tree = gaussian_tree()
    rng = np.random.default_rng(0)
    mask = np.array([0, 1, 0, 1, 0, 0, 1], dtype=bool)
    values = rng.normal(size=7)
    mean, cov = tree.conditional(mask, values)
    precision = np.linalg.inv(tree.cov)
    free = ~mask
    p_ff = precision[np.ix_(free, free)]
    expected_cov = np.linalg.inv(p_ff)
    expected_mean = tree.mean[free] - expected_cov @ precision[np.ix_(free, mask)] @ (values[mask] - tree.mean[mask])
    assert np.allclose(cov, expected_cov) and np.allclose(mean, expected_mean)
    # the joint covariance of the tree: var(theta1) = 2, cov(x0, x2) = cov(theta1, theta2) = 1
    assert np.isclose(tree.cov[1, 1], 2.0) and np.isclose(tree.cov[3, 5], 1.0)


def test_simulated_joint_matches_moments():
    chain = markov_chain(4)
    samples = chain.simulate_joint(40000, torch.Generator().manual_seed(0)).double().numpy()
    assert np.allclose(np.cov(samples.T), chain.cov, atol=0.05)


def test_two_moons_grid_reference_matches_sbibm_or_simulation():
    moons = TwoMoons()
    x_o = moons.observation(1)
    generator = torch.Generator().manual_seed(0)
    grid = moons.reference_posterior(x_o, 500, generator, grid=1000)
    assert grid.shape == (500, 2) and grid.abs().max() <= 1
    # every grid sample re-simulates close to x_o (the moon has radius 0.1 +- 0.01)
    resim = moons.simulate(grid, generator)
    assert float((resim - x_o).norm(dim=1).max()) < 0.25
    shipped = moons.reference_posterior(x_o, 500, generator, index=1)
    if shipped.shape[0] == 500:
        assert c2st(shipped, grid, random_state=1) < 0.6


def test_c2st_identical_vs_shifted_and_parity_with_sbi():
    generator = torch.Generator().manual_seed(0)
    a, b = torch.randn(400, 2, generator=generator), torch.randn(400, 2, generator=generator)
    assert abs(c2st(a, b, random_state=1) - 0.5) < 0.08
    assert c2st(a, b + 3.0, random_state=1) > 0.97
    from sbi.utils.metrics import c2st as sbi_c2st

    assert abs(c2st(a, b + 0.5, random_state=1) - float(sbi_c2st(a, b + 0.5))) < 1e-12
    mlp = c2st(a, b + 0.5, random_state=1, classifier="mlp")
    assert abs(mlp - float(sbi_c2st(a, b + 0.5, classifier="mlp"))) < 1e-12
    with pytest.raises(ValueError, match="same d"):
        c2st(a, b[:, :1])
    with pytest.raises(ValueError, match="NaN"):
        c2st(a, b * float("nan"))


def test_tasks_never_touch_the_global_generator_and_observations_are_constants():
    state = torch.get_rng_state()
    for name in ("gaussian_linear", "gaussian_tree", "markov_chain", "two_moons"):
        task = get_task(name)
        assert task.simulate_joint(5).shape == (5, task.num_variables)
        assert task.prior().event_shape == (task.num_theta,)
        assert torch.equal(task.observation(2), get_task(name).observation(2))
        task.reference_posterior(task.observation(1), 4)
    gaussian_tree().sample_conditional(3, np.arange(7) < 3, np.zeros(7))
    TwoMoons().simulate(torch.zeros(3, 2))
    assert torch.equal(state, torch.get_rng_state())


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_input_is_rejected_naming_the_argument(bad):
    task, moons = gaussian_linear(2), TwoMoons()
    with pytest.raises(ValueError, match="x_observed contains NaN"):
        task.reference_posterior(torch.tensor([0.1, bad]), 5)
    with pytest.raises(ValueError, match="observed entries"):
        task.sample_conditional(5, [False, False, True, True], [0.0, 0.0, bad, 0.0])
    with pytest.raises(ValueError, match="theta contains NaN"):
        moons.simulate(torch.tensor([[0.1, bad]]))
    with pytest.raises(ValueError, match="x_observed contains NaN"):
        moons.reference_posterior(torch.tensor([bad, 0.0]), 5)
    with pytest.raises(ValueError, match="noise_std contains NaN"):
        LinearGaussianTask(np.zeros((2, 2)), [1.0, bad], 1)
    with pytest.raises(ValueError, match="X contains NaN"):
        c2st(torch.tensor([[bad], [0.0]]), torch.zeros(2, 1))
    with pytest.raises(ValueError, match="Y contains NaN"):
        c2st(torch.zeros(2, 1), torch.tensor([[bad], [0.0]]))


def test_bad_task_shapes_are_rejected():
    with pytest.raises(ValueError, match="num_theta"):
        LinearGaussianTask(np.zeros((2, 2)), 1.0, 2)
    with pytest.raises(ValueError, match="noise_std must be > 0"):
        LinearGaussianTask(np.zeros((2, 2)), [1.0, 0.0], 1)
    with pytest.raises(ValueError, match="every variable is observed"):
        gaussian_linear(1).conditional([True, True], [0.0, 0.0])
    with pytest.raises(ValueError, match="unknown task"):
        get_task("slcp")


def test_product_task_exact_conditional_of_theta2():
    """x = theta_1 theta_2 + 0.1 eps: p(theta_2 | theta_1 = 0.5, x = 0.3) is N(0.6, 0.2^2) truncated to [-1, 1]."""
    from icml24.sbi import ProductTask

    task = ProductTask()
    mean, sd = task.theta2_moments(0.5, 0.3)
    grid = np.linspace(-1, 1, 200_001)
    weights = np.exp(-0.5 * ((0.3 - 0.5 * grid) / 0.1) ** 2)
    weights /= weights.sum()
    assert mean == pytest.approx((weights * grid).sum(), abs=1e-6) and abs(mean - 0.589) < 1e-3
    assert sd == pytest.approx(np.sqrt((weights * (grid - mean) ** 2).sum()), abs=1e-6)
    samples = task.sample_theta2(100_000, 0.5, 0.3, torch.Generator().manual_seed(0))
    assert float(samples.mean()) == pytest.approx(mean, abs=4 * sd / math.sqrt(100_000))
    assert float(samples.max()) <= 1.0 and float(samples.std()) == pytest.approx(sd, rel=0.02)
    joint = task.simulate_joint(5000, torch.Generator().manual_seed(1))
    residual = joint[:, 2] - joint[:, 0] * joint[:, 1]
    assert joint.shape == (5000, 3) and float(residual.std()) == pytest.approx(0.1, rel=0.05)
    assert get_task("product").graph.tolist() == [[True, False, False], [False, True, False], [True, True, True]]
    with pytest.raises(ValueError, match="theta1"):
        task.sample_theta2(5, 0.0, 0.3)
    with pytest.raises(ValueError, match="noise_std"):
        ProductTask(noise_std=0.0)


def test_an_int_random_state_is_the_generator_it_seeds():
    """Issue #46: ``random_state=7`` draws what ``torch.Generator().manual_seed(7)`` drew as ``generator``."""
    task = get_task("two_moons")
    assert torch.equal(task.simulate_joint(5, 7), task.simulate_joint(5, torch.Generator().manual_seed(7)))
    assert not torch.equal(task.simulate_joint(5, 7), task.simulate_joint(5, 8))
