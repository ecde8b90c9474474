"""MX formats (OCP Microscaling v1.0): minifloat elements (E2M1 for MXFP4) sharing one E8M0 power-of-two scale."""

from __future__ import annotations

import torch

from .blocks import BlockFormat, Field, floor_log2, pow2

# element type -> (exponent bits, mantissa bits, largest normal); no inf/NaN codes except E4M3's (max 448)
ELEMENTS = {"e2m1": (2, 1, 6.0), "e2m3": (2, 3, 7.5), "e3m2": (3, 2, 28.0), "e4m3": (4, 3, 448.0)}
SCALE_BIAS = 127  # E8M0: 2**(code - 127), code 255 is NaN and never produced here


class MXFormat(BlockFormat):
    """An MX format: ``x ~ X * P`` with ``X = 2**(floor(log2(absmax)) - emax_elem)`` per block, ``P`` a minifloat.

    Follows the OCP MX v1.0 spec (Sec. 6.3, the "minimally supported" conversion) and torchao's FLOOR mode: the
    shared exponent is the floor rule (not the no-saturation one of BFP/BiE), so elements above the largest normal
    (6 for E2M1) saturate; elements round half to even; the scale exponent is clamped to [-127, 127] (so the
    largest output, ``max_normal * 2**(floor(log2(dtype max)) - emax_elem)``, is finite in every input dtype).
    Cost: ``1 + e + m + 8 / block_size`` bits per element (4.25 for MXFP4 with B = 32).

    Args:
        element (str): ``"e2m1"`` (MXFP4), ``"e2m3"``/``"e3m2"`` (MXFP6) or ``"e4m3"`` (MXFP8). Default: ``"e2m1"``.
        block_size (int): elements per shared scale. Default: 32 (the spec's).
    """

    name = "mx"

    def __init__(self, element: str = "e2m1", block_size: int = 32):
        super().__init__(block_size)
        if element not in ELEMENTS:
            raise ValueError(f"element must be one of {', '.join(ELEMENTS)}, got {element!r}")
        self.element = element
        self.ebits, self.mbits, self.max_normal = ELEMENTS[element]
        self.elem_bias = 2 ** (self.ebits - 1) - 1
        self.emax_elem = int(floor_log2(torch.tensor(self.max_normal)))
        self.min_normal_exp = 1 - self.elem_bias

    @property
    def label(self) -> str:
        return f"mx{self.element}_b{self.block_size}"

    def describe(self) -> str:
        return f"element={self.element}, block_size={self.block_size}, {self.bits_per_element:g} bits/element"

    def fields(self) -> list[Field]:
        return [Field("scale", 8, True), Field("element", 1 + self.ebits + self.mbits, False)]

    def _encode_blocks(self, blocks, dtype):
        amax = blocks.abs().amax(dim=1, keepdim=True)
        x_exp = torch.where(amax > 0, floor_log2(amax) - self.emax_elem, torch.full_like(amax, -SCALE_BIAS).long())
        x_exp = x_exp.clamp(-SCALE_BIAS, SCALE_BIAS)
        v = blocks * pow2(-x_exp)  # exact: a power-of-two scale
        a = v.abs()
        e = floor_log2(a).clamp(min=self.min_normal_exp)  # binade (subnormals share the lowest)
        q = torch.round(a * pow2(self.mbits - e)) * pow2(e - self.mbits)  # round half to even on the element grid
        q = q.clamp(max=self.max_normal)  # saturate
        qe = floor_log2(q)
        normal = q >= 2.0**self.min_normal_exp
        exp_code = torch.where(normal, qe + self.elem_bias, torch.zeros_like(qe))
        man = torch.where(normal, q * pow2(self.mbits - qe) - 2**self.mbits,
                          q * 2.0 ** (self.mbits - self.min_normal_exp)).long()
        code = (torch.signbit(v).long() << (self.ebits + self.mbits)) | (exp_code << self.mbits) | man
        return {"scale": x_exp + SCALE_BIAS, "element": code}

    def _fake_blocks(self, blocks, dtype):
        amax = blocks.abs().amax(dim=1, keepdim=True)
        x_exp = torch.where(amax > 0, floor_log2(amax) - self.emax_elem, torch.full_like(amax, -SCALE_BIAS).long())
        scale = pow2(x_exp.clamp(-SCALE_BIAS, SCALE_BIAS))
        v = blocks / scale
        a = v.abs()
        step = torch.full_like(a, 2.0 ** (self.min_normal_exp - self.mbits))
        for k in range(self.min_normal_exp + 1, self.emax_elem + 1):  # the element's binade, one compare each
            step = torch.where(a >= 2.0**k, 2.0 ** (k - self.mbits), step)
        q = torch.round(v / step).mul_(step).clamp_(-self.max_normal, self.max_normal)
        return q.mul_(scale)

    def _element_parts(self, codes):
        code = codes["element"].long()
        man = code & (2**self.mbits - 1)
        exp_code = (code >> self.mbits) & (2**self.ebits - 1)
        sign = 1.0 - 2.0 * ((code >> (self.ebits + self.mbits)) & 1).double()
        binade = torch.where(exp_code > 0, exp_code - self.elem_bias, torch.full_like(exp_code, self.min_normal_exp))
        return sign, exp_code, man, binade

    def _decode_blocks(self, codes):
        sign, exp_code, man, binade = self._element_parts(codes)
        significand = torch.where(exp_code > 0, man + 2**self.mbits, man).double()
        x_scale = pow2(codes["scale"].long() - SCALE_BIAS)
        return sign * significand * pow2(binade - self.mbits) * x_scale  # X * P

    def _step_blocks(self, codes):
        _, _, _, binade = self._element_parts(codes)
        return pow2(binade - self.mbits) * pow2(codes["scale"].long() - SCALE_BIAS)
