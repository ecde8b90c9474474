"""Blocking, shared exponents and bit packing: exact on edge cases and under hypothesis."""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icml24.llm.formats import BFPFormat, BiEFormat, IntFormat, MXFormat, floor_log2, shared_exponent
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


# -- overflow and signed zero: one rule (saturation) for every format and input dtype -----------------------------

FORMATS = [BFPFormat(3, 32), BFPFormat(4, 16), BFPFormat(23, 16), BFPFormat(3, 32, exponent_bits=3),
           BiEFormat(2, 64), BiEFormat(3, 64), BiEFormat(23, 16), BiEFormat(3, 16, exponent_bits=3),
           IntFormat(4, 64), IntFormat(2, 16), IntFormat(16, 32),
           MXFormat("e2m1"), MXFormat("e2m3"), MXFormat("e3m2"), MXFormat("e4m3")]
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _adversarial(fmt, dtype):
    """Blocks of the dtype's extremes: its max (both signs), fp16's max and 60000, 3.4e38, 1e6, 1e+-30, the smallest
    subnormal, +-0, and each of them beside small values (the block is all of one or mixed)."""
    info = torch.finfo(dtype)
    specials = [info.max, -info.max, 65504.0, 60000.0, -60000.0, 3.4e38, 1e6, 1e30, 1e-30, -1e-30,
                float(info.smallest_normal) * 2.0**-3, 0.0, -0.0, 1e300]
    rows = []
    for v in specials:
        v = torch.tensor(v, dtype=torch.float64).to(dtype)
        if not torch.isfinite(v):
            continue
        rows.append(torch.full((fmt.block_size,), float(v), dtype=dtype))
        mixed = torch.linspace(-1e-3, 1e-3, fmt.block_size, dtype=torch.float64).to(dtype)
        mixed[0], mixed[1] = v, -0.0
        rows.append(mixed)
    return torch.stack(rows)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f.label}_e{getattr(f, 'exponent_bits', '')}")
def test_no_finite_input_gives_a_non_finite_output_and_packed_equals_quantize(fmt, dtype):
    x = _adversarial(fmt, dtype)
    q = fmt.quantize(x)
    assert q.dtype == dtype and bool(torch.isfinite(q).all()), f"{fmt} gave inf/NaN for a finite {dtype} input"
    d = fmt.decode(fmt.encode(x))
    assert d.dtype == dtype and torch.equal(d, q) and torch.equal(torch.signbit(d), torch.signbit(q))
    top = fmt.largest(dtype)
    assert float(q.abs().max()) <= top and np.isfinite(top)
    big = x.double().abs() >= top  # saturation: everything at or above the largest value comes back as +-largest
    assert torch.equal(q.double().abs()[big], torch.full_like(q.double()[big], top))
    assert torch.equal(torch.signbit(q)[big], torch.signbit(x)[big])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FORMATS), st.sampled_from(DTYPES), st.integers(0, 2**31 - 1), st.floats(-40.0, 128.0))
def test_random_huge_and_tiny_blocks_stay_finite(fmt, dtype, seed, log2_scale):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, fmt.block_size)) * np.exp2(log2_scale + rng.standard_normal((2, fmt.block_size)))
    x = torch.from_numpy(np.clip(x, -float(torch.finfo(dtype).max), float(torch.finfo(dtype).max))).to(dtype)
    x = torch.where(torch.isfinite(x), x, torch.zeros_like(x))  # a cast can round past the max
    q = fmt.quantize(x)
    assert bool(torch.isfinite(q).all()) and torch.equal(fmt.decode(fmt.encode(x)), q)


def test_a_narrow_exponent_saturates_as_int_and_mx_do():
    # exponent_bits = 3 stores E in [-3, 4]: with m = 3 the largest value is 7 * 2**(4 - 2) = 28, in BFP and BiE
    for fmt in (BFPFormat(3, 16, exponent_bits=3), BiEFormat(3, 16, exponent_bits=3)):
        x = torch.zeros(1, 16)
        x[0, 0], x[0, 1] = 1e6, -1e6
        q = fmt.quantize(x)
        assert q[0, 0] == 28.0 == fmt.largest() and q[0, 1] == -28.0
    assert IntFormat(4, 16).largest() == 7 * 65504.0 and MXFormat().largest() == 6 * 2.0**125


def test_signed_zero_survives_the_packed_path_where_the_format_has_a_sign_bit():
    x = torch.zeros(1, 64)
    x[0, 0], x[0, 1], x[0, 2] = -0.0, -1e-9, 100.0  # -1e-9 rounds to -0 beside 100
    for fmt in (BFPFormat(3, 64), BiEFormat(3, 64, threshold=1.0), MXFormat("e2m1", 64)):
        q, d = fmt.quantize(x), fmt.decode(fmt.encode(x))
        assert bool(torch.signbit(q[0, 0])) and bool(torch.signbit(q[0, 1])), fmt
        assert torch.equal(torch.signbit(d), torch.signbit(q)), fmt
    q, d = IntFormat(4, 64).quantize(x), IntFormat(4, 64).decode(IntFormat(4, 64).encode(x))
    assert not bool(torch.signbit(q).any()) and not bool(torch.signbit(d).any())  # two's complement: no -0
