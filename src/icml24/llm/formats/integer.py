"""INT-k per group: symmetric k-bit integers with one fp16 scale per group of ``block_size`` elements."""

from __future__ import annotations

import torch

from .blocks import BlockFormat, Field, check_int, finite_in

FP16_MAX = 65504.0


class IntFormat(BlockFormat):
    """Symmetric INT-k with an fp16 scale per group: ``x ~ q * s``, ``q`` in ``[-(2**(k-1) - 1), 2**(k-1) - 1]``.

    The scale is ``absmax / qmax`` rounded to fp16 and, where that rounding went down, moved up one fp16 step, so the
    group's largest element never clips (every error is at most half a step). Overflow saturates (module
    ``blocks``): the scale is capped at the largest fp16 value ``s`` with ``qmax * s`` finite
    in the input's dtype (65504 for fp32 inputs, 65504 / qmax rounded down for fp16), and larger groups clip to
    ``±qmax * s``. Two's complement has no -0: -0 quantizes to +0. Cost: ``k + 16 / block_size`` bits.

    Args:
        bits (int): k, element width (2..16). Default: 4.
        block_size (int): group size along the last dimension. Default: 32.
    """

    name = "int"

    def __init__(self, bits: int = 4, block_size: int = 32):
        super().__init__(block_size)
        self.bits = check_int("bits", bits, 2, 16)
        self.qmax = 2 ** (self.bits - 1) - 1

    @property
    def label(self) -> str:
        return f"int{self.bits}_g{self.block_size}"

    def describe(self) -> str:
        return f"bits={self.bits}, block_size={self.block_size}, {self.bits_per_element:g} bits/element"

    def fields(self) -> list[Field]:
        return [Field("scale", 16, True), Field("q", self.bits, False)]

    def scale_cap(self, dtype: torch.dtype) -> float:
        """The largest fp16 scale ``s`` with ``qmax * s`` finite in ``dtype`` (saturation starts above it)."""
        s = torch.tensor(min(FP16_MAX, torch.finfo(dtype).max / self.qmax), dtype=torch.float64)
        s16 = s.to(torch.float16)
        code = s16.view(torch.int16).long() - (s16.double() > s).long()  # rounded up: one fp16 step down
        cap = float(code.to(torch.int16).view(torch.float16))
        while not finite_in(cap * self.qmax, dtype):  # the product must survive the cast to dtype
            code -= 1
            cap = float(code.to(torch.int16).view(torch.float16))
        return cap

    def _scale(self, amax: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        cap = self.scale_cap(dtype)
        s = (amax / self.qmax).clamp(max=cap).to(torch.float16)
        code = s.view(torch.int16).long()
        low = (s.double() * self.qmax < amax) & (s.double() < cap)  # rounded down: the largest element would clip
        code = torch.where(low, code + 1, code)
        return code.to(torch.int16).view(torch.float16).double(), code

    def _encode_blocks(self, blocks, dtype):
        amax = blocks.abs().amax(dim=1, keepdim=True)
        s, code = self._scale(amax, dtype)
        q = torch.where(s > 0, torch.round(blocks / torch.where(s > 0, s, 1.0)), 0.0)
        q = q.clamp(-self.qmax, self.qmax).long()
        return {"scale": code, "q": q & (2**self.bits - 1)}

    def _fake_blocks(self, blocks, dtype):
        s, _ = self._scale(blocks.abs().amax(dim=1, keepdim=True), dtype)
        safe = torch.where(s > 0, s, 1.0)
        return torch.round(blocks / safe).clamp_(-self.qmax, self.qmax).mul_(s).add_(0.0)  # +0: no -0 in INT

    def _parts(self, codes):
        s = codes["scale"].to(torch.int16).view(torch.float16).double()
        q = codes["q"].long()
        q = torch.where(q >= 2 ** (self.bits - 1), q - 2**self.bits, q)  # two's complement
        return s, q

    def _decode_blocks(self, codes):
        s, q = self._parts(codes)
        return q.double() * s  # Eq. (INT): x ~ q * s

    def _step_blocks(self, codes):
        s, q = self._parts(codes)
        return s.expand_as(q).clone()
