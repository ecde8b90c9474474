"""Scores are decomposable, cached, reject bad input, and the learned score prefers the true parent."""

import numpy as np
import pytest
import torch

from icml24._validation import NotFittedError
from icml24.causal import LearnedKernelScore, MarginalKernelScore, MedianKernelScore


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n)
    b = np.tanh(2 * a) + 0.2 * rng.standard_normal(n)
    c = rng.standard_normal(n)
    return np.column_stack([a, b, c])


@pytest.mark.parametrize("cls", [LearnedKernelScore, MarginalKernelScore, MedianKernelScore])
def test_graph_score_is_the_sum_of_cached_local_scores(cls):
    score = cls().fit(_data())
    dag = np.array([[0, 1, 0], [0, 0, 0], [0, 1, 0]])
    total = score.score_graph(dag)
    assert total == pytest.approx(score.local_score(0, []) + score.local_score(1, [0, 2]) + score.local_score(2, []))
    assert score.n_evaluations_ == 3  # the three local scores above came from the cache
    assert score.local_score(1, (2, 0)) == score.local_score(1, {0, 2}) and score.n_evaluations_ == 3
    score.local_score(1, [0])
    assert score.n_evaluations_ == 4


def test_learned_score_prefers_the_true_parent_and_beats_no_parent():
    score = LearnedKernelScore().fit(_data())
    assert score.local_score(1, [0]) < score.local_score(1, [2])
    assert score.local_score(1, [0]) < score.local_score(1, [])


def test_adam_and_lbfgsb_both_improve_on_the_median_initialisation():
    data = _data(n=30)
    score = LearnedKernelScore().fit(data)
    objective, init, _ = score.problem(1, [0])
    start = objective(torch.as_tensor(init)).item()
    lbfgs = score.local_score(1, [0])
    adam = LearnedKernelScore(optimizer="adam", epochs=25, lr=0.05).fit(data).local_score(1, [0])
    assert lbfgs < start - 0.01 and adam < start - 0.01


def test_learning_never_scores_worse_than_the_median_initialisation():
    data = _data(3)
    for parents in ([0], [2], []):
        learned = MarginalKernelScore().fit(data).local_score(1, parents)
        fixed = MedianKernelScore().fit(data).local_score(1, parents)
        assert learned <= fixed + 1e-9


def test_multidimensional_groups_and_bad_input():
    data = np.column_stack([_data(), np.random.default_rng(5).standard_normal(60)])
    score = LearnedKernelScore().fit(data, groups=[[0, 3], [1], [2]])
    assert np.isfinite(score.local_score(1, [0]))
    with pytest.raises(ValueError, match="partition"):
        LearnedKernelScore().fit(data, groups=[[0], [1]])
    bad = _data()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="data contains NaN"):
        LearnedKernelScore().fit(bad)
    with pytest.raises(ValueError, match="child"):
        score.local_score(1, [1])
    with pytest.raises(NotFittedError):
        LearnedKernelScore().local_score(0, [])
    with pytest.raises(ValueError, match="optimizer"):
        LearnedKernelScore(optimizer="sgd").fit(_data())
    for bad in ({"epochs": 0}, {"max_iter": 1.5}, {"lr": -1.0}, {"threshold": float("nan")}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            LearnedKernelScore(**bad).fit(_data())
