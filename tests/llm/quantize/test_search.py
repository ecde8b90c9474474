"""Threshold search: Bayesian optimization finds the minimum of a known objective and never does worse than 0.5."""

import math

import pytest
import torch

from icml24.llm.formats import BiEFormat
from icml24.llm.quantize import layer_output_mse, minimize_threshold, search_layer


def test_bayes_and_grid_find_the_minimum_of_a_smooth_objective():
    f = lambda t: (math.log(t) - math.log(0.1)) ** 2  # noqa: E731
    t, value, n = minimize_threshold(f, "bayes", n_trials=20, random_state=0)
    assert n == 20 and abs(math.log(t / 0.1)) < 0.5
    tg, _, ng = minimize_threshold(f, "grid", n_trials=20)
    assert ng == 20 and abs(math.log(tg / 0.1)) < 0.25
    assert minimize_threshold(f, "bayes", 8, random_state=3) == minimize_threshold(f, "bayes", 8, random_state=3)


def test_search_never_worse_than_the_default_threshold_and_uses_the_outliers():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 128, generator=g)
    x[:, 5] *= 60  # one outlier channel, as in LLM activations
    w = torch.randn(16, 128, generator=g)
    r = search_layer(x, w, act_format=BiEFormat(2, 64), weight_format=BiEFormat(3, 64), n_trials=8, random_state=1)
    assert r["mse"] <= r["default_mse"] * (1 + 1e-9)
    assert 1 / 64 <= r["act_threshold"] <= 1 and 1 / 64 <= r["weight_threshold"] <= 1 and r["evaluations"] == 16
    wf, af = BiEFormat(3, 64, threshold=r["weight_threshold"]), BiEFormat(2, 64, threshold=r["act_threshold"])
    assert r["mse"] == pytest.approx(layer_output_mse(x, w, af, wf), rel=1e-6)  # the thresholds give that error


def test_nothing_to_search_for_formats_without_threshold():
    from icml24.llm.formats import BFPFormat

    x, w = torch.randn(8, 64), torch.randn(4, 64)
    r = search_layer(x, w, act_format=BFPFormat(3, 32))
    assert math.isnan(r["act_threshold"]) and r["evaluations"] == 0 and r["mse"] == r["default_mse"] > 0


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="method"):
        minimize_threshold(lambda t: t, "random")
    with pytest.raises(ValueError, match="low"):
        minimize_threshold(lambda t: t, low=0.5, high=0.1)
