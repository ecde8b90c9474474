"""BiE: the properties of the acceptance list (round trip, half-ulp of the selected exponent, bits = packed size)."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icml24.llm.formats import BFPFormat, BiEFormat


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), m=st.integers(1, 6), threshold=st.floats(0.01, 1.0))
def test_error_never_exceeds_half_an_ulp_of_the_selected_exponent(blocked, data, m, threshold):
    x = data.draw(blocked(block_size=16))
    fmt = BiEFormat(m, 16, threshold=threshold)
    q = fmt.quantize(x)
    half_ulp = 2.0 ** (fmt.selected_exponents(x).double() - m)  # 0.5 * 2^(E_sel - m + 1)
    assert ((x.double() - q.double()).abs() <= half_ulp).all()
    assert torch.equal(fmt.step(x), 2 * half_ulp)
    packed = fmt.encode(x)
    assert torch.equal(fmt.decode(packed), q)  # decode(encode) = the fast fake-quantization path, bit for bit
    assert packed.num_bits == fmt.bits_per_element * x.numel()
    assert packed.data.size == -(-packed.num_bits // 8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 5), st.integers(-30, 30), st.integers(2, 12), st.integers(0, 2**31 - 1))
def test_representable_values_round_trip_exactly(m, e_hi, gap, seed):
    # outliers on the E_hi grid with a full mantissa (>= 2^E_hi), the rest on a grid at least 2 binades lower
    g = torch.Generator().manual_seed(seed)
    hi = torch.rand(2, 16, generator=g) < 0.1
    hi[:, 0] = True
    m_hi = torch.randint(2 ** (m - 1), 2**m, (2, 16), generator=g).double()
    m_lo = torch.randint(0, 2**m, (2, 16), generator=g).double()
    sign = torch.randint(0, 2, (2, 16), generator=g).double() * 2 - 1
    e_lo = e_hi - gap
    x = (sign * torch.where(hi, m_hi * 2.0 ** (e_hi - m + 1), m_lo * 2.0 ** (e_lo - m + 1))).float()
    fmt = BiEFormat(m, 16, threshold=0.5)
    assert torch.equal(fmt.decode(fmt.encode(x)), x)
    assert torch.equal(fmt.outlier_mask(x) | (x == 0), hi | (x == 0))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), m=st.integers(1, 6), threshold=st.floats(0.01, 1.0))
def test_error_is_never_above_bfp_at_the_same_mantissa_width_and_block(blocked, data, m, threshold):
    # an identity, not a finding: outliers use BFP's exponent and the rest a finer power-of-two grid that contains
    # BFP's, so BiE (which spends 1 + 16 / B more bits per element) is at least as close element by element
    x = data.draw(blocked(block_size=16))
    bie, bfp = BiEFormat(m, 16, threshold=threshold), BFPFormat(m, 16)
    err_bie, err_bfp = (x.double() - bie.quantize(x).double()).abs(), (x.double() - bfp.quantize(x).double()).abs()
    assert (err_bie <= err_bfp).all()
    assert bie.bits_per_element - bfp.bits_per_element == 1 + 8 / 16


def test_bits_per_element_matches_the_paper_formula():
    # (1 + m) + 1 flag + 2 * 8 / B: 5.125 for B = 128, m = 3 (paper page); 5.25 / 4.25 for B = 64
    assert BiEFormat(3, 128).bits_per_element == 5.125
    assert BiEFormat(3, 64).bits_per_element == 5.25
    assert BiEFormat(2, 64).bits_per_element == 4.25


def test_small_values_survive_beside_an_outlier_where_bfp_flushes_them():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 64, generator=g) * 0.01
    x[:, 0] = 100.0
    bie, bfp = BiEFormat(3, 64).quantize(x), BFPFormat(3, 64).quantize(x)
    assert (bfp[:, 1:] == 0).all() and (bie[:, 1:] != 0).float().mean() > 0.7
    assert ((x - bie)[:, 1:] ** 2).mean() < 0.1 * ((x - bfp)[:, 1:] ** 2).mean()


def test_threshold_one_keeps_only_the_block_maximum_as_outlier():
    x = torch.tensor([[4.0, 3.9, 1.0, -4.0] + [0.5] * 12])
    assert BiEFormat(3, 16, threshold=1.0).outlier_mask(x).sum() == 2  # |4| twice
    assert BiEFormat(3, 16, threshold=0.2).outlier_mask(x).sum() == 4


def test_bad_threshold_is_refused():
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="threshold"):
            BiEFormat(3, 64, threshold=bad)
    with pytest.raises(ValueError, match="mantissa_bits"):
        BiEFormat(0, 64)
