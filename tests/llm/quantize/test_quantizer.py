"""LinearQuantizer: fit, per-layer thresholds, attach and restore on a tiny Llama."""

import math

import pytest

from icml24._validation import NotFittedError
from icml24.llm.formats import BFPFormat, BiEFormat
from icml24.llm.quantize import LinearQuantizer, QuantLinear, perplexity


def test_attach_replaces_every_linear_and_restores_them(tiny, ids):
    before = perplexity(tiny, ids)
    q = LinearQuantizer(BFPFormat(3, 32), BFPFormat(3, 32), search="none").fit(tiny)
    with q.attach(tiny):
        assert sum(isinstance(m, QuantLinear) for m in tiny.modules()) == 14
        quantized = perplexity(tiny, ids)
    assert not any(isinstance(m, QuantLinear) for m in tiny.modules())
    assert perplexity(tiny, ids) == before and quantized != before


def test_fit_searches_one_threshold_per_layer_and_improves_calibration_error(tiny, ids):
    calls = []
    q = LinearQuantizer(None, BiEFormat(2, 32), n_trials=3, random_state=0).fit(tiny, ids,
                                                                               progress=lambda *c: calls.append(c))
    assert calls == [(k + 1, len(q.layers_)) for k in range(len(q.layers_))]  # (done, total) after each layer
    assert len(q.act_thresholds_) == 14 and all(1 / 64 <= t <= 1 for t in q.act_thresholds_.values())
    assert all(math.isnan(t) for t in q.weight_thresholds_.values())
    assert all(q.calibration_mse_[n] <= q.default_mse_[n] * (1 + 1e-9) for n in q.layers_)
    assert q.evaluations_ == 14 * 3 and q.search_seconds_ > 0
    name = q.layers_[0]
    assert q.formats(name)[1].threshold == q.act_thresholds_[name]


def test_errors_name_the_fix(tiny, ids):
    with pytest.raises(NotFittedError):
        LinearQuantizer(None, BFPFormat()).formats("x")
    with pytest.raises(ValueError, match="calibration_ids"):
        LinearQuantizer(None, BiEFormat(2, 32)).fit(tiny)
    with pytest.raises(ValueError, match="weight_format, an act_format"):
        LinearQuantizer().fit(tiny)
    with pytest.raises(ValueError, match="search"):
        LinearQuantizer(None, BFPFormat(), search="random").fit(tiny)
