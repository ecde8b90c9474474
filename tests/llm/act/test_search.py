"""ACT's head search on the tiny Llama of conftest.py: the prefix cache, the keep rule, fitted state."""

import math

import numpy as np
import pytest

pytest.importorskip("transformers")

from icml24._validation import NotFittedError  # noqa: E402
from icml24.llm import HeadSearch  # noqa: E402
from icml24.llm.act import ACT, PrefixCache  # noqa: E402
from icml24.llm.tasks import label_word_predictions  # noqa: E402


def test_prefix_cache_matches_full_forward(tiny, batch):
    batches = [batch(seed=3), batch(seed=4)]
    with ACT(None).attach(tiny):
        cache = PrefixCache(tiny, batches, layers=[0, 2])
    for heads, layer in [(None, 2), ({2: [1]}, 2), ({0: [0, 3]}, 0)]:
        with ACT(heads).attach(tiny):
            full_pred, labels = label_word_predictions(tiny, batches)
            cached_pred, cached_labels = cache.predictions(tiny, layer)
        assert np.array_equal(full_pred, cached_pred) and np.array_equal(labels, cached_labels)


def _accuracy(model, batches):
    preds, labels = label_word_predictions(model, batches)
    return float((preds == labels).mean())


def test_head_search_keeps_heads_that_help(tiny, batch):
    tasks = [[batch(seed=5, size=5)], [batch(seed=6, size=4, pad=(1, 0, 2, 0))]]
    search = HeadSearch(candidates={1: "all", 2: [0, 1]}, threshold=0.05, beta=0.0,
                        tie_break="likelihood").fit(tiny, tasks)
    assert len(search.head_accuracy_) == 6
    # the plain accuracy equals a full forward's, and so does each head's batched score
    assert search.baseline_accuracy_ == pytest.approx(np.mean([_accuracy(tiny, t) for t in tasks]))
    for (layer, head), acc in search.head_accuracy_.items():
        with ACT({layer: [head]}, threshold=0.05, beta=0.0).attach(tiny):
            assert acc == pytest.approx(np.mean([_accuracy(tiny, t) for t in tasks]))
    kept = {(layer, h) for layer, hs in search.selected_heads_.items() for h in hs}
    base, base_ll = search.baseline_accuracy_, search.baseline_log_likelihood_
    expected = {k for k, acc in search.head_accuracy_.items()
                if acc > base + 1e-9 or (abs(acc - base) <= 1e-9 and search.head_log_likelihood_[k] > base_ll + 1e-9)}
    assert kept == expected and search.num_selected_ == len(kept)
    strict = HeadSearch(candidates={1: "all", 2: [0, 1]}, threshold=0.05, beta=0.0).fit(tiny, tasks)  # the paper's
    assert strict.tie_break == "none"
    assert {(la, h) for la, hs in strict.selected_heads_.items() for h in hs} == {
        k for k, acc in search.head_accuracy_.items() if acc > base + 1e-9}
    assert search.seconds_ > 0 and "HeadSearch(" in repr(search)


def test_batched_search_equals_one_head_per_pass(tiny, batch):
    tasks = [[batch(seed=8, size=5), batch(seed=9, size=3, pad=(2, 0, 1))]]
    calls = []
    batched = HeadSearch(candidates="all", threshold=0.05, beta=0.0, heads_per_pass=4).fit(
        tiny, tasks, progress=lambda *c: calls.append(c))
    single = HeadSearch(candidates="all", threshold=0.05, beta=0.0, heads_per_pass=1).fit(tiny, tasks)
    n = len(calls)  # progress(done, total) after each chunk of heads: one forward per batch (two here)
    assert calls == [(k, n) for k in range(1, n + 1)] and n * 2 == batched.forward_passes_
    with pytest.raises(ValueError, match="progress"):
        HeadSearch(candidates="all").fit(tiny, tasks, progress="bar")
    assert batched.head_accuracy_ == single.head_accuracy_
    for key, ll in single.head_log_likelihood_.items():
        assert batched.head_log_likelihood_[key] == pytest.approx(ll, abs=1e-6)
    assert batched.forward_passes_ * 4 == single.forward_passes_  # 4 heads per forward instead of 1
    assert len({round(v, 6) for v in batched.head_log_likelihood_.values()}) > 1  # heads really differ


def test_head_search_before_fit_and_bad_settings(tiny, batch):
    search = HeadSearch(candidates={1: [0]})
    for attribute in ("selected_heads_", "head_accuracy_", "baseline_accuracy_", "seconds_"):
        with pytest.raises(NotFittedError, match="fit\\(model, task_batches\\)"):
            getattr(search, attribute)
    assert not hasattr(search, "selected_heads_")  # NotFittedError is an AttributeError too
    for bad in ({"threshold": math.nan}, {"threshold": math.inf}, {"beta": math.nan}, {"min_gain": math.nan},
                {"tie_break": "best"}, {"heads_per_pass": 0}, {"heads_per_pass": 1.5}):
        with pytest.raises(ValueError):
            HeadSearch(**bad).fit(tiny, [[batch(seed=1, size=2)]])  # checked at fit (the estimator contract)


def test_head_search_rejects_empty_tasks(tiny):
    with pytest.raises(ValueError, match="non-empty"):
        HeadSearch().fit(tiny, [[]])


def test_under_the_paper_rule_an_all_tie_search_selects_nothing(tiny, batch, monkeypatch):
    """Issue #48: when every candidate ties the baseline, the strict rule keeps no head (never a tie-break)."""
    tasks = [[batch(seed=5, size=5)]]
    search = HeadSearch(candidates={1: [0, 1]}, threshold=0.05, beta=0.0).fit(tiny, tasks)
    search.head_accuracy_ = dict.fromkeys(search.head_accuracy_, search.baseline_accuracy_)
    search.head_log_likelihood_ = dict.fromkeys(search.head_log_likelihood_, search.baseline_log_likelihood_ + 1.0)
    assert search._keep() == {}
    search.tie_break = "likelihood"
    assert search._keep() == {1: [0, 1]}
