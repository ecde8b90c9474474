"""RPG against the official code (tests/parity/rpg.json, recorded by tools/parity/record_rpg.py): the same region
split of the latent (rounded down, as the released cross_attention.py slices it) and the same regional
cross-attention output on fixed tensors, with our hook around diffusers' own attention processor."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from parity_fixture import assert_close, case, load_fixture
from rpg_parity_inputs import seeded_attention_inputs

from icml24.generative import parse_split_ratio
from icml24.generative.rpg.regional_attention import RegionalAttnProcessor

FIXTURE = load_fixture("rpg")
MAPS = [c for c in FIXTURE["cases"] if c["name"].startswith("region_map_")]
ATTENTION = [c for c in FIXTURE["cases"] if c["name"].startswith("attention_")]
DIM, HEADS, TOKENS = 8, 2, 77


def _attention_module():
    attention_processor = pytest.importorskip("diffusers.models.attention_processor")
    return attention_processor.Attention(query_dim=DIM, cross_attention_dim=DIM, heads=HEADS, dim_head=DIM // HEADS)


@pytest.mark.parametrize("entry", MAPS, ids=[c["name"] for c in MAPS])
def test_region_split_matches_the_official_slicing(entry):
    layout = parse_split_ratio(entry["inputs"]["ratio"])
    h, w = entry["inputs"]["latent"]
    ours = np.argmax(layout.masks(h, w), axis=0)  # the region index of every latent position
    assert_close(ours, entry["values"], entry["tolerance"], entry["name"])


@pytest.mark.parametrize("entry", MAPS[:6], ids=[c["name"] for c in MAPS[:6]])
def test_the_hook_sends_every_position_to_the_official_region(entry):
    """The official trick, through our processor: uniform attention, chunk k holds k - 1, so the output names the
    region whose prompt each position saw."""
    module = _attention_module()
    layout = parse_split_ratio(entry["inputs"]["ratio"])
    n = entry["inputs"]["latent"][0]
    with torch.no_grad():
        module.to_q.weight.zero_()
        module.to_k.weight.zero_()
        module.to_v.weight.copy_(torch.eye(DIM))
        module.to_out[0].weight.copy_(torch.eye(DIM))
        module.to_out[0].bias.zero_()
        context = torch.zeros(1, (layout.num_regions + 1) * TOKENS, DIM)
        for k in range(layout.num_regions + 1):
            context[:, k * TOKENS:(k + 1) * TOKENS, 0] = k - 1
        proc = RegionalAttnProcessor(module.processor, layout, (n, n), TOKENS, base_ratio=0.0)
        out = proc(module, torch.zeros(1, n * n, DIM), context)
    assert_close(out[0, :, 0].reshape(n, n).round(), entry["values"], 1e-5, entry["name"])


@pytest.mark.parametrize("entry", ATTENTION, ids=[c["name"] for c in ATTENTION])
def test_regional_attention_matches_the_official_hook(entry):
    module = _attention_module()
    layout = parse_split_ratio(entry["inputs"]["ratio"])
    x, context = seeded_attention_inputs(module, layout.num_regions, TOKENS, DIM)
    with torch.no_grad():
        out = RegionalAttnProcessor(module.processor, layout, (8, 8), TOKENS, base_ratio=0.5)(module, x, context)
    assert_close(out, entry["values"], entry["tolerance"], entry["name"])


def test_half_up_rounding_would_have_failed_the_three_way_split():
    """The check can fail: the old half-up edges (0, 3, 5, 8 on 8 positions) differ from the official map."""
    official = np.asarray(case(FIXTURE, "region_map_1,1,1_8")["values"])
    half_up = np.repeat([0, 0, 0, 1, 1, 2, 2, 2], 1)[None].repeat(8, 0)
    assert (half_up != official).any()
