"""MXFP4 (and MXFP6/8): the OCP rules, round trip, and bit-identity with torchao's MX quantize-dequantize."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icml24.llm.formats import MXFormat

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), element=st.sampled_from(["e2m1", "e2m3", "e3m2", "e4m3"]))
def test_packed_round_trip_and_half_step_error_below_saturation(blocked, data, element):
    x = data.draw(blocked(block_size=32))
    fmt = MXFormat(element, 32)
    q = fmt.quantize(x)
    packed = fmt.encode(x)
    assert torch.equal(fmt.decode(packed), q)
    assert packed.num_bits == fmt.bits_per_element * x.numel()
    scale = x.abs().reshape(-1, 32).amax(1, keepdim=True)
    inside = (x.abs().reshape(-1, 32) <= q.abs().reshape(-1, 32).amax(1, keepdim=True)).reshape(x.shape)
    err = (x.double() - q.double()).abs()
    assert (err[inside] <= fmt.step(x)[inside] / 2).all()
    assert (q.abs().reshape(-1, 32) <= scale * 2).all()  # saturation never exceeds the floor-rule range


def test_mxfp4_grid_scale_and_bits():
    fmt = MXFormat()
    assert fmt.bits_per_element == 4.25
    x = torch.tensor([[v * s for s in (1, -1) for v in E2M1] * 2])  # absmax 6 -> X = 2^(2 - 2) = 1
    assert torch.equal(fmt.quantize(x), x)
    y = torch.tensor([[7.9] + [0.25] + [0.75] + [0.0] * 29])  # X = 2^(2-2) = 1: 7.9 saturates to 6, ties to even
    assert fmt.quantize(y)[0, :3].tolist() == [6.0, 0.0, 1.0]


def test_bit_identical_to_torchao_mx_on_random_tensors():
    mx = pytest.importorskip("torchao.prototype.mx_formats.mx_tensor")
    g = torch.Generator().manual_seed(0)
    for scale in (1e-3, 1.0, 300.0):
        x = torch.randn(32, 256, generator=g) * scale * torch.exp(torch.randn(32, 256, generator=g))
        s, d = mx.to_mx(x, torch.float4_e2m1fn_x2, 32)
        ref = mx.to_dtype(d, s, torch.float4_e2m1fn_x2, 32, torch.float32)
        assert torch.equal(MXFormat().quantize(x), ref)


def test_unknown_element_is_refused():
    with pytest.raises(ValueError, match="e2m1"):
        MXFormat("e5m9")
