"""The fused numba kernel of ACT's calibration against the torch path (and the loop reference through it)."""

import math

import pytest
import torch

from icml24.llm.act import AttentionCalibration, calibrate_attention, causal_allowed, detect_sinks, kernels


def causal_maps(*shape, queries, keys, seed=0, dtype=torch.float64, sharpness=4.0):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(*shape, queries, keys, generator=g, dtype=dtype) * sharpness
    scores[..., 0] += 3.0  # an initial sink, and a hidden one at key 5 (the paper's finding 1)
    scores[..., 5] += 3.0
    return torch.softmax(scores.masked_fill(~causal_allowed(queries, keys), float("-inf")), dim=-1)


def torch_path(attn, threshold=0.1, beta=0.4, keep_first=True):
    return calibrate_attention(attn, detect_sinks(attn, threshold, keep_first=keep_first), beta)


@pytest.mark.parametrize("queries,keys", [(24, 24), (9, 24), (1, 7)])
@pytest.mark.parametrize("keep_first", [True, False])
def test_kernel_matches_the_torch_path(queries, keys, keep_first):
    attn = causal_maps(3, 4, queries=queries, keys=keys, seed=queries + keys)
    calib = AttentionCalibration(0.1, 0.4, keep_first=keep_first)
    assert kernels.supported(attn) and detect_sinks(attn, keep_first=keep_first).any()
    expected = torch_path(attn, keep_first=keep_first)
    assert torch.allclose(calib(attn), expected, rtol=0, atol=1e-12)
    copy = attn.clone()
    out = calib(copy, inplace=True, normalized=True)
    assert out.data_ptr() == copy.data_ptr() and torch.allclose(copy, expected, rtol=0, atol=1e-12)


def test_kernel_float32_agrees_to_rounding_and_keeps_sums():
    attn = causal_maps(2, 9, queries=64, keys=64, seed=3, dtype=torch.float32)
    out = AttentionCalibration(0.1, 0.4)(attn)
    assert torch.allclose(out, torch_path(attn), rtol=1e-5, atol=1e-6)
    assert torch.allclose(out.sum(-1), torch.ones(2, 9, 64), atol=1e-5)
    assert torch.equal(out == 0, attn == 0)  # no mass moves to future tokens


def test_kernel_edge_cases():
    attn = causal_maps(2, queries=10, keys=10, seed=4)
    assert torch.equal(AttentionCalibration(0.1, 1.0)(attn), attn)  # beta = 1: nothing moves
    none = AttentionCalibration(threshold=1.01)  # no column exceeds 1: no sink, a copy of attn
    out = none(attn)
    assert torch.equal(out, attn) and out.data_ptr() != attn.data_ptr()
    single = torch.zeros(6, 6, dtype=torch.float64)
    single[:, 0] = 1.0  # only the initial sink: kept, so nothing changes
    assert torch.equal(AttentionCalibration()(single), single)


def test_kernel_rejects_nan_before_writing_the_bad_map():
    attn = causal_maps(3, queries=8, keys=8, seed=5)
    attn[1, 4, 2] = math.nan
    copy = attn.clone()
    with pytest.raises(ValueError, match="attn contains NaN"):
        AttentionCalibration()(copy, inplace=True, normalized=True)
    assert torch.equal(copy[1:].nan_to_num(-1.0), attn[1:].nan_to_num(-1.0))  # the bad map and later: untouched


def test_supported_falls_back_for_other_tensors():
    attn = causal_maps(2, 3, queries=12, keys=12, seed=6)
    assert kernels.supported(attn) and kernels.supported(attn.float())
    assert not kernels.supported(attn.transpose(0, 1))  # not contiguous
    assert not kernels.supported(attn.half())
    assert not kernels.supported(attn.clone().requires_grad_())
    assert not kernels.supported(attn[..., :5, :])  # a slice of rows is not contiguous
    calib = AttentionCalibration(0.1, 0.4)
    expected = torch_path(attn)
    assert torch.allclose(calib(attn.transpose(0, 1)), expected.transpose(0, 1), atol=1e-12)  # torch path
    grad = attn.clone().requires_grad_()
    assert torch.allclose(calib(grad), expected, atol=1e-12)
