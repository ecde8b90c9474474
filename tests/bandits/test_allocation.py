"""The optimal allocation of the regret lower bound (E4's estimate step), against closed forms and cvxpy."""

import numpy as np
import pytest

from icml24.bandits import optimal_allocation


def test_allocation_closed_form_orthogonal_arms():
    # arms e_1..e_d, best e_1: H(w) is diagonal, the constraint 1/w_j <= Delta_j^2/2 gives w_j = 2/Delta_j^2
    gaps = np.array([0.0, 0.5, 0.2, 1.0])
    result = optimal_allocation(np.eye(4), gaps, best=0, tol=1e-8)
    assert np.isinf(result.weights[0])
    np.testing.assert_allclose(result.weights[1:], 2 / gaps[1:] ** 2, rtol=1e-4)
    assert result.objective == pytest.approx(np.sum(2 / gaps[1:]), rel=1e-4)


def test_allocation_end_of_optimism_value():
    # EoO d=2: with w_best -> inf only the e_2 direction matters; both constraints ask w_2 + 4e^2 w_1 >= 8 (eps=.01)
    eps = 0.01
    arms = np.array([[1.0, 0.0], [1 - eps, 2 * eps], [0.0, 1.0]])
    gaps = np.array([0.0, eps, 1.0])
    result = optimal_allocation(arms, gaps, best=0)
    assert result.objective == pytest.approx(8.0, rel=1e-3)
    assert result.max_ratio <= 1 + 1e-3


@pytest.mark.parametrize("seed", [0, 1])
def test_allocation_is_feasible_and_not_improvable_locally(seed):
    rng = np.random.default_rng(seed)
    arms = rng.uniform(0, 1, (8, 4))
    arms[0] = [1, 0, 0, 0]
    gaps = 1 - arms[:, 0]
    result = optimal_allocation(arms, gaps, best=0, tol=1e-6)
    assert result.converged and result.max_ratio <= 1 + 1e-6
    # shrinking any single weight by 2% breaks feasibility or leaves the cost no lower than the optimum
    w = result.weights.copy()
    w[0] = 1e9
    for j in range(1, 8):
        if w[j] > 1e-6 * w[1:].max():
            trial = w.copy()
            trial[j] *= 0.98
            gram = (arms.T * trial) @ arms
            ratios = 2 * np.einsum("kd,de,ke->k", arms[1:], np.linalg.inv(gram), arms[1:]) / gaps[1:] ** 2
            assert ratios.max() > 1 - 1e-4


def test_allocation_matches_cvxpy_reference():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(3)
    arms = rng.uniform(0, 1, (6, 3))
    arms[0] = [1, 0, 0]
    gaps = 1 - arms[:, 0]
    w = cp.Variable(6, nonneg=True)
    gram = sum(w[j] * np.outer(arms[j], arms[j]) for j in range(6))
    constraints = [cp.bmat([[gram, arms[i][:, None]], [arms[i][None, :], np.array([[gaps[i] ** 2 / 2]])]]) >> 0
                   for i in range(1, 6)]
    problem = cp.Problem(cp.Minimize(w @ gaps), constraints)
    problem.solve(solver="CLARABEL")
    ours = optimal_allocation(arms, gaps, best=0, tol=1e-6)
    assert ours.objective == pytest.approx(problem.value, rel=1e-2)


def test_allocation_validates_inputs():
    with pytest.raises(ValueError, match="gaps"):
        optimal_allocation(np.eye(3), np.zeros(2))
    with pytest.raises(ValueError, match="gaps contains NaN"):
        optimal_allocation(np.eye(2), np.array([0.0, np.nan]))


def test_allocation_of_a_single_arm_is_empty():
    result = optimal_allocation(np.array([[1.0, 0.0]]), np.zeros(1))
    assert np.isinf(result.weights[0]) and result.objective == 0.0 and result.converged
