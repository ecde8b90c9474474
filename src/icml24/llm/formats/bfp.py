"""BFP: block floating point, one shared exponent per block, sign + m-bit mantissa per element."""

from __future__ import annotations

import torch

from .blocks import BlockFormat, Field, check_int, exponent_cap, pow2, round_to_grid, shared_exponent


class BFPFormat(BlockFormat):
    """Block floating point: ``x ~ (-1)**s * M * 2**(E - (m - 1))`` with one exponent E per block, ``M < 2**m``.

    E is the block's largest exponent (``shared_exponent``, the no-saturation
    choice). Small values in a block with a large element round to zero: the weakness BiE addresses (paper Sec. 3).
    Overflow saturates (module ``blocks``): E is capped at the stored range and at the input
    dtype's (``exponent_bits=3`` stores E <= 4, so with m = 3 every |x| >= 28 gives ±28).
    Cost: ``1 + m + exponent_bits / block_size`` bits per element.

    Args:
        mantissa_bits (int): m (1..23). Default: 3.
        block_size (int): elements sharing one exponent. Default: 32.
        exponent_bits (int): width of the stored shared exponent (bias ``2**(w-1) - 1``). Default: 8.
    """

    name = "bfp"

    def __init__(self, mantissa_bits: int = 3, block_size: int = 32, exponent_bits: int = 8):
        super().__init__(block_size)
        self.mantissa_bits = check_int("mantissa_bits", mantissa_bits, 1, 23)
        self.exponent_bits = check_int("exponent_bits", exponent_bits, 2, 8)
        self.bias = 2 ** (self.exponent_bits - 1) - 1
        self.emin, self.emax = -self.bias, 2**self.exponent_bits - 1 - self.bias

    @property
    def label(self) -> str:
        return f"bfp_m{self.mantissa_bits}_b{self.block_size}"

    def describe(self) -> str:
        return (f"mantissa_bits={self.mantissa_bits}, block_size={self.block_size}, exponent_bits="
                f"{self.exponent_bits}, {self.bits_per_element:g} bits/element")

    def fields(self) -> list[Field]:
        return [Field("exponent", self.exponent_bits, True), Field("sign", 1, False),
                Field("mantissa", self.mantissa_bits, False)]

    def _exponent(self, blocks, dtype):
        emax = exponent_cap(dtype, self.mantissa_bits, self.emax)  # saturation: every code finite in dtype
        return shared_exponent(blocks.abs().amax(dim=1, keepdim=True), self.mantissa_bits, self.emin, emax)

    def _encode_blocks(self, blocks, dtype):
        e = self._exponent(blocks, dtype)
        return {"exponent": e + self.bias, "sign": torch.signbit(blocks).long(),
                "mantissa": round_to_grid(blocks.abs(), e, self.mantissa_bits)}

    def _fake_blocks(self, blocks, dtype):
        e = self._exponent(blocks, dtype)
        step, top = pow2(e - self.mantissa_bits + 1), 2**self.mantissa_bits - 1
        return torch.round(blocks / step).clamp_(-top, top).mul_(step)

    def _step_blocks(self, codes):
        e = codes["exponent"].long() - self.bias
        return pow2(e - self.mantissa_bits + 1).expand(codes["mantissa"].shape).clone()

    def _decode_blocks(self, codes):
        sign = 1.0 - 2.0 * codes["sign"].double()
        return sign * codes["mantissa"].double() * self._step_blocks(codes)  # (-1)^s * M * 2^(E - m + 1)
