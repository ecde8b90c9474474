"""The regional hook: beta = 1 is the plain model bit for bit; beta < 1 changes only what the regions say; it
runs on a diffusers UNet2DConditionModel with random weights and on the local UNet."""

import pytest
import torch

from icml24.generative.rpg.layout import parse_split_ratio
from icml24.generative.rpg.regional_attention import RegionalAttnProcessor, cross_attention_modules, regional_hook
from icml24.generative.rpg.unet import CrossAttention, TinyTextUNet


def _local():
    torch.manual_seed(0)
    return TinyTextUNet(vocab_size=9, length=12, channels=16, text_dim=32).eval()


def test_beta_one_reproduces_the_plain_local_model_exactly():
    model, layout = _local(), parse_split_ratio("1,1,1;1,1,1")
    x, t = torch.randn(3, 3, 16, 16), torch.tensor([5, 50, 90])
    base = model.encode(torch.randint(0, 9, (3, 12)))
    regions = model.encode(torch.randint(0, 9, (12, 12))).reshape(3, 48, 32)
    plain = model(x, t, base)
    with torch.no_grad(), regional_hook(model, layout, (16, 16), 12, base_ratio=1.0):
        hooked = model(x, t, torch.cat([base, regions], 1))
    assert torch.equal(hooked, plain.detach())
    with torch.no_grad(), regional_hook(model, layout, (16, 16), 12, base_ratio=0.5):
        assert not torch.allclose(model(x, t, torch.cat([base, regions], 1)), plain)
    assert all(isinstance(m.processor, type(model.attn_u1.attn2.processor)) for _, m in cross_attention_modules(model))


def test_regions_only_see_their_own_prompt():
    """beta = 0 with region k's chunk equal to the base gives, inside region k's box, the base attention."""
    torch.manual_seed(1)
    attn = CrossAttention(8, 6)
    layout = parse_split_ratio("0.5,0.5")
    x, base, other = torch.randn(2, 16, 8), torch.randn(2, 3, 6), torch.randn(2, 3, 6)
    proc = RegionalAttnProcessor(attn.processor, layout, canvas=(4, 4), chunk_len=3, base_ratio=0.0)
    out = proc(attn, x, torch.cat([base, base, other], 1)).reshape(2, 4, 4, 8)
    ref = attn.processor(attn, x, base).reshape(2, 4, 4, 8)
    assert torch.allclose(out[:, :, :2], ref[:, :, :2], atol=1e-6)  # left region: its prompt is the base
    assert not torch.allclose(out[:, :, 2:], ref[:, :, 2:], atol=1e-3)  # right region: its own prompt
    # no base prompt (base_ratio=None): the context holds only the regional chunks
    none = RegionalAttnProcessor(attn.processor, layout, (4, 4), 3, base_ratio=None)
    assert torch.allclose(none(attn, x, torch.cat([base, other], 1)).reshape(2, 4, 4, 8)[:, :, :2], ref[:, :, :2],
                          atol=1e-6)


def test_bad_contexts_and_ratios_are_refused():
    attn = CrossAttention(8, 6)
    layout = parse_split_ratio("0.5,0.5")
    with pytest.raises(ValueError, match="base_ratio"):
        RegionalAttnProcessor(attn.processor, layout, (4, 4), 3, base_ratio=1.5)
    proc = RegionalAttnProcessor(attn.processor, layout, (4, 4), 3, base_ratio=0.5)
    with pytest.raises(ValueError, match="encode"):
        proc(attn, torch.randn(1, 16, 8), torch.randn(1, 6, 6))
    with pytest.raises(ValueError, match="cross-attention"):
        with regional_hook(torch.nn.Linear(2, 2), layout, (4, 4), 3):
            pass


def test_runs_on_a_diffusers_unet_with_random_weights():
    diffusers = pytest.importorskip("diffusers")
    torch.manual_seed(0)
    unet = diffusers.UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8).eval()
    layout = parse_split_ratio("1;1;1")  # three stacked rows on the 8 x 8 latent (and the 4 x 4 layer)
    x, base, regions = torch.randn(2, 4, 8, 8), torch.randn(2, 77, 32), torch.randn(2, 3 * 77, 32)
    with torch.no_grad():
        plain = unet(x, 10, base).sample
        with regional_hook(unet, layout, (8, 8), 77, base_ratio=1.0):
            same = unet(x, 10, torch.cat([base, regions], 1)).sample
        with regional_hook(unet, layout, (8, 8), 77, base_ratio=0.3):
            mixed = unet(x, 10, torch.cat([base, regions], 1)).sample
        again = unet(x, 10, base).sample  # processors restored
    assert len(cross_attention_modules(unet)) == 4
    assert torch.equal(same, plain) and torch.equal(again, plain)
    assert not torch.allclose(mixed, plain, atol=1e-4)
