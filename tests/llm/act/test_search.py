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


def test_head_search_keeps_heads_that_help(tiny, batch):
    tasks = [[batch(seed=5, size=5)], [batch(seed=6, size=4, pad=(1, 0, 2, 0))]]
    search = HeadSearch(candidates={1: "all", 2: [0, 1]}, threshold=0.05, beta=0.0).fit(tiny, tasks)
    assert len(search.head_accuracy_) == 6
    # the plain accuracy equals a full forward's
    base = np.mean([(lambda p: float((p[0] == p[1]).mean()))(label_word_predictions(tiny, t)) for t in tasks])
    assert search.baseline_accuracy_ == pytest.approx(base)
    kept = {(layer, h) for layer, hs in search.selected_heads_.items() for h in hs}
    assert kept == {k for k, acc in search.head_accuracy_.items() if acc > search.baseline_accuracy_ + 1e-9}
    assert search.seconds_ > 0 and "HeadSearch(" in repr(search)


def test_head_search_before_fit_and_bad_settings():
    search = HeadSearch(candidates={1: [0]})
    for attribute in ("selected_heads_", "head_accuracy_", "baseline_accuracy_", "seconds_"):
        with pytest.raises(NotFittedError, match="fit\\(model, task_batches\\)"):
            getattr(search, attribute)
    assert not hasattr(search, "selected_heads_")  # NotFittedError is an AttributeError too
    for bad in ({"threshold": math.nan}, {"threshold": math.inf}, {"beta": math.nan}, {"min_gain": math.nan}):
        with pytest.raises(ValueError):
            HeadSearch(**bad)


def test_head_search_rejects_empty_tasks(tiny):
    with pytest.raises(ValueError, match="non-empty"):
        HeadSearch().fit(tiny, [[]])
