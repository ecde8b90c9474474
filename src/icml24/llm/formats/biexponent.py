"""BiE: bi-exponent block floating point (Zou et al., ICML 2024), as reconstructed from the paper's description.

Each block of B elements stores two shared exponents; each element stores a sign, an m-bit mantissa and a 1-bit
flag that selects one of them:

- E_hi = the block's largest exponent, shared by the outliers (elements with ``|x| >= threshold * max|x|``);
- E_lo = the largest exponent of the remaining elements;
- value = ``(-1)**s * M * 2**(E_sel - (m - 1))``.

Small values in a block with an outlier keep their own, finer exponent instead of rounding to zero as in BFP. The
paper sets the threshold offline by Bayesian optimization (``LinearQuantizer``). Cost:
``1 + m + 1 + 2 * exponent_bits / B`` bits per element (5.25 for m = 3, B = 64; 4.25 for m = 2, B = 64).
"""

from __future__ import annotations

import torch

from icml24._validation import check_finite

from .blocks import BlockFormat, Field, check_int, exponent_cap, pow2, round_to_grid, shared_exponent


class BiEFormat(BlockFormat):
    """Bi-exponent block floating point (paper Sec. 3, Figs. 4-5; the exact outlier rule is our reconstruction).

    Args:
        mantissa_bits (int): m, mantissa width per element (1..23). Default: 3.
        block_size (int): elements sharing the two exponents. Default: 64.
        exponent_bits (int): width of each stored shared exponent. Default: 8.
        threshold (float): outlier cut relative to the block maximum, in (0, 1]: an element is an outlier (uses
            E_hi) when ``|x| >= threshold * max|x|``. 1 sends only the block maximum to E_hi. Default: 0.5.
    """

    name = "bie"
    flag_bits = 1  # two exponents: one selector bit per element

    def __init__(self, mantissa_bits: int = 3, block_size: int = 64, exponent_bits: int = 8,
                 threshold: float = 0.5):
        super().__init__(block_size)
        self.mantissa_bits = check_int("mantissa_bits", mantissa_bits, 1, 23)
        self.exponent_bits = check_int("exponent_bits", exponent_bits, 2, 8)
        check_finite("threshold", threshold)
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1] (a fraction of the block maximum), got {threshold!r}")
        self.threshold = float(threshold)
        self.bias = 2 ** (self.exponent_bits - 1) - 1
        self.emin, self.emax = -self.bias, 2**self.exponent_bits - 1 - self.bias

    @property
    def label(self) -> str:
        return f"bie_m{self.mantissa_bits}_b{self.block_size}"

    def describe(self) -> str:
        return (f"mantissa_bits={self.mantissa_bits}, block_size={self.block_size}, exponent_bits="
                f"{self.exponent_bits}, threshold={self.threshold:g}, {self.bits_per_element:g} bits/element")

    def with_threshold(self, threshold: float) -> BiEFormat:
        """The same format with another outlier threshold."""
        return BiEFormat(self.mantissa_bits, self.block_size, self.exponent_bits, threshold)

    def fields(self) -> list[Field]:
        w = self.exponent_bits
        return [Field("e_hi", w, True), Field("e_lo", w, True), Field("flag", self.flag_bits, False),
                Field("sign", 1, False), Field("mantissa", self.mantissa_bits, False)]

    def _exponents(self, blocks, dtype):
        """The outlier mask and (E_hi, E_lo), both capped so that every code is finite in ``dtype`` (saturation)."""
        a = blocks.abs()
        amax = a.amax(dim=1, keepdim=True)
        hi = a >= self.threshold * amax  # the outliers of the block
        m, emax = self.mantissa_bits, exponent_cap(dtype, self.mantissa_bits, self.emax)
        e_hi = shared_exponent(amax, m, self.emin, emax)  # E_hi: the block's largest exponent
        e_lo = shared_exponent(a.masked_fill(hi, 0.0).amax(dim=1, keepdim=True), m, self.emin, emax)  # of the rest
        return hi, e_hi, e_lo

    def _encode_blocks(self, blocks, dtype):
        hi, e_hi, e_lo = self._exponents(blocks, dtype)
        e_sel = torch.where(hi, e_hi, e_lo)
        return {"e_hi": e_hi + self.bias, "e_lo": e_lo + self.bias, "flag": hi.long(), "sign":
                torch.signbit(blocks).long(), "mantissa": round_to_grid(blocks.abs(), e_sel, self.mantissa_bits)}

    def _fake_blocks(self, blocks, dtype):
        hi, e_hi, e_lo = self._exponents(blocks, dtype)
        m, top = self.mantissa_bits, 2**self.mantissa_bits - 1
        step_hi, step_lo = pow2(e_hi - m + 1), pow2(e_lo - m + 1)
        step = torch.where(hi, step_hi, step_lo)
        return torch.round(blocks / step).clamp_(-top, top).mul_(step)

    def selected_exponents(self, x: torch.Tensor) -> torch.Tensor:
        """E_sel of every element of ``x`` (int64, shape of ``x``)."""
        codes = self._encode_blocks(self._blocks(x), x.dtype)
        return self._e_sel(codes).reshape(x.shape)

    def outlier_mask(self, x: torch.Tensor) -> torch.Tensor:
        """Which elements of ``x`` use E_hi (bool, shape of ``x``)."""
        return self._encode_blocks(self._blocks(x), x.dtype)["flag"].bool().reshape(x.shape)

    def _e_sel(self, codes):
        return torch.where(codes["flag"].bool(), codes["e_hi"].long(), codes["e_lo"].long()) - self.bias

    def _step_blocks(self, codes):
        return pow2(self._e_sel(codes) - self.mantissa_bits + 1)

    def _decode_blocks(self, codes):
        sign = 1.0 - 2.0 * codes["sign"].double()
        return sign * codes["mantissa"].double() * self._step_blocks(codes)  # (-1)^s * M * 2^(E_sel - m + 1)
