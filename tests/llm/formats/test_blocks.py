"""Blocking, shared exponents and bit packing: exact on edge cases and under hypothesis."""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icml24.llm.formats import BFPFormat, IntFormat, floor_log2, shared_exponent
from icml24.llm.formats.blocks import Field, pack_codes, unpack_codes


@given(st.floats(min_value=0.0, width=32, exclude_min=True, allow_infinity=False))
def test_floor_log2_is_exact_for_every_positive_float32(v):
    v = np.float32(v)
    e = int(floor_log2(torch.tensor([v]))[0])
    assert 2.0**e <= float(v) < 2.0 ** (e + 1)


def test_floor_log2_of_zero_is_below_every_exponent():
    assert int(floor_log2(torch.tensor([0.0]))[0]) < -1000


def test_shared_exponent_moves_up_only_when_the_max_would_round_past_the_mantissa():
    # m = 3: 7.5 * 2^0 rounds to 8 > 7 -> E must move from 2 to 3; 7.4 stays at E = 2
    e = shared_exponent(torch.tensor([[7.5], [7.4], [0.0]], dtype=torch.float64), 3, -127, 128)
    assert e.flatten().tolist() == [3, 2, -127]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(1, 9), st.booleans()), min_size=1, max_size=4), st.integers(1, 5),
       st.integers(0, 2**31 - 1))
def test_pack_then_unpack_gives_back_every_code(widths, blocks, seed):
    rng = np.random.default_rng(seed)
    fields = [Field(f"f{i}", w, per_block) for i, (w, per_block) in enumerate(widths)]
    codes = {f.name: torch.from_numpy(rng.integers(0, 2**f.width, (blocks, 1 if f.per_block else 4)))
             for f in fields}
    data, num_bits = pack_codes(codes, fields)
    assert num_bits == blocks * sum(f.width * (1 if f.per_block else 4) for f in fields)
    assert data.size == (num_bits + 7) // 8
    back = unpack_codes(data, num_bits, fields, blocks, 4)
    assert all(torch.equal(back[f.name], codes[f.name]) for f in fields)


def test_bad_inputs_say_what_to_fix():
    with pytest.raises(ValueError, match="multiple of block_size"):
        BFPFormat(3, 32).quantize(torch.zeros(2, 48))
    with pytest.raises(ValueError, match="NaN"):
        BFPFormat(3, 32).quantize(torch.full((1, 32), float("nan")))
    with pytest.raises(TypeError, match="floating-point"):
        BFPFormat(3, 32).quantize(torch.zeros(1, 32, dtype=torch.long))
    with pytest.raises(ValueError, match="block_size"):
        BFPFormat(3, 0)
    with pytest.raises(ValueError, match="decode it with"):
        IntFormat(4, 32).decode(BFPFormat(3, 32).encode(torch.ones(1, 32)))
