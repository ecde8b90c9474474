"""What every block format shares: blocking along the last dimension, shared exponents, bit packing, ``Packed``.

A block format splits the last (reduction) dimension of a tensor into blocks of ``block_size`` elements and stores,
per block, some metadata (a scale or shared exponents) and, per element, a few bits. Each format turns a block into
integer *codes* (``_encode_blocks``) and codes back into values (``_decode_blocks``); fake quantization is
decode(encode(x)) computed in float64 and returned in the input's dtype, where every result is exactly
representable, so the simulation is bit-exact (the same numbers a kernel that follows the format would produce).
Rounding is round half to even everywhere.

Overflow, one rule for every format: **saturation**. A finite input never gives an infinite (or NaN) output. Where a
block's largest magnitude needs more range than the format stores (a narrow shared exponent, an fp16 scale) or than
the input's dtype holds (fp16 65504, bf16 and fp32 3.4e38), the shared exponent or scale is capped at the largest
value whose every code decodes to a finite number *in that dtype*, and the elements above the grid saturate to the
largest mantissa (sign kept), as OCP MX does. ``BlockFormat.largest`` says where saturation starts.
Signed zero: formats with a sign bit (BFP, BiE, MX) keep -0 (and a negative value that rounds to zero is -0) in
``quantize`` and in the packed path alike; INT-k stores two's complement, which has no -0, so -0 becomes +0.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from icml24._validation import check_finite

ZERO_EXPONENT = -(10**6)  # floor_log2(0): below every exponent a format can store


@dataclass(frozen=True)
class Field:
    """One stored field: ``width`` bits, once per block (``per_block``) or once per element."""

    name: str
    width: int
    per_block: bool


@dataclass(frozen=True)
class Packed:
    """A tensor in a block format, bit-packed: ``data`` holds ``num_bits`` bits (then zero padding to a byte)."""

    format_name: str
    shape: tuple[int, ...]
    data: np.ndarray
    num_bits: int
    dtype: torch.dtype = torch.float32  # the encoded tensor's dtype, which decode returns

    @property
    def bits_per_element(self) -> float:
        """Stored bits over stored elements (the format's ``bits_per_element``, metadata included)."""
        return self.num_bits / max(int(np.prod(self.shape)), 1)


def floor_log2(a: torch.Tensor) -> torch.Tensor:
    """``floor(log2(a))`` as int64, exact for every finite float (subnormals included); ``ZERO_EXPONENT`` at 0."""
    _, exponent = torch.frexp(a.double())  # a = mant * 2**exponent, mant in [0.5, 1)
    return torch.where(a > 0, exponent.long() - 1, torch.full_like(exponent, ZERO_EXPONENT, dtype=torch.long))


def pow2(e: torch.Tensor) -> torch.Tensor:
    """``2**e`` in float64 (exact for |e| < 1000)."""
    return torch.ldexp(torch.ones_like(e, dtype=torch.float64), e.long())


def shared_exponent(amax: torch.Tensor, mantissa_bits: int, emin: int, emax: int) -> torch.Tensor:
    """The shared exponent E of a group whose largest magnitude is ``amax`` (values ``M * 2**(E - m + 1)``).

    E = floor(log2(amax)), plus one where amax would round up past the largest mantissa ``2**m - 1`` (the
    no-saturation choice; microxcaling's floor rule would clip instead), clamped to the stored range [emin, emax]
    (an all-zero group gets ``emin``). With this choice no element saturates: every error is at most half a step.
    """
    e = floor_log2(amax)
    top = torch.round(amax.double() * pow2(mantissa_bits - 1 - e.clamp(min=emin - 64)))
    e = torch.where(top > 2**mantissa_bits - 1, e + 1, e)
    return torch.where(amax > 0, e.clamp(emin, emax), torch.full_like(e, emin))


def finite_in(value: float, dtype: torch.dtype) -> bool:
    """Whether ``value`` (a float64 number) stays finite once rounded to ``dtype``."""
    return math.isfinite(float(torch.tensor(value, dtype=torch.float64).to(dtype)))


@functools.lru_cache(maxsize=256)
def exponent_cap(dtype: torch.dtype, mantissa_bits: int, emax: int) -> int:
    """The largest shared exponent E <= ``emax`` at which the largest ``dtype`` number quantizes (mantissa clipped
    to ``2**m - 1``) to a value finite in ``dtype``: the saturation rule caps E here. It is ``min(emax, E_d)``, E_d
    the dtype's largest exponent (127 for fp32 and bf16, 15 for fp16); the loop only guards that."""
    top, (frac, k) = 2**mantissa_bits - 1, math.frexp(torch.finfo(dtype).max)  # dmax = frac * 2**k
    e = min(emax, k - 1)

    def largest_at(e: int) -> float:  # (the largest mantissa dmax rounds to at E) * 2**(E - m + 1)
        shift = k - (e - mantissa_bits + 1)
        mantissa = top if shift > mantissa_bits + 1 else min(top, round(math.ldexp(frac, shift)))
        return math.ldexp(mantissa, e - mantissa_bits + 1)

    while not finite_in(largest_at(e), dtype):
        e -= 1
    return e


def round_to_grid(a: torch.Tensor, exponent: torch.Tensor, mantissa_bits: int) -> torch.Tensor:
    """Integer mantissa ``round(a / 2**(exponent - m + 1))`` (half to even), clipped to ``[0, 2**m - 1]``."""
    m = torch.round(a.double() * pow2(mantissa_bits - 1 - exponent))
    return m.clamp(0, 2**mantissa_bits - 1).long()


def _bits_of(values: torch.Tensor, width: int) -> np.ndarray:
    v = values.cpu().numpy().astype(np.int64)
    if v.size and (v.min() < 0 or v.max() >= 2**width):
        raise ValueError(f"a code does not fit in {width} bits (range {v.min()}..{v.max()}); this is a format bug")
    shifts = np.arange(width - 1, -1, -1, dtype=np.int64)
    return ((v[..., None] >> shifts) & 1).astype(np.uint8).reshape(v.shape[0], -1)


def pack_codes(codes: dict[str, torch.Tensor], fields: list[Field]) -> tuple[np.ndarray, int]:
    """Pack per-block codes into bytes: per block, the fields in order, each field's entries MSB first."""
    parts = [_bits_of(codes[f.name], f.width) for f in fields]
    bits = np.concatenate(parts, axis=1).reshape(-1)
    return np.packbits(bits), int(bits.size)


def unpack_codes(data: np.ndarray, num_bits: int, fields: list[Field], num_blocks: int,
                 block_size: int) -> dict[str, torch.Tensor]:
    """Inverse of ``pack_codes``."""
    bits = np.unpackbits(np.asarray(data, dtype=np.uint8))[:num_bits].astype(np.int64).reshape(num_blocks, -1)
    codes, start = {}, 0
    for f in fields:
        count = 1 if f.per_block else block_size
        chunk = bits[:, start:start + count * f.width].reshape(num_blocks, count, f.width)
        start += count * f.width
        weights = 2 ** np.arange(f.width - 1, -1, -1, dtype=np.int64)
        codes[f.name] = torch.from_numpy(chunk @ weights)
    return codes


class BlockFormat:
    """Base of the block formats: blocks of ``block_size`` elements along the last dimension.

    Subclasses define ``fields()`` (what is stored), ``_encode_blocks`` and ``_decode_blocks``; this class supplies
    fake quantization (``quantize``), the packed encoding (``encode``/``decode``), the quantization step of
    each element (``step``) and the exact bits per element, metadata included.
    """

    KIND = "component"  # icml24._contract

    name = "block"

    def __init__(self, block_size: int):
        if not isinstance(block_size, int) or block_size < 1:
            raise ValueError(f"block_size must be a positive int, got {block_size!r}")
        self.block_size = block_size

    # -- what a subclass provides -------------------------------------------------------------------------------
    def fields(self) -> list[Field]:
        raise NotImplementedError

    def _encode_blocks(self, blocks: torch.Tensor, dtype: torch.dtype) -> dict[str, torch.Tensor]:
        """Codes of float64 ``blocks`` whose decoded values are all finite in ``dtype`` (saturating)."""
        raise NotImplementedError

    def _decode_blocks(self, codes: dict[str, torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def _step_blocks(self, codes: dict[str, torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def _fake_blocks(self, blocks: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Quantize-dequantize without building codes (the fast path; tests check it equals decode(encode))."""
        return self._decode_blocks(self._encode_blocks(blocks, dtype))

    # -- derived ------------------------------------------------------------------------------------------------
    @property
    def bits_per_element(self) -> float:
        """Exact storage cost per element: element bits + metadata bits / block size."""
        fields = self.fields()
        meta = sum(f.width for f in fields if f.per_block)
        return sum(f.width for f in fields if not f.per_block) + meta / self.block_size

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"

    def describe(self) -> str:
        return f"B={self.block_size}, {self.bits_per_element:g} bits/element"

    @property
    def label(self) -> str:
        """Short name for tables: ``bfp_m3_b32``."""
        return self.name

    def _blocks(self, x: torch.Tensor, argument: str = "x") -> torch.Tensor:
        if not torch.is_tensor(x) or not x.is_floating_point():
            raise TypeError(f"{argument} must be a floating-point torch tensor, got {type(x).__name__}")
        check_finite(argument, x)
        if x.dim() == 0 or x.shape[-1] % self.block_size:
            raise ValueError(f"the last dimension of {argument} (shape {tuple(x.shape)}) must be a multiple of "
                             f"block_size={self.block_size}; pick a block size that divides it or pad the tensor")
        return x.detach().double().reshape(-1, self.block_size)

    def largest(self, dtype: torch.dtype = torch.float32) -> float:
        """The largest magnitude a ``dtype`` input quantizes to: every larger finite input saturates to it."""
        block = torch.full((1, self.block_size), torch.finfo(dtype).max, dtype=torch.float64)
        return float(self._fake_blocks(block, dtype).to(dtype).abs().max())

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        """Fake-quantize ``x`` (quantize then dequantize), blocks along the last dimension; same shape and dtype.

        Saturating: values beyond ``largest`` (for ``x``'s dtype) come back as ``±largest``, never as inf.
        """
        values = self._fake_blocks(self._blocks(x), x.dtype).reshape(x.shape).to(x.dtype)
        if not bool(torch.isfinite(values).all()):  # the saturation rule makes this unreachable
            raise RuntimeError(f"{self.label} produced a non-finite value from a finite {x.dtype} input; format bug")
        return values

    __call__ = quantize

    def step(self, x: torch.Tensor) -> torch.Tensor:
        """The quantization step (one ulp) each element of ``x`` is rounded to, in float64, shape of ``x``."""
        return self._step_blocks(self._encode_blocks(self._blocks(x), x.dtype)).reshape(x.shape)

    def encode(self, x: torch.Tensor) -> Packed:
        """The packed bits of ``x`` in this format (``Packed.num_bits == bits_per_element * x.numel()``)."""
        codes = self._encode_blocks(self._blocks(x), x.dtype)
        data, num_bits = pack_codes(codes, self.fields())
        return Packed(self.label, tuple(x.shape), data, num_bits, x.dtype)

    def decode(self, packed: Packed) -> torch.Tensor:
        """Values of a ``Packed`` made by ``encode`` of this same format, in the encoded tensor's dtype
        (``decode(encode(x))`` equals ``quantize(x)`` bit for bit, -0 included)."""
        if packed.format_name != self.label:
            raise ValueError(f"packed data is in format {packed.format_name!r}, not {self.label!r}; decode it with "
                             "the format that encoded it")
        numel = int(np.prod(packed.shape))
        codes = unpack_codes(packed.data, packed.num_bits, self.fields(), numel // self.block_size, self.block_size)
        return self._decode_blocks(codes).reshape(packed.shape).to(packed.dtype)


def check_int(name: str, value, low: int, high: int) -> int:
    """An int in [low, high], or a ValueError that names it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} must be an int in [{low}, {high}], got {value!r}")
    return int(value)
