"""Stages, their boundaries and the per-step sampler."""

import pytest
import torch

from icml24.llm.est import EvolvingSubnetworkSchedule, GPTConfig, Stage, SubnetworkSampler


def test_default_schedule_has_the_three_stages_of_fig1():
    sch = EvolvingSubnetworkSchedule.default()
    assert [sch.stage_index(s, 100) for s in (0, 19, 20, 49, 50, 99)] == [0, 0, 1, 1, 2, 2]
    first, second, third = sch.stages
    assert first.p_layers < 1 and first.p_heads < 1 and first.p_mlp < 1
    assert second.p_layers == 1 and second.p_heads < 1 and second.p_mlp < 1
    assert third.p_layers == third.p_heads == third.p_mlp == 1
    assert EvolvingSubnetworkSchedule.full().is_full() and not sch.is_full()


def test_sampler_draws_the_stage_shape_and_resamples_every_step():
    config = GPTConfig(block_size=8, n_layer=6, n_head=8, n_embd=32)
    sampler = SubnetworkSampler(config, EvolvingSubnetworkSchedule.default(), torch.Generator().manual_seed(0))
    draws = [sampler.sample(0, 10) for _ in range(20)]
    for sub in draws:
        sub.validate(config)
        assert len(sub.layers) == 3
        assert all(sub.num_heads(layer, config) == 4 and sub.num_mlp(layer, config) == 64 for layer in sub.layers)
    assert len({d.layers for d in draws}) > 1  # a fresh subnetwork each step
    middle = sampler.sample(3, 10)
    assert middle.layers == tuple(range(6)) and middle.num_heads(5, config) == 4
    last = sampler.sample(9, 10)
    assert all(h is None for h in last.heads) and all(m is None for m in last.mlp)


def test_sampler_state_round_trips():
    config = GPTConfig(block_size=8, n_layer=4, n_head=4, n_embd=16)
    sampler = SubnetworkSampler(config, EvolvingSubnetworkSchedule.default(), torch.Generator().manual_seed(0))
    state = sampler.state_dict()
    a = sampler.sample(0, 10)
    sampler.load_state_dict(state)
    b = sampler.sample(0, 10)
    assert a.layers == b.layers and all(torch.equal(x, y) for x, y in zip(a.heads, b.heads) if x is not None)


@pytest.mark.parametrize("stages, match", [
    ([], "at least one"),
    ([(0.5, 1, 1, 1)], "last must be 1.0"),
    ([(0.6, 1, 1, 1), (0.4, 1, 1, 1), (1.0, 1, 1, 1)], "increase"),
    ([(1.0, 0.0, 1, 1)], "p_layers"),
    ([(1.0, 1, float("nan"), 1)], "NaN"),
])
def test_bad_schedules_say_the_fix(stages, match):
    with pytest.raises(ValueError, match=match):
        EvolvingSubnetworkSchedule(stages)


def test_stage_accepts_tuples_and_objects():
    sch = EvolvingSubnetworkSchedule([Stage(0.5, 0.5), (1.0, 1.0, 1.0, 1.0)])
    assert sch.stage(0, 4).p_layers == 0.5 and sch.stage(2, 4).p_layers == 1.0
    with pytest.raises(ValueError, match="step"):
        sch.stage_index(4, 4)
