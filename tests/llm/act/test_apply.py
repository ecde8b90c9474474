"""ACT attached to a tiny randomly initialised Llama (``tiny`` and ``batch`` come from conftest.py)."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from icml24.llm.act import ACT, AttentionCalibration, attention_maps  # noqa: E402
from icml24.llm.act.apply import normalize_heads  # noqa: E402


def test_switched_off_equals_model(tiny, batch):
    b = batch()
    with torch.no_grad():
        base = tiny(input_ids=b.input_ids, attention_mask=b.attention_mask).logits
        with ACT(None).attach(tiny):
            off = tiny(input_ids=b.input_ids, attention_mask=b.attention_mask).logits
        with ACT({1: [0, 3]}, threshold=2.0).attach(tiny):  # calibrated path, but no column can be a sink
            no_sink = tiny(input_ids=b.input_ids, attention_mask=b.attention_mask).logits
    valid = b.attention_mask.bool()
    assert torch.allclose(off[valid], base[valid], atol=1e-5)
    assert torch.allclose(no_sink[valid], base[valid], atol=1e-5)


def test_calibrated_head_matches_tensor_calibration(tiny, batch):
    b = batch(seed=1, pad=(0, 0, 0, 0, 0))
    eager = attention_maps(tiny, b.input_ids, b.attention_mask)
    seen = []
    handle = tiny.model.layers[1].self_attn.register_forward_hook(lambda m, args, out: seen.append(out[1]))
    try:
        with torch.no_grad(), ACT({1: [2]}, threshold=0.1, beta=0.4).attach(tiny):
            tiny(input_ids=b.input_ids, attention_mask=b.attention_mask)
    finally:
        handle.remove()
    layer1 = seen[0]
    expected = AttentionCalibration(0.1, 0.4)(eager[1][:, 2])
    assert AttentionCalibration(0.1, 0.4).detect(eager[1][:, 2]).any()  # the test exercises real sinks
    assert torch.allclose(layer1[:, 2], expected, atol=1e-5)
    assert torch.allclose(layer1[:, [0, 1, 3]], eager[1][:, [0, 1, 3]], atol=1e-5)
    assert torch.allclose(layer1.sum(-1), torch.ones_like(layer1.sum(-1)), atol=1e-5)


def test_attach_restores_model(tiny):
    before = tiny.config._attn_implementation
    with ACT("all").attach(tiny):
        assert tiny.config._attn_implementation == "act"
        with pytest.raises(RuntimeError, match="already attached"), ACT(None).attach(tiny):
            pass
    assert tiny.config._attn_implementation == before
    assert not any(hasattr(m, "_act_state") for m in tiny.modules())


def test_calibration_changes_logits(tiny, batch):
    b = batch(seed=2)
    with torch.no_grad():
        base = tiny(input_ids=b.input_ids, attention_mask=b.attention_mask, logits_to_keep=1).logits
        with ACT("all", threshold=0.05, beta=0.0).attach(tiny):
            act = tiny(input_ids=b.input_ids, attention_mask=b.attention_mask, logits_to_keep=1).logits
    assert (act - base).abs().max() > 1e-4


def test_normalize_heads():
    assert normalize_heads({1: [2, 0], 0: "all"}, 3, 3) == {0: [0, 1, 2], 1: [0, 2]}
    assert normalize_heads([(2, 1), (2, 1)], 3, 2) == {2: [1]}
    assert normalize_heads(None, 3, 2) == {}
    with pytest.raises(ValueError, match="outside"):
        normalize_heads({5: [0]}, 3, 2)
    with pytest.raises(ValueError, match="'all'"):
        normalize_heads("some", 3, 2)
