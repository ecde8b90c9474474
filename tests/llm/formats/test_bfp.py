"""BFP: representable values round-trip, half-ulp error, bits/element = packed size, BFP flushes small values."""

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icml24.llm.formats import BFPFormat


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), m=st.integers(1, 6))
def test_error_at_most_half_a_step_and_fast_path_equals_codes(blocked, data, m):
    x = data.draw(blocked(block_size=16))
    fmt = BFPFormat(m, 16)
    q = fmt.quantize(x)
    assert ((x.double() - q.double()).abs() <= fmt.step(x) / 2).all()
    assert torch.equal(fmt.decode(fmt.encode(x)), q)  # packed round trip = fake quantization, bit for bit
    assert torch.equal(fmt.quantize(q), q)  # idempotent: quantized values are representable


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 6), st.integers(-20, 20), st.integers(0, 2**31 - 1), st.integers(1, 3))
def test_representable_blocks_round_trip_exactly(m, e, seed, blocks):
    g = torch.Generator().manual_seed(seed)
    mant = torch.randint(0, 2**m, (blocks, 16), generator=g).double()
    sign = torch.randint(0, 2, (blocks, 16), generator=g).double() * 2 - 1
    x = (sign * mant * 2.0 ** (e - m + 1)).float()
    fmt = BFPFormat(m, 16)
    packed = fmt.encode(x)
    assert torch.equal(fmt.decode(packed), x)
    assert packed.num_bits == fmt.bits_per_element * x.numel() == (1 + m) * x.numel() + 8 * blocks


def test_bits_per_element_counts_the_shared_exponent():
    assert BFPFormat(3, 32).bits_per_element == 4.25
    assert BFPFormat(4, 32).bits_per_element == 5.25
    assert BFPFormat(3, 16, exponent_bits=5).bits_per_element == 4 + 5 / 16


def test_a_large_element_flushes_the_small_ones_to_zero():
    x = torch.full((1, 32), 0.01)
    x[0, 0] = 100.0
    q = BFPFormat(3, 32).quantize(x)
    assert q[0, 0] == 96.0 and (q[0, 1:] == 0).all()  # 100 on a step-16 grid; 0.01 is far below half a step
