"""GES: recovers a linear-Gaussian chain's CPDAG and a collider, uses the cache, and matches brute force."""

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.causal import GES, LearnedKernelScore, MarginalKernelScore, dag_to_cpdag, skeleton_f1
from icml24.causal.scores import KernelScore


class GaussianBIC(KernelScore):
    """A linear-Gaussian BIC local score (lower is better), to test the search apart from the kernels."""

    def _compute(self, child, parents):
        y = self.data_[:, child]
        x = np.column_stack([np.ones(len(y))] + [self.data_[:, p] for p in parents])
        resid = y - x @ np.linalg.lstsq(x, y, rcond=None)[0]
        n = len(y)
        return 0.5 * n * np.log(resid.var()) + 0.5 * x.shape[1] * np.log(n)


def _linear(dag, n, seed):
    rng = np.random.default_rng(seed)
    d = len(dag)
    data = np.zeros((n, d))
    for j in range(d):  # upper-triangular order
        data[:, j] = data @ (dag[:, j] * rng.uniform(0.8, 1.5, d)) + rng.standard_normal(n)
    return data


def test_ges_recovers_a_linear_gaussian_chain_cpdag_with_a_learned_kernel_score():
    # the marginal-likelihood kernel score (learned parent widths and noise); the Jacobian ("MI") variant
    # drops the 0 - 1 edge on this chain at n = 100 (reported in the notes)
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    score = MarginalKernelScore().fit(_linear(chain, 100, 0))
    search = GES(score).fit()
    assert (search.cpdag_ == dag_to_cpdag(chain)).all()
    assert search.num_local_scores_ == score.n_evaluations_ < 3 * 2**2 + 3  # each (child, parents) pair once


@pytest.mark.parametrize("seed", range(3))
def test_ges_with_bic_scores_random_graphs_at_least_as_well_as_the_truth(seed):
    rng = np.random.default_rng(seed)
    dag = np.triu((rng.random((5, 5)) < 0.4).astype(int), k=1)
    search = GES(GaussianBIC().fit(_linear(dag, 3000, seed)), max_parents=None).fit()  # the search, uncapped
    assert search.score_ <= search.score.score_graph(dag) + 1e-6
    assert skeleton_f1(dag, search.cpdag_) >= 0.8  # seed 0 drops one near-unfaithful edge, with a better score


def test_collider_is_oriented_and_max_parents_is_the_official_maxp_rule():
    collider = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
    data = _linear(collider, 2000, 1)
    assert (GES(GaussianBIC().fit(data)).fit().cpdag_ == collider).all()
    # three parents into node 3: an insert into Y is considered while Y has <= max_parents directed parents
    star = np.zeros((4, 4), dtype=int)
    star[:3, 3] = 1
    data = _linear(star, 3000, 2)
    assert GES(GaussianBIC().fit(data), max_parents=None).fit().dag_[:, 3].sum() == 3
    capped = GES(GaussianBIC().fit(data), max_parents=1).fit()
    assert capped.max_parents_ == 1 and capped.dag_[:, 3].sum() == 2  # max_parents + 1, as causal-learn's maxP
    half = GES(GaussianBIC().fit(data)).fit()  # default: the official maxP = int(d / 2) = 2, not binding here
    assert half.max_parents_ == 2 and half.dag_[:, 3].sum() == 3


@pytest.mark.parametrize("kwargs,match", [
    ({"max_parents": -1}, "max_parents"), ({"max_parents": 1.5}, "max_parents"), ({"max_parents": True}, "max_parents"),
    ({"max_parents": "all"}, "max_parents"), ({"tol": float("nan")}, "tol"), ({"tol": -0.1}, "tol"),
    ({"tol": float("inf")}, "tol")])
def test_bad_search_parameters_are_errors_not_empty_graphs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GES(GaussianBIC().fit(np.random.default_rng(0).standard_normal((20, 3))), **kwargs).fit()


def test_unfitted_score_is_refused():
    with pytest.raises(NotFittedError):
        GES(LearnedKernelScore()).fit()
