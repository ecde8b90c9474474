"""Our marginal-likelihood score is causal-learn's local_score_marginal_general (negated), computed faster: equal
values on every parent set, the same CPDAG through GES, caches per child and per parent set, clear errors."""

import itertools

import numpy as np
import pytest

from icml24.causal import GES, MarginalLikelihoodScore, causallearn_ges, generate
from icml24.causal.marginal import _two_line_searches

pytest.importorskip("causallearn")


@pytest.mark.parametrize(("n", "seed"), [(40, 0), (40, 6), (60, 7)])
def test_equals_causallearns_marginal_score_on_every_parent_set(n, seed):
    from causallearn.score.LocalScoreFunction import local_score_marginal_general

    score = MarginalLikelihoodScore().fit(generate(4, n, 0.5, random_state=seed).data)
    for child in range(4):
        others = [j for j in range(4) if j != child]
        for parents in itertools.chain.from_iterable(itertools.combinations(others, r) for r in range(4)):
            theirs = -local_score_marginal_general(score.data_, child, list(parents), {})
            assert score.local_score(child, parents) == pytest.approx(theirs, rel=1e-9, abs=0.0)


def test_the_case_where_an_overflowing_noise_derivative_is_rejected():
    # n = 40, seed 0, X2 given {X1, X3}: the first step overshoots to sigma^2 ~ e^709, where causal-learn's noise
    # derivative is nan (2 sigma^2 overflows), so it halves the step again; a finite derivative there gives 1192.7
    from causallearn.score.LocalScoreFunction import local_score_marginal_general

    score = MarginalLikelihoodScore().fit(generate(5, 40, 0.5, random_state=0).data)
    theirs = -local_score_marginal_general(score.data_, 2, [1, 3], {})
    assert score.local_score(2, [1, 3]) == pytest.approx(theirs, rel=1e-9) and theirs < 900


def test_same_cpdag_as_causallearns_ges_and_caches_shared_across_children():
    data = generate(5, 60, 0.5, random_state=4).data  # 8 edge marks: a graph to agree on
    theirs, _ = causallearn_ges(data, "marginal")
    score = MarginalLikelihoodScore().fit(data)
    search = GES(score, max_parents=None).fit()
    assert (search.cpdag_ == theirs).all() and search.cpdag_.any()
    assert set(score.features_) <= set(range(5)) and len(score.features_) == 5
    parent_sets = {parents for _, parents in score.cache_}
    assert len(score.grams_) == len(parent_sets) < score.n_evaluations_  # one Gram matrix per set, not per pair


def test_two_line_searches_keep_the_least_value_seen():
    calls = []

    def parabola(u):  # minimum at u = 2: steps 1 (u = 5, f = 9 > f0 = 4) then 0.1 (u = 0.3): the least seen
        calls.append(u)
        return (u - 2.0) ** 2, 2.0 * (u - 2.0)

    value = _two_line_searches(parabola, 0.0)
    assert value == min((u - 2.0) ** 2 for u in calls) and value < 4.0 and len(calls) <= 41


def test_bad_input():
    with pytest.raises(ValueError, match="one column per variable"):
        MarginalLikelihoodScore().fit(np.zeros((5, 3)), groups=[[0, 1], [2]])
    with pytest.raises(ValueError, match="4 <= n"):
        MarginalLikelihoodScore().fit(np.random.default_rng(0).standard_normal((3, 2))).local_score(0, [1])
    constant = np.column_stack([np.ones(20), np.random.default_rng(1).standard_normal(20)])
    with pytest.raises(ValueError, match="constant"):
        MarginalLikelihoodScore().fit(constant).local_score(1, [0])
