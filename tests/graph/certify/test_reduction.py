"""Exact column reductions of the reduced LP2: merging identical columns, dropping dominated ones."""

import numpy as np
import pytest
import scipy.sparse as sp

from icml24.graph.certify import flip_weights, lp2, lp2_reduced, path_cost, path_costs
from icml24.graph.certify.reduction import dominated, merge_identical


def test_merge_identical_keeps_protected_columns_alone():
    coef = sp.csc_matrix(np.array([[1.0, 1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 2.0, 0.0]]))
    protected = np.array([True, False, False, False, False])
    kept, multiplicity = merge_identical(coef, protected)
    assert kept.tolist() == [0, 1, 3] and multiplicity.tolist() == [1, 3, 1]


@pytest.mark.parametrize("num_above,budget,expected", [(3, 3, True), (2, 3, False), (1, 1.0, True)])
def test_dominated_needs_the_budget_above(num_above, budget, expected):
    """Column 0 has ``num_above`` strictly larger columns; it drops iff their capacity reaches the budget."""
    cols = [[1.0, 0.0]] + [[2.0, 1.0]] * num_above + [[0.5, 3.0]]  # the last one is not above column 0
    coef = sp.csc_matrix(np.array(cols).T)
    capacity = np.ones(coef.shape[1])
    out = dominated(coef, capacity, np.zeros(coef.shape[1], dtype=bool), budget)
    assert bool(out[0]) is expected
    assert not out[1:].any() or num_above > budget  # the larger ones never drop below the budget


def test_dominated_breaks_ties_by_order_and_spares_protected():
    coef = sp.csc_matrix(np.ones((1, 4)))  # four identical columns, budget 2: the first two drop, never all
    out = dominated(coef, np.ones(4), np.zeros(4, dtype=bool), 2)
    assert out.tolist() == [True, True, False, False]
    protected = np.array([True, False, False, False])
    assert dominated(coef, np.ones(4), protected, 2).tolist() == [False, True, False, False]
    assert dominated(coef, np.array([1.0, 1.0, 1.0, 2.0]), np.zeros(4, dtype=bool), 2).tolist() == [
        True, True, True, False]


def hub_instance(seed, n=60, num_targets=6):
    """Targets on hubs with many leaves: many identical and dominated 3-hop columns."""
    rng = np.random.default_rng(seed)
    edges = [(i, int(rng.integers(0, 8))) for i in range(8, n)] + [(i, i + 1) for i in range(7)]
    edges += [tuple(rng.choice(n, 2, replace=False)) for _ in range(10)]
    rows, cols = np.array(edges).T
    adj = sp.csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(n, n))
    adj = ((adj + adj.T) > 0).astype(float)
    targets = rng.choice(n, num_targets, replace=False)
    p_a = rng.uniform(0.6, 1.0, num_targets)
    return adj, targets, flip_weights(p_a, np.minimum(1 - p_a, rng.uniform(0.0, 0.3, num_targets)))


@pytest.mark.parametrize("seed,rho,tau,hops", [(0, 3, 2, 3), (1, 8, 6, 3), (2, 5, 3, 2), (3, 12, 1, 3)])
def test_reductions_keep_the_optimum(seed, rho, tau, hops):
    adj, targets, weights = hub_instance(seed)
    (c1, c2), c3 = path_costs(0.7, 0.6), path_cost(3, 0.7, 0.6) if hops == 3 else None
    reduced = lp2_reduced(adj, targets, weights, rho, tau, c1, c2, c3=c3)
    plain = lp2_reduced(adj, targets, weights, rho, tau, c1, c2, c3=c3, reduce=False)
    full = lp2(adj, targets, weights, rho, tau, c1, c2, restrict=False, c3=c3)
    assert reduced.value == pytest.approx(plain.value, abs=1e-7) and plain.value == pytest.approx(full.value, abs=1e-6)
    assert reduced.num_variables < plain.num_variables  # the reductions did something
    fixed = np.arange(targets.size) % 2 == 0
    assert lp2_reduced(adj, targets, weights, rho, tau, c1, c2, fixed, c3=c3).value == pytest.approx(
        lp2(adj, targets, weights, rho, tau, c1, c2, fixed, c3=c3).value, abs=1e-6)


def test_dominated_ignores_stored_zeros_and_empty_matrices():
    coef = sp.csc_matrix((np.array([1.0, 0.0, 1.0]), (np.array([0, 1, 0]), np.array([0, 0, 1]))), shape=(2, 2))
    assert dominated(coef, np.ones(2), np.zeros(2, dtype=bool), 1).tolist() == [True, False]  # one of two equal
    assert dominated(sp.csc_matrix((2, 3)), np.ones(3), np.zeros(3, dtype=bool), 2).tolist() == [True, False, False]
