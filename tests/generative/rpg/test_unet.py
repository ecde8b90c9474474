"""The local UNet: shapes, four cross-attention layers with diffusers' processor interface, text padding."""

import torch

from icml24.generative.rpg.regional_attention import cross_attention_modules
from icml24.generative.rpg.unet import AttnProcessor, TinyTextUNet


def test_forward_shape_and_cross_attention_layers():
    torch.manual_seed(0)
    model = TinyTextUNet(vocab_size=9, length=12, channels=8, text_dim=16)
    context = model.encode(torch.randint(0, 9, (2, 12)))
    out = model(torch.randn(2, 3, 16, 16), torch.tensor([0, 99]), context)
    assert out.shape == (2, 3, 16, 16) and torch.isfinite(out).all()
    layers = cross_attention_modules(model)
    assert len(layers) == 4 and all(isinstance(m.processor, AttnProcessor) for _, m in layers)


def test_context_length_is_free_and_processor_is_swappable():
    torch.manual_seed(0)
    model = TinyTextUNet(vocab_size=9, length=12, channels=8, text_dim=16)
    x, t = torch.randn(1, 3, 16, 16), torch.tensor([10])
    long = model.encode(torch.randint(0, 9, (3, 12))).reshape(1, 36, 16)
    assert model(x, t, long).shape == (1, 3, 16, 16)
    calls = []

    class Spy(AttnProcessor):
        def __call__(self, attn, hidden_states, encoder_hidden_states=None, *args, **kwargs):
            calls.append(hidden_states.shape[1])
            return super().__call__(attn, hidden_states, encoder_hidden_states)

    for _, module in cross_attention_modules(model):
        module.set_processor(Spy())
    model(x, t, long)
    assert sorted(calls) == [16, 64, 64, 256]  # 4 x 4, 8 x 8 (down, up), 16 x 16 queries
