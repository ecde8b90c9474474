"""The solvers: feasible optima that match a direct HiGHS solve, and the fast shortest path against its MILP."""

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from icml24.generative import MILPSolver, ShortestPathSolver, shortest_path_milp


def _knapsack(rng, n=12):
    weights = rng.integers(1, 10, n).astype(float)
    return weights, weights.sum() / 2


def test_milp_forward_is_feasible_and_matches_a_direct_highs_solve_on_random_costs():
    rng = np.random.default_rng(0)
    weights, cap = _knapsack(rng)
    solver = MILPSolver(12, A_ub=weights[None], b_ub=[cap], lb=np.zeros(12), ub=np.ones(12),
                        integrality=np.ones(12), sense="max")
    costs = rng.standard_normal((10, 12))
    x = solver.solve(costs)
    assert set(np.unique(x)) <= {0.0, 1.0} and (x @ weights <= cap + 1e-9).all()
    for c, xi in zip(costs, x):
        direct = milp(-c, constraints=LinearConstraint(weights[None], -np.inf, cap), bounds=Bounds(0, 1),
                      integrality=np.ones(12))
        assert c @ xi == pytest.approx(-direct.fun, abs=1e-7)
        assert c @ xi >= c @ (rng.random(12) < 0.0)  # at least the empty knapsack


def test_minimizing_sense_and_single_vector():
    solver = MILPSolver(3, A_eq=np.ones((1, 3)), b_eq=[1], lb=np.zeros(3), ub=np.ones(3), integrality=np.ones(3),
                        sense="min")
    assert solver.solve(np.array([3.0, -1.0, 2.0])).tolist() == [0.0, 1.0, 0.0]


def test_milp_rejects_bad_input():
    solver = MILPSolver(2, A_eq=np.ones((1, 2)), b_eq=[1], ub=np.ones(2), integrality=np.ones(2))
    with pytest.raises(ValueError, match="NaN"):
        solver.solve(np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="expects 2"):
        solver.solve(np.ones(3))
    with pytest.raises(ValueError, match="sense"):
        MILPSolver(2, sense="maximize")
    infeasible = MILPSolver(2, A_eq=np.ones((1, 2)), b_eq=[3], ub=np.ones(2), integrality=np.ones(2))
    with pytest.raises(RuntimeError, match="no feasible"):
        infeasible.solve(np.ones(2))


@pytest.mark.parametrize("diagonal", [True, False])
def test_dijkstra_batch_matches_the_milp_and_returns_connected_paths(diagonal):
    rng = np.random.default_rng(1)
    h, w = 6, 7
    costs = rng.uniform(0.1, 5.0, (6, h * w))
    fast, exact = ShortestPathSolver(h, w, diagonal=diagonal), shortest_path_milp(h, w, diagonal=diagonal)
    paths = fast.solve(costs)
    np.testing.assert_allclose(fast.objective(costs, paths), exact.objective(costs, exact.solve(costs)), atol=1e-7)
    for path in paths.reshape(-1, h, w):
        assert path[0, 0] == 1 and path[-1, -1] == 1
        cells = np.argwhere(path)  # every visited cell but the start has a visited neighbour
        for r, c in cells:
            near = path[max(r - 1, 0):r + 2, max(c - 1, 0):c + 2] if diagonal else \
                np.array([path[r2, c2] for r2, c2 in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
                          if 0 <= r2 < h and 0 <= c2 < w])
            assert near.sum() - (path[r, c] if diagonal else 0) >= 1


def test_dijkstra_takes_the_cheap_corridor_and_rejects_negative_costs():
    grid = np.full((3, 3), 9.0)
    grid[0, :] = 1
    grid[:, -1] = 1
    path = ShortestPathSolver(3, 3, diagonal=False).solve(grid.ravel()).reshape(3, 3)
    assert path[0].tolist() == [1, 1, 1] and path[:, -1].tolist() == [1, 1, 1] and path.sum() == 5
    with pytest.raises(ValueError, match=">= 0"):
        ShortestPathSolver(3, 3).solve(-grid.ravel())


def test_sparse_constraints_accepted():
    A = sparse.csr_array(np.ones((1, 4)))
    x = MILPSolver(4, A_eq=A, b_eq=[2], ub=np.ones(4), integrality=np.ones(4)).solve(np.array([1.0, 4, 3, 2]))
    assert x.tolist() == [0, 1, 1, 0]


def test_one_hot_is_read_from_the_constraints():
    """One-hot blocks: binary cost variables with an equality row summing each block of ``size`` to 1."""
    from icml24.generative import zelda_milp

    n, ones = 8, np.ones((1, 8))
    choose3 = MILPSolver(n, A_eq=ones, b_eq=[3], lb=np.zeros(n), ub=np.ones(n), integrality=np.ones(n))
    choose1 = MILPSolver(n, A_eq=ones, b_eq=[1], lb=np.zeros(n), ub=np.ones(n), integrality=np.ones(n))
    relaxed = MILPSolver(n, A_eq=ones, b_eq=[1], lb=np.zeros(n), ub=np.ones(n))  # continuous: a simplex
    blocks = MILPSolver(n, A_eq=np.kron(np.eye(2), np.ones((1, 4))), b_eq=[1, 1], ub=np.ones(n),
                        integrality=np.ones(n))
    assert not choose3.is_one_hot(8) and choose1.is_one_hot(8) and not relaxed.is_one_hot(8)
    assert blocks.is_one_hot(4) and not blocks.is_one_hot(8) and not blocks.is_one_hot(3)
    assert zelda_milp(5, 6).is_one_hot(6) and not shortest_path_milp(3, 3).is_one_hot(9)
    assert not hasattr(ShortestPathSolver(3, 3), "is_one_hot")  # path indicators: GenCO returns them as they are
