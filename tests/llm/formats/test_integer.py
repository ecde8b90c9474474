"""INT-k per group with an fp16 scale."""

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icml24.llm.formats import IntFormat


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), bits=st.integers(2, 8))
def test_error_at_most_half_a_step_and_packed_round_trip(blocked, data, bits):
    x = data.draw(blocked(block_size=16, heavy=False))
    x = x.clamp(-1e4, 1e4)  # fp16 scales: keep amax / qmax below 65504
    fmt = IntFormat(bits, 16)
    q = fmt.quantize(x)
    assert ((x.double() - q.double()).abs() <= fmt.step(x) / 2).all()
    packed = fmt.encode(x)
    assert torch.equal(fmt.decode(packed), q)
    assert packed.num_bits == fmt.bits_per_element * x.numel() == (bits + 16 / 16) * x.numel()


def test_representable_values_round_trip_and_symmetric_range():
    s = 0.125
    x = (torch.arange(-7, 9)[:16].clamp(max=7).float() * s).reshape(1, 16)
    assert torch.equal(IntFormat(4, 16).quantize(x), x)
    assert IntFormat(4, 32).bits_per_element == 4.5 and IntFormat(4, 64).bits_per_element == 4.25


def test_the_scale_never_rounds_down_into_clipping():
    x = torch.tensor([[1.0001] + [0.0] * 15])  # 1.0001 / 7 rounds down in fp16 -> bumped up one step
    fmt = IntFormat(4, 16)
    assert (x - fmt.quantize(x)).abs().max() <= fmt.step(x).max() / 2


def test_scale_overflow_saturates_like_every_format():
    # one rule for all formats (formats/blocks.py): the fp16 scale caps at 65504, the group clips to qmax * 65504
    fmt = IntFormat(4, 16)
    x = torch.full((1, 16), 1e6)
    x[0, 1] = -1e6
    q = fmt.quantize(x)
    assert q[0, 0] == 7 * 65504.0 == fmt.largest(torch.float32) and q[0, 1] == -q[0, 0]
    half = torch.full((1, 16), 65504.0, dtype=torch.float16)  # 65504 / 7 rounds up in fp16: 7 s would be inf
    assert torch.isfinite(fmt.quantize(half)).all() and torch.equal(fmt.decode(fmt.encode(half)), fmt.quantize(half))
