"""Where sinks occur: the robust hidden-sink filters and per-head frequencies (tiny Llama from conftest.py)."""

import math

import numpy as np
import pytest
import torch

from icml24.llm.act import causal_allowed, hidden_sink_frequency, hidden_sinks


def test_hidden_sinks_filters():
    L = 20
    uniform = causal_allowed(L, L).double()
    uniform = uniform / uniform.sum(-1, keepdim=True)
    raw = hidden_sinks(uniform, 0.1)
    assert raw[1:4].all()  # the official rule flags tokens 1-3 of a uniform head on 20 tokens
    assert not hidden_sinks(uniform, 0.1, min_viewers=5, min_uniform_ratio=2.0).any()
    sink = uniform.clone()
    sink[6:, 6] += 1.0  # token 6 becomes a real sink for every later query
    sink = sink / sink.sum(-1, keepdim=True)
    robust = hidden_sinks(sink, 0.1, min_viewers=5, min_uniform_ratio=2.0)
    assert torch.nonzero(robust).flatten().tolist() == [6]


def test_sink_frequency_shape(tiny, batch):
    freq = hidden_sink_frequency(tiny, [batch(seed=7)], threshold=0.1)
    assert freq.shape == (3, 4) and np.all((freq >= 0) & (freq <= 1))
    with pytest.raises(ValueError, match="threshold"):
        hidden_sink_frequency(tiny, [batch(seed=7)], threshold=math.nan)


def test_hidden_sinks_reject_nan_attention():
    attn = causal_allowed(4, 4).double()
    attn = attn / attn.sum(-1, keepdim=True)
    attn[2, 1] = math.nan
    with pytest.raises(ValueError, match="attn"):
        hidden_sinks(attn, 0.1)
