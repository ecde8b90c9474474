"""The combinatorial search: the (3, 3, 3) search space, candidate triples, stopping at the first success."""

import pytest
import torch

from icml24._validation import NotFittedError
from icml24.pruning import (
    CombinatorialSearch,
    candidate_masks,
    cubist_spiral,
    is_eligible,
    minimal_widths,
    neuron_masks,
    search_space_size,
)


def test_search_space_of_the_paper():
    assert search_space_size((3, 3, 3)) == 25_992  # the official configs' count for (3, 3, 3)
    total = sum(len(candidate_masks((3, 3, 3), h)[0]) for h in range(9, 25))
    assert total == 25_992
    m1, m2, m3 = candidate_masks((3, 3, 3), 10)
    assert len(m1) == 39 and all(int(a.sum() + b.sum() + c.sum()) == 10 for a, b, c in zip(m1, m2, m3))
    assert all(is_eligible(a) and is_eligible(b) and is_eligible(c) for a, b, c in zip(m1, m2, m3))


def test_neuron_masks_keep_the_first_units():
    masks = neuron_masks((2, 3, 1), 4)
    assert [int(m.sum()) for m in masks] == [4, 6, 3, 1] and masks[0].shape == (4, 2)


def test_search_stops_at_the_first_level_that_reaches_the_target():
    x, y = cubist_spiral(256)
    search = CombinatorialSearch((2, 2, 2), target=0.5, init_width=4, epochs=1, batch_size=64)
    search.fit(x, y, random_state=0)
    assert search.reached_ and search.nnz_ == 2 + 2 + 2 + 2  # the sparsest level: one weight per row and column
    assert search.masks_evaluated_ == len(candidate_masks((2, 2, 2), 6)[0]) and list(search.best_by_nnz_) == [8]
    assert search.init_.widths == (2, 2, 2, 2, 1) and search.accuracy_ >= 0.5


def test_search_that_never_reaches_reports_its_best_and_respects_the_caps():
    x, y = cubist_spiral(256)
    search = CombinatorialSearch((2, 2, 2), target=1.0, epochs=1, batch_size=64, max_nnz=10, max_masks_per_nnz=3)
    search.fit(x, y, random_state=0)
    assert not search.reached_ and set(search.best_by_nnz_) == {8, 9, 10}
    assert search.masks_evaluated_ <= 9 and search.accuracy_ == max(search.best_by_nnz_.values())


def test_minimal_widths_picks_the_smallest_network_that_reaches_the_target():
    x, y = cubist_spiral(256)
    out = minimal_widths(x, y, 0.0, [1, 2], max_width=4, epochs=1, batch_size=64)
    assert out["widths"] == (1, 1, 1) and len(out["accuracy"]) == 8
    assert minimal_widths(x, y, 1.01, [1], max_width=2, epochs=1, batch_size=64)["widths"] is None


def _no_work(*args, **kwargs):
    raise AssertionError("masks were enumerated or trained before the bad setting was refused")


def test_errors_before_fit_and_on_bad_settings_at_fit(monkeypatch):
    with pytest.raises(NotFittedError):
        _ = CombinatorialSearch().nnz_
    x, y = cubist_spiral(256)
    monkeypatch.setattr("icml24.pruning.search.candidate_masks", _no_work)
    monkeypatch.setattr("icml24.pruning.search.train_batched", _no_work)
    bad = {"widths": ((3, 3, 30), "widths"), "target": (95, "target"), "lr": (float("nan"), "lr"),
           "schedule": ("linear", "schedule"), "epochs": (2.5, "epochs"), "chunk": (0, "chunk"),
           "max_nnz": (0, "max_nnz"), "init_width": (-1, "init_width")}
    for name, (value, words) in bad.items():
        search = CombinatorialSearch(**{name: value})  # stored as given: the contract's __init__
        assert search.get_params()[name] is value
        with pytest.raises(ValueError, match=words):
            search.fit(x, y)  # refused at fit, before any mask trains
    with pytest.raises(ValueError, match="random_state"):
        CombinatorialSearch((2, 2, 2)).fit(x, y, random_state=-1)
    x[3, 1] = float("inf")
    with pytest.raises(ValueError, match="x contains NaN"):
        CombinatorialSearch((2, 2, 2)).fit(x, y)
    with pytest.raises(AssertionError, match="before the bad setting"):  # the guard itself bites on a valid search
        CombinatorialSearch((2, 2, 2)).fit(*cubist_spiral(256))


def test_the_search_is_a_scikit_learn_estimator():
    from sklearn.base import clone

    search = CombinatorialSearch((2, 2, 2), target=0.5, epochs=1, batch_size=64, max_nnz=9)
    copy = clone(search)
    assert copy.get_params() == search.get_params() and copy.set_params(max_nnz=10).max_nnz == 10
    x, y = cubist_spiral(256)
    a, b = search.fit(x, y, random_state=0), clone(search).fit(x, y, random_state=torch.Generator().manual_seed(0))
    assert a.best_by_nnz_ == b.best_by_nnz_  # an int seeds the stream a torch Generator of that seed gives


def test_levels_trained_together_give_the_same_first_success():
    x, y = cubist_spiral(256)
    search = CombinatorialSearch((2, 2, 2), target=0.5, epochs=1, batch_size=64, levels_per_run=3)
    search.fit(x, y, random_state=0)
    assert search.reached_ and search.nnz_ == 8 and list(search.best_by_nnz_) == [8]
