"""The subnetwork forward: full == plain, slicing == masking with 1/p, skipped layers are the identity."""

import pytest
import torch

from icml24.llm.est import GPT, GPTConfig, Subnetwork


def _heads(config, per_layer):
    return tuple(None if h is None else torch.tensor(h) for h in per_layer)


def test_full_subnetwork_equals_the_plain_forward(tiny):
    config, model, x, y = tiny
    plain, loss = model(x, y)
    full, full_loss = model(x, y, subnetwork=Subnetwork.full(config))
    assert torch.equal(plain, full) and torch.equal(loss, full_loss)


def test_slicing_heads_equals_masking_with_rescale(tiny):
    config, model, x, _ = tiny
    sub = Subnetwork((0, 1, 2), _heads(config, [[1, 3], [0], None]), (None,) * 3)
    sliced = model(x, subnetwork=sub)[0]
    masked = model(x, subnetwork=sub, mode="mask")[0]
    assert torch.allclose(sliced, masked, atol=1e-5)
    # the rescale matters: masking the heads without 1/p_H gives another output
    block = model.blocks[0]
    h = block.ln_1(model.wte(x) + model.wpe(torch.arange(x.shape[1])))
    heads = torch.tensor([1, 3])
    with_scale = block.attention(h, heads, "mask")
    assert torch.allclose(block.attention(h, heads, "slice"), with_scale, atol=1e-6)
    unscaled = with_scale * (2 / 4)
    assert not torch.allclose(with_scale, unscaled, atol=1e-4)


def test_slicing_mlp_and_layers_equals_masking(tiny):
    config, model, x, _ = tiny
    gen = torch.Generator().manual_seed(0)
    units = tuple(torch.randperm(config.n_mlp, generator=gen)[:40].sort().values for _ in range(3))
    sub = Subnetwork((0, 2), _heads(config, [[0, 2], None, [1, 2, 3]]), units)
    assert torch.allclose(model(x, subnetwork=sub)[0], model(x, subnetwork=sub, mode="mask")[0], atol=1e-5)


def test_mask_mode_keeps_gradients_of_inactive_parts_zero(tiny):
    config, model, x, y = tiny
    sub = Subnetwork((1,), (None, torch.tensor([0, 1]), None), (None,) * 3)
    _, loss = model(x, y, subnetwork=sub)
    loss.backward()
    assert model.blocks[0].qkv.weight.grad is None and model.blocks[2].fc.weight.grad is None
    grad = model.blocks[1].qkv.weight.grad
    d, dh = config.n_embd, config.head_dim
    assert grad[2 * dh:d].abs().sum() == 0 and grad[:2 * dh].abs().sum() > 0  # heads 2, 3 untouched


def test_skipped_layers_are_the_identity(tiny):
    config, model, x, _ = tiny
    sub = Subnetwork((1,), (None,) * 3, (None,) * 3)
    emb = model.wte(x) + model.wpe(torch.arange(x.shape[1]))
    expected = torch.nn.functional.linear(model.ln_f(model.blocks[1](emb)), model.wte.weight)
    assert torch.allclose(model(x, subnetwork=sub)[0], expected, atol=1e-6)


def test_sdpa_and_math_attention_agree(tiny):
    config, model, x, _ = tiny
    other = GPT(GPTConfig(**{**config.__dict__, "attention": "sdpa"}))
    other.load_state_dict(model.state_dict())
    assert torch.allclose(model(x)[0], other(x)[0], atol=1e-5)


def test_init_never_touches_the_global_stream():
    before = torch.random.get_rng_state()
    GPT(GPTConfig(block_size=8, n_layer=1, n_head=2, n_embd=8), random_state=torch.Generator().manual_seed(1))
    assert torch.equal(before, torch.random.get_rng_state())


def test_bad_inputs_say_the_fix(tiny):
    config, model, x, _ = tiny
    with pytest.raises(ValueError, match="multiple of n_head"):
        GPTConfig(n_embd=30, n_head=4)
    with pytest.raises(ValueError, match="mode"):
        model(x, mode="zero")
    with pytest.raises(ValueError, match="length"):
        model(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match="ascending"):
        Subnetwork((2, 1), (None,) * 3, (None,) * 3).validate(config)
    with pytest.raises(ValueError, match="index tensor"):
        Subnetwork((0,), (torch.tensor([4]), None, None), (None,) * 3).validate(config)


def test_forward_validates_the_subnetwork_at_the_public_boundary(tiny):
    config, model, x, y = tiny
    full = (None,) * 3
    bad = {
        "ascending": Subnetwork((2, 0), full, full),  # unsorted layers ran silently before issue 39
        "empty": Subnetwork((), full, full),
        "repeats": Subnetwork((0, 1), (torch.tensor([1, 1]), None, None), full),  # a head counted twice
        "repeats an index": Subnetwork((0,), full, (None, torch.tensor([0, 5, 5]), None)),
        "in \\[0, 3\\)": Subnetwork((0, 3), full, full),
        "integer": Subnetwork((0,), (torch.tensor([0.0]), None, None), full),
    }
    for message, sub in bad.items():
        for mode in ("slice", "mask"):
            with pytest.raises(ValueError, match=message):
                model(x, y, subnetwork=sub, mode=mode)
    with pytest.raises(ValueError, match="Subnetwork or None"):
        model(x, y, subnetwork=(0, 1))
    ok = Subnetwork((0, 2), (torch.tensor([3, 0]), None, None), full)  # heads in any order are fine
    assert torch.isfinite(model(x, y, subnetwork=ok)[1])
