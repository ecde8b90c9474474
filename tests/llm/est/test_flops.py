"""Analytic FLOPs: a hand-counted layer, and agreement with torch.utils.flop_counter on every stage shape."""

import pytest
import torch

from icml24.llm.est import (
    EvolvingSubnetworkSchedule,
    GPTConfig,
    Subnetwork,
    SubnetworkSampler,
    layer_forward_flops,
    measured_flops,
    schedule_flops,
    subnetwork_flops,
)


def test_formula_on_a_hand_counted_layer():
    # d = 8, 2 heads of 4 (inner 8), one head active (inner 4), MLP 32 -> 16 units, T = 5, per token:
    # Q,K,V 2*8*12 = 192; W_O 2*4*8 = 64; scores and mixing 2 * 2*5*4 = 80; MLP 2 * 2*8*16 = 512
    config = GPTConfig(vocab_size=10, block_size=5, n_layer=1, n_head=2, n_embd=8)
    assert layer_forward_flops(config, heads=1, mlp_units=16, length=5) == 192 + 64 + 80 + 512
    sub = Subnetwork((0,), (torch.tensor([1]),), (torch.arange(16),))
    head = 2 * 8 * 10  # tied output head
    assert subnetwork_flops(config, sub, batch=3, length=5, backward=False) == (848 + head) * 15
    assert subnetwork_flops(config, sub, batch=3, length=5) == 3 * (848 + head) * 15


def test_formula_matches_flop_counter_on_each_stage_shape(tiny):
    config, model, x, y = tiny
    sampler = SubnetworkSampler(config, EvolvingSubnetworkSchedule.default(), torch.Generator().manual_seed(0))
    for step in (0, 3, 8):  # stage 1, 2, 3 of 10 steps
        sub = sampler.sample(step, 10)
        assert measured_flops(model, x, y, sub) == subnetwork_flops(config, sub, *x.shape)
    assert measured_flops(model, x, y, backward=False) == subnetwork_flops(config, None, *x.shape, backward=False)


def test_default_schedule_saves_about_thirty_percent_of_block_flops():
    config = GPTConfig(vocab_size=2, block_size=8, n_layer=4, n_head=4, n_embd=64)
    full = subnetwork_flops(config, None, 1, 8)
    ratio = schedule_flops(config, EvolvingSubnetworkSchedule.default(), 100, 1, 8) / (100 * full)
    assert ratio == pytest.approx(0.2 * 0.25 + 0.3 * 0.5 + 0.5, abs=0.01)  # tiny vocab: the blocks dominate
    assert schedule_flops(config, EvolvingSubnetworkSchedule.full(), 100, 1, 8) == 100 * full


def test_measured_count_needs_math_attention(tiny):
    config, model, x, y = tiny
    from icml24.llm.est import GPT

    sdpa = GPT(GPTConfig(**{**config.__dict__, "attention": "sdpa"}))
    with pytest.raises(ValueError, match="attention='math'"):
        measured_flops(sdpa, x, y)


def _saving(config, schedule, steps=900, batch=32, length=64):
    return 1 - schedule_flops(config, schedule, steps, batch, length) / (steps * subnetwork_flops(config, None, batch,
                                                                                                   length))


def test_the_schedules_fix_the_savings_the_est_paper_reports_as_regimes():
    """EST's FLOPs saving is arithmetic of its schedule (no run can change it): the default schedule saves >= 20% on
    the quick byte-level model, and sampling all three dimensions saves more than any one alone."""
    config = GPTConfig(block_size=64, n_layer=4, n_head=4, n_embd=32)  # the est paper's quick model (byte vocab)
    default = _saving(config, EvolvingSubnetworkSchedule.default())
    assert default == pytest.approx(0.267, abs=0.001) and default >= 0.20
    singles = [[(0.2, 0.5, 1.0, 1.0), (1.0, 1.0, 1.0, 1.0)], [(0.5, 1.0, 0.5, 1.0), (1.0, 1.0, 1.0, 1.0)],
               [(0.5, 1.0, 1.0, 0.5), (1.0, 1.0, 1.0, 1.0)]]  # layers, heads, MLP width alone
    small = GPTConfig(block_size=64, n_layer=4, n_head=4, n_embd=24)  # the ablation's quick model
    assert _saving(small, EvolvingSubnetworkSchedule.default()) > max(
        _saving(small, EvolvingSubnetworkSchedule(stages)) for stages in singles)
    assert _saving(config, EvolvingSubnetworkSchedule.full()) == 0.0
