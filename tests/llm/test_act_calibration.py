"""ACT attached to a tiny randomly initialised Llama (built in code, nothing downloaded)."""

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from icml24.llm.act import ACT, AttentionCalibration, HeadSearch, PrefixCache, attention_maps  # noqa: E402
from icml24.llm.act.analysis import hidden_sink_frequency  # noqa: E402
from icml24.llm.act.apply import normalize_heads  # noqa: E402
from icml24.llm.tasks import EncodedBatch, label_word_predictions  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(config).eval()


def batch(seed=0, size=5, length=11, pad=(0, 3, 1, 0, 5)):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 50, (size, length), generator=g)
    mask = torch.ones(size, length, dtype=torch.long)
    for row, p in enumerate(pad[:size]):
        mask[row, :p] = 0
        ids[row, :p] = 0
    choices = torch.tensor([[5, 6, 7]] * size)
    labels = torch.randint(0, 3, (size,), generator=g)
    return EncodedBatch(ids, mask, choices, labels)


def test_switched_off_equals_model(tiny):
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


def test_calibrated_head_matches_tensor_calibration(tiny):
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


def test_calibration_changes_logits(tiny):
    b = batch(seed=2)
    with torch.no_grad():
        base = tiny(input_ids=b.input_ids, attention_mask=b.attention_mask, logits_to_keep=1).logits
        with ACT("all", threshold=0.05, beta=0.0).attach(tiny):
            act = tiny(input_ids=b.input_ids, attention_mask=b.attention_mask, logits_to_keep=1).logits
    assert (act - base).abs().max() > 1e-4


def test_prefix_cache_matches_full_forward(tiny):
    batches = [batch(seed=3), batch(seed=4)]
    with ACT(None).attach(tiny):
        cache = PrefixCache(tiny, batches, layers=[0, 2])
    for heads, layer in [(None, 2), ({2: [1]}, 2), ({0: [0, 3]}, 0)]:
        with ACT(heads).attach(tiny):
            full_pred, labels = label_word_predictions(tiny, batches)
            cached_pred, cached_labels = cache.predictions(tiny, layer)
        assert np.array_equal(full_pred, cached_pred) and np.array_equal(labels, cached_labels)


def test_head_search_keeps_heads_that_help(tiny):
    tasks = [[batch(seed=5, size=5)], [batch(seed=6, size=4, pad=(1, 0, 2, 0))]]
    search = HeadSearch(candidates={1: "all", 2: [0, 1]}, threshold=0.05, beta=0.0).fit(tiny, tasks)
    assert len(search.head_accuracy_) == 6
    # the plain accuracy equals a full forward's
    base = np.mean([(lambda p: float((p[0] == p[1]).mean()))(label_word_predictions(tiny, t)) for t in tasks])
    assert search.baseline_accuracy_ == pytest.approx(base)
    kept = {(layer, h) for layer, hs in search.selected_heads_.items() for h in hs}
    assert kept == {k for k, acc in search.head_accuracy_.items() if acc > search.baseline_accuracy_ + 1e-9}
    assert search.seconds_ > 0 and "HeadSearch(" in repr(search)


def test_sink_frequency_shape(tiny):
    freq = hidden_sink_frequency(tiny, [batch(seed=7)], threshold=0.1)
    assert freq.shape == (3, 4) and np.all((freq >= 0) & (freq <= 1))


def test_normalize_heads():
    assert normalize_heads({1: [2, 0], 0: "all"}, 3, 3) == {0: [0, 1, 2], 1: [0, 2]}
    assert normalize_heads([(2, 1), (2, 1)], 3, 2) == {2: [1]}
    assert normalize_heads(None, 3, 2) == {}
    with pytest.raises(ValueError, match="outside"):
        normalize_heads({5: [0]}, 3, 2)
    with pytest.raises(ValueError, match="'all'"):
        normalize_heads("some", 3, 2)
