"""Frank-Wolfe D-optimal design (E4's explore and eliminate steps)."""

import itertools

import numpy as np
import pytest

from icml24.bandits import d_optimal_design
from icml24.bandits.design import design_counts


@pytest.mark.parametrize("num_arms,dim,seed", [(3, 2, 0), (9, 5, 1), (50, 20, 2), (30, 4, 3)])
def test_design_meets_kiefer_wolfowitz_bound(num_arms, dim, seed):
    arms = np.random.default_rng(seed).normal(size=(num_arms, dim))
    pi, g = d_optimal_design(arms, tol=1e-4)
    assert pi.min() >= 0 and abs(pi.sum() - 1) < 1e-12
    gram = (arms.T * pi) @ arms
    norms = np.einsum("kd,de,ke->k", arms, np.linalg.inv(gram), arms)
    assert norms.max() <= dim * (1 + 1e-4) + 1e-9
    assert norms.max() == pytest.approx(g)


def test_design_maximises_log_det_against_grid():
    arms = np.array([[1.0, 0.0], [0.6, 0.8], [-0.3, 1.0]])
    pi, _ = d_optimal_design(arms, tol=1e-8)
    best = max(np.linalg.slogdet((arms.T * w) @ arms)[1]
               for a, b in itertools.product(np.linspace(0, 1, 201), repeat=2) if a + b <= 1
               for w in [np.array([a, b, 1 - a - b])])
    assert np.linalg.slogdet((arms.T * pi) @ arms)[1] >= best - 1e-6


def test_design_in_span_of_rank_deficient_arms():
    arms = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    pi, g = d_optimal_design(arms)
    assert g <= 2 * (1 + 1e-4) + 1e-9  # rank 2
    assert design_counts(pi, 100).sum() >= 200


@pytest.mark.parametrize("bad", [[[1.0, np.nan], [0.0, 1.0]], [[np.inf, 0.0], [0.0, 1.0]]])
def test_design_rejects_non_finite_arms_by_name(bad):
    with pytest.raises(ValueError, match="arms contains NaN or infinite values"):
        d_optimal_design(bad)


def test_design_rejects_all_zero_arms():
    with pytest.raises(ValueError, match="all zero"):
        d_optimal_design(np.zeros((3, 2)))
