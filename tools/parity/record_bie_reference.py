"""Reference BiE, BFP, INT-k and MXFP4 quantizers on fixed adversarial blocks, added to tests/parity/bie.json.

    python tools/parity/record_bie_reference.py     # numpy only; rewrites only the cases named ref_*

No official BiE code is public: the paper links none, a reproducibility review says the authors do not share it, and
searches of public GitHub code, issues and web pages (the title, "bi-exponent block floating point", the first
author's repositories) found none. So this script is an independent reference
written from the definitions as ``/work/shared/papers/bie.md`` reconstructs them and as the docstrings of
``icml24.llm.formats`` (``biexponent.py``, ``bfp.py``, ``integer.py``, ``mx.py``, the saturation rule of ``blocks.py``)
state them. It imports none of our code: one element at a time, in exact rational arithmetic (``fractions.Fraction``,
Python's ``round`` = round half to even), so no float64 shortcut of ours is shared with it. The definitions:

- BFP (m, B, w): bias ``2**(w-1) - 1``, stored E in ``[-bias, 2**w - 1 - bias]`` and at most the largest E whose every
  code ``(2**m - 1) * 2**(E - m + 1)`` is finite in float32. E = floor(log2 amax), plus one where amax rounds past
  ``2**m - 1`` (an all-zero block: the lowest E). Element: sign bit, ``M = min(round(|x| / 2**(E - m + 1)), 2**m - 1)``,
  value ``(-1)**s * M * 2**(E - m + 1)`` (a negative value that rounds to 0 is -0).
- BiE (m, B, w, t): outliers ``|x| >= t * amax`` (the product in float64, as the docstring's expression reads);
  E_hi = BFP's E of amax, E_lo = BFP's E of the largest non-outlier (0 if none); each element as BFP with E_sel.
- INT-k (k, B): ``qmax = 2**(k-1) - 1``; scale s = amax / qmax rounded (half to even) to fp16, capped at the largest
  fp16 s with ``qmax * s`` finite in float32, and one fp16 step up where the rounding went down (below the cap);
  ``q = clamp(round(x / s), -qmax, qmax)`` (0 where s = 0), value ``q * s``; two's complement, so no -0.
- MXFP4 (OCP MX v1.0, Sec. 6.3): ``X = 2**clamp(floor(log2 amax) - 2, -127, 127)`` (-127 for an all-zero block),
  elements ``x / X`` rounded to the E2M1 grid {0, .5, 1, 1.5, 2, 3, 4, 6} (ties to the even code), saturated to 6.

Stored fields (our storage convention): per block the fields in the order below, a field's entries MSB first, the
blocks one after another, zero-padded to a byte. Each case stores the input, the output values and their float32 bit
patterns, the fields (per block: one entry per block-level field, B per element field) and the packed bytes (hex).
"""

from __future__ import annotations

import bisect
import json
import math
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "parity" / "bie.json"
SEED = 60  # issue #60
REFERENCE = "tools/parity/record_bie_reference.py, derived from the paper's definition (no official code found)"
NOTE = (" Cases named ref_* (BiE, BFP, INT, MXFP4) are not torchao's: tools/parity/record_bie_reference.py "
        "computes them from the formats' definitions in exact arithmetic (no official BiE code is public); "
        "each says so in 'reference'.")
TWO = Fraction(2)
F32_OVERFLOW = TWO**128 - TWO**103  # float32 rounds a magnitude at or above this to inf
E2M1 = [Fraction(v) for v in ("0", "0.5", "1", "1.5", "2", "3", "4", "6")]


# ---- exact helpers -------------------------------------------------------------------------------------------
def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while TWO**e > a:
        e -= 1
    while TWO ** (e + 1) <= a:
        e += 1
    return e


def as_float32(magnitude: Fraction, negative: bool) -> float:
    """``magnitude`` with its sign as a Python float; it must be exactly a float32 (-0.0 kept)."""
    f = float(magnitude)
    if Fraction(f) != magnitude or float(np.float32(f)) != f:
        raise AssertionError(f"{magnitude} is not a float32: the definition left the float32 grid")
    return -f if negative else f


def negative(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def bfp_exponent(amax: Fraction, m: int, emin: int, emax: int) -> int:
    if amax == 0:
        return emin
    e = floor_log2(amax)
    if round(amax / TWO ** (e - m + 1)) > 2**m - 1:  # amax would round past the largest mantissa
        e += 1
    return min(max(e, emin), emax)


def float32_cap(m: int, emax: int) -> int:
    """The largest E <= emax whose largest code (2**m - 1) * 2**(E - m + 1) is finite in float32."""
    e = emax
    while (2**m - 1) * TWO ** (e - m + 1) >= F32_OVERFLOW:
        e -= 1
    return e


def on_grid(x: float, e: int, m: int) -> tuple[int, int, float]:
    """(sign bit, mantissa M, value) of x on the grid M * 2**(e - m + 1), M clipped to 2**m - 1."""
    step = TWO ** (e - m + 1)
    mantissa = min(round(abs(Fraction(x)) / step), 2**m - 1)
    return int(negative(x)), mantissa, as_float32(mantissa * step, negative(x))


# ---- the four formats, one block at a time -------------------------------------------------------------------
def bfp_block(xs, mantissa_bits, exponent_bits, block_size):
    m, bias = mantissa_bits, 2 ** (exponent_bits - 1) - 1
    emin, emax = -bias, float32_cap(m, 2**exponent_bits - 1 - bias)
    e = bfp_exponent(max(abs(Fraction(x)) for x in xs), m, emin, emax)
    fields = {"exponent": [e + bias], "sign": [], "mantissa": []}
    values = []
    for x in xs:
        s, mantissa, v = on_grid(x, e, m)
        fields["sign"].append(s)
        fields["mantissa"].append(mantissa)
        values.append(v)
    return values, fields


def bie_block(xs, mantissa_bits, exponent_bits, threshold, block_size):
    m, bias = mantissa_bits, 2 ** (exponent_bits - 1) - 1
    emin, emax = -bias, float32_cap(m, 2**exponent_bits - 1 - bias)
    amax = max(abs(x) for x in xs)
    outlier = [abs(x) >= threshold * amax for x in xs]  # float64 product, as written
    rest = [Fraction(abs(x)) for x, o in zip(xs, outlier) if not o]
    e_hi = bfp_exponent(Fraction(amax), m, emin, emax)
    e_lo = bfp_exponent(max(rest, default=Fraction(0)), m, emin, emax)
    fields = {"e_hi": [e_hi + bias], "e_lo": [e_lo + bias], "flag": [], "sign": [], "mantissa": []}
    values = []
    for x, o in zip(xs, outlier):
        s, mantissa, v = on_grid(x, e_hi if o else e_lo, m)
        fields["flag"].append(int(o))
        fields["sign"].append(s)
        fields["mantissa"].append(mantissa)
        values.append(v)
    return values, fields


def fp16_value(code: int) -> Fraction:
    exponent, fraction = code >> 10, code & 0x3FF
    if exponent == 0:
        return fraction * TWO**-24
    return (1024 + fraction) * TWO ** (exponent - 25)


FP16 = [fp16_value(c) for c in range(0x7C00)]  # every finite non-negative fp16, increasing with its code


def fp16_round(v: Fraction) -> int:
    """The code of the fp16 nearest to v >= 0 (ties to the even code); v at most 65504 here."""
    hi = bisect.bisect_left(FP16, v)
    if hi == len(FP16):
        raise AssertionError("above fp16 range")
    if FP16[hi] == v or hi == 0:
        return hi
    lo = hi - 1
    below, above = v - FP16[lo], FP16[hi] - v
    return lo if below < above or (below == above and lo % 2 == 0) else hi


def int_block(xs, bits, block_size):
    qmax = 2 ** (bits - 1) - 1
    cap = max(c for c in range(len(FP16)) if qmax * FP16[c] < F32_OVERFLOW)
    amax = max(abs(Fraction(x)) for x in xs)
    code = fp16_round(min(amax / qmax, FP16[cap]))
    if FP16[code] * qmax < amax and code < cap:  # rounded down: the largest element would clip
        code += 1
    s = FP16[code]
    fields = {"scale": [code], "q": []}
    values = []
    for x in xs:
        q = 0 if s == 0 else max(-qmax, min(qmax, round(Fraction(x) / s)))
        fields["q"].append(q % 2**bits)  # two's complement
        values.append(as_float32(abs(q) * s, q < 0))  # q = 0 gives +0
    return values, fields


def mxfp4_block(xs, block_size):
    amax = max(abs(Fraction(x)) for x in xs)
    e = min(max(floor_log2(amax) - 2, -127), 127) if amax > 0 else -127  # emax of E2M1 = 2 (6 = 1.5 * 2**2)
    fields = {"scale": [e + 127], "element": []}
    values = []
    for x in xs:
        v = abs(Fraction(x)) / TWO**e
        if v >= E2M1[-1]:
            k = 7  # saturate
        else:
            k = min(range(8), key=lambda i: (abs(E2M1[i] - v), i % 2))  # nearest, ties to the even code
        fields["element"].append(int(negative(x)) << 3 | k)
        values.append(as_float32(E2M1[k] * TWO**e, negative(x)))
    return values, fields


FORMATS = {  # kind -> (block function, layout: [(field, width, per block)])
    "bie": (bie_block, lambda p: [("e_hi", p["exponent_bits"], True), ("e_lo", p["exponent_bits"], True),
                                  ("flag", 1, False), ("sign", 1, False), ("mantissa", p["mantissa_bits"], False)]),
    "bfp": (bfp_block, lambda p: [("exponent", p["exponent_bits"], True), ("sign", 1, False),
                                  ("mantissa", p["mantissa_bits"], False)]),
    "int": (int_block, lambda p: [("scale", 16, True), ("q", p["bits"], False)]),
    "mx": (mxfp4_block, lambda p: [("scale", 8, True), ("element", 4, False)]),
}


def reference(kind: str, params: dict, x: np.ndarray) -> dict:
    block, layout = FORMATS[kind]
    args = {k: v for k, v in params.items() if k != "element"}
    size = params["block_size"]
    flat = [float(v) for v in x.reshape(-1)]
    values, fields, bits = [], {name: [] for name, _, _ in layout(params)}, []
    for start in range(0, len(flat), size):
        vals, fl = block(flat[start:start + size], **args)
        values += vals
        for name, width, _ in layout(params):
            fields[name].append(fl[name])
            for code in fl[name]:
                bits += [(code >> (width - 1 - i)) & 1 for i in range(width)]
    return {"values": np.array(values).reshape(x.shape).tolist(),
            "bits": [[struct.unpack(">I", struct.pack(">f", v))[0] for v in row]
                     for row in np.array(values).reshape(x.shape[0], -1).tolist()],
            "fields": fields, "packed": np.packbits(np.array(bits, dtype=np.uint8)).tobytes().hex(),
            "num_bits": len(bits)}


# ---- the adversarial inputs ----------------------------------------------------------------------------------
def f32(v: float) -> float:
    return float(np.float32(v))


def up(v: float) -> float:  # the next float32 above
    return float(np.nextafter(np.float32(v), np.float32(np.inf)))


def down(v: float) -> float:
    return float(np.nextafter(np.float32(v), np.float32(0)))


def blocks(*rows, size: int) -> np.ndarray:
    """Each row padded (repeating its small tail) to ``size`` elements, one block per row."""
    out = []
    for row in rows:
        row = list(row)
        fill = [v * 0.01 for v in row[1:]] or [0.0]
        k = 0
        while len(row) < size:
            row.append(fill[k % len(fill)] * (-1) ** k)
            k += 1
        out.append(row[:size])
    return np.array(out, dtype=np.float32)


def heavy(rng, rows: int, cols: int, scale: float) -> np.ndarray:
    return (rng.standard_normal((rows, cols)) * np.exp(1.5 * rng.standard_normal((rows, cols))) * scale).astype(
        np.float32)


def grid_sets(rng, size: int, top: float, largest: float, note_largest: str) -> dict[str, tuple[np.ndarray, str]]:
    """Blocks for the power-of-two grid formats (BFP, BiE) with m = 3 (largest mantissa 7)."""
    tiny = 2.0**-149
    return {
        "random": (np.concatenate([heavy(rng, 2, 2 * size, 1.0), heavy(rng, 1, 2 * size, 1e-20),
                                   heavy(rng, 1, 2 * size, 1e20)]), "log-normal magnitudes on a Gaussian"),
        "mean_vs_max": (blocks([50.0] + list(rng.standard_normal(size - 1) * 0.01),
                               [-1e3] + [1e-3 * (-1) ** i for i in range(size - 1)],
                               [1.0] * (size - 1) + [2.0], [3.0, 2.9, -2.8, 2.7, 0.4, -0.3], size=size),
                        "a block whose mean exponent is below its max exponent, each block"),
        "ties": (blocks(*[[v * 2.0**k for v in (7.0, 3.5, 4.5, 5.5, 6.5, -4.5, -6.5, 3.25, 0.25, -0.25, 0.75,
                                                1.25, 1.75, -2.25, 2.75, -0.75)] for k in (0, -30, 50)],
                        size=size), "midpoints of the grid at E_hi (amax 7) and at E_lo (3.25): half to even"),
        "exponent_boundary": (blocks([7.5, 1.0], [down(7.5), 1.0], [7.0, 1.0], [8.0, 1.0], [down(8.0), 1.0],
                                     [8.0, 3.75, 1.0], [8.0, down(3.75), 1.0], [-7.5 * 2.0**-20, 1e-6],
                                     size=size),
                              "amax exactly where the mantissa rounds to 2**m (E moves up one) and just below"),
        "threshold_boundary": (blocks([6.0, 3.0, down(3.0), up(3.0), -3.0, 0.5], [6.0, -down(3.0), 0.2],
                                      size=size), "elements exactly at 0.5 * amax (outliers) and one ulp below"),
        "outlier": (blocks([3.4e38, 1.0, -2.0, 0.5], [1e30, 1.5, -0.7], [1.0, 1e-30, -3e-31], size=size),
                    "one huge outlier among normal values"),
        "zeros": (blocks([0.0] * size, [-0.0] * size, [1.0, -0.0, 0.0, -0.0], [-1e-3, -0.0, 0.0], size=size),
                  "all +0, all -0, ±0 beside a value, -0 beside a negative value"),
        "tiny": (blocks([tiny, -tiny, 1e-40, -1e-40, 2.0**-126, 2.0**-130, -2.0**-130, 3 * 2.0**-130],
                        [1e-45, -1e-45, 1e-44], [2.0**-127, -2.0**-128, 2.0**-131], size=size),
                 "subnormals and the smallest normal; the shared exponent clamps at its lowest code"),
        "largest": (blocks([largest, -largest, 1.0], [up(largest), 1.0], [-up(largest), 1.0],
                           [top, -top], [f32(3.4028235e38), -1.0], [-f32(3.4028235e38), 1e-3], size=size),
                    note_largest),
    }


def cases() -> list[dict]:
    rng = np.random.default_rng(SEED)
    c: list[tuple[str, str, dict, np.ndarray, str]] = []
    big = 7 * 2.0**125  # m = 3, E capped at 127 (float32): the largest BFP/BiE value
    for kind, params in (("bie", {"mantissa_bits": 3, "block_size": 16, "exponent_bits": 8, "threshold": 0.5}),
                         ("bfp", {"mantissa_bits": 3, "block_size": 16, "exponent_bits": 8})):
        sets = grid_sets(rng, 16, 7.5 * 2.0**125, big,
                         "the largest value (7 * 2**125), one float32 above it, 7.5 * 2**125 (needs E = 128: capped, "
                         "saturates) and the float32 maximum")
        for name, (x, what) in sets.items():
            c.append((f"{kind}_m3_b16_{name}", kind, params, x, what))
    narrow = "largest 28 (E capped at 4), just above, 30 (rounds to E = 5: saturates), 1e3; tiny: E clamped at -3"
    for kind, params in (("bie", {"mantissa_bits": 3, "block_size": 16, "exponent_bits": 3, "threshold": 0.5}),
                         ("bfp", {"mantissa_bits": 3, "block_size": 16, "exponent_bits": 3})):
        x = blocks([28.0, -1.0, 0.3], [up(28.0), 2.0], [30.0, -29.0, 0.1], [1e3, -1e3, 5.0],
                   [2.0**-6, -2.0**-6, 3 * 2.0**-6, 2.0**-7], [0.2, 0.01, -2.0**-6], size=16)
        c.append((f"{kind}_m3_b16_w3_saturation", kind, params, x, narrow))
    c.append(("bie_m2_b64_random", "bie", {"mantissa_bits": 2, "block_size": 64, "exponent_bits": 8, "threshold": 0.5},
              heavy(rng, 2, 64, 1.0), "the paper's 4.25-bit configuration (bie_m2_b64)"))
    c.append(("bie_m1_b16_t1_random", "bie", {"mantissa_bits": 1, "block_size": 16, "exponent_bits": 8,
                                              "threshold": 1.0},
              np.concatenate([heavy(rng, 2, 32, 1.0), blocks([4.0, -4.0, 1.5, 3.0, 0.75], [1.5, 0.75, -0.375],
                                                              size=16).reshape(1, 32)]),
              "m = 1, threshold 1 (only the block maximum and its ties use E_hi)"))
    third = float(np.nextafter(1 / 3, 1.0))  # 3 * third = 1 + 2**-53 exactly, which float64 rounds to 1
    c.append(("bie_m3_b16_threshold_rounding", "bie", {"mantissa_bits": 3, "block_size": 16, "exponent_bits": 8,
                                                        "threshold": third},
              blocks([3.0, 1.0, 0.2, -0.2], size=16),
              "threshold*amax = 1 + 2**-53 exactly, 1.0 in float64: x = 1 is an outlier with the product in float64 "
              "(both ours and this reference), not with it in exact arithmetic (E_lo, and 0.2's value, would differ)"))
    c.append(("bie_m23_b16_random", "bie", {"mantissa_bits": 23, "block_size": 16, "exponent_bits": 8,
                                            "threshold": 0.25},
              np.concatenate([heavy(rng, 2, 32, 1.0), (heavy(rng, 1, 32, 1.0) * 2.0**-140).astype(np.float32)]),
              "m = 23 (one bit fewer than float32: half-to-even ties on the last bit) and subnormal blocks"))
    c.append(("bfp_m23_b16_random", "bfp", {"mantissa_bits": 23, "block_size": 16, "exponent_bits": 8},
              np.concatenate([heavy(rng, 2, 32, 1.0), (heavy(rng, 1, 32, 1.0) * 2.0**-140).astype(np.float32)]),
              "m = 23: half-to-even ties on float32's last bit, and subnormal blocks"))
    c.append(("bfp_m4_b32_random", "bfp", {"mantissa_bits": 4, "block_size": 32, "exponent_bits": 8},
              heavy(rng, 2, 64, 1.0), "the paper-run configuration bfp_m4_b32"))

    int4 = {"bits": 4, "block_size": 16}
    s16 = float(FP16[0x3C01])  # 1 + 2**-10: the fp16 step above 1
    int_sets = {
        "random": (np.concatenate([heavy(rng, 2, 32, 1.0), heavy(rng, 1, 32, 1e-3), heavy(rng, 1, 32, 300.0)]),
                   "log-normal magnitudes on a Gaussian"),
        "ties": (blocks(*[[v * k for v in (7.0, 0.5, -0.5, 1.5, -1.5, 2.5, 3.5, -4.5, 5.5, 6.5, -6.5, 0.25, -0.25,
                                            -0.0, 6.75, -5.25)] for k in (1.0, 2.0**-10, 2.0**8)], size=16),
                 "midpoints q + 1/2 of the integer grid with an exact fp16 scale (amax 7 * 2**k): half to even; "
                 "-0 and negatives that round to 0 come back +0"),
        "scale_rounding": (blocks([7.0 * (1 + 2.0**-11)], [f32(7.0 * (1 + 2.0**-11) * (1 + 2.0**-20))],
                                  [down(f32(7.0 * (1 + 2.0**-11)))], [7.0 * s16], [up(7.0)], [down(7.0)],
                                  [f32(1.0001)], [f32(7 * 65504.0 * 0.999)], size=16),
                           "amax / 7 at, above and below an fp16 midpoint (rounds down: bumped one step up)"),
        "mean_vs_max": (blocks([50.0] + list(rng.standard_normal(15) * 0.01), [-1e3, 1e-3, 0.7], size=16),
                        "a block whose mean is far below its max"),
        "zeros": (blocks([0.0] * 16, [-0.0] * 16, [1.0, -0.0, 0.0], size=16), "zeros and -0 (INT has no -0)"),
        "tiny": (blocks([1e-30, -1e-30, 5e-31], [2.0**-149, -2.0**-149], [7 * 2.0**-24, 3.5 * 2.0**-24],
                        [f32(2.0**-24 * 7 * 0.6)], size=16),
                 "amax / 7 below fp16's smallest subnormal 2**-24 (scale rounds to 0: bumped to 2**-24)"),
        "largest": (blocks([7 * 65504.0, -1.0], [up(7 * 65504.0), 1.0], [1e10, -1e10], [f32(3.4028235e38), 1.0],
                           [-f32(3.4028235e38), -1.0], size=16),
                    "the largest value 7 * 65504 (fp16 scale cap), just above, 1e10 and the float32 maximum"),
    }
    for name, (x, what) in int_sets.items():
        c.append((f"int4_g16_{name}", "int", int4, x, what))
    c.append(("int8_g32_random", "int", {"bits": 8, "block_size": 32},
              np.concatenate([heavy(rng, 1, 64, 1.0), blocks([1e3, 1.0, -0.5], [127 * 0.5, 0.25, -0.75], size=32)
                              .reshape(1, 64)]), "INT8: random, an outlier block and exact-scale ties"))
    c.append(("int4_g64_random", "int", {"bits": 4, "block_size": 64}, heavy(rng, 1, 128, 1.0),
              "the paper-run configuration int4_g64"))

    mx = {"element": "e2m1", "block_size": 32}
    grid = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    mids = [(a + b) / 2 for a, b in zip(grid, grid[1:])]
    tie_row = [6.0, 0.25, -0.25] + mids + [-v for v in mids] + [0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -5.0, -0.0]
    mx_sets = {
        "random": (np.concatenate([heavy(rng, 2, 32, 1.0), heavy(rng, 1, 32, 1e-30), heavy(rng, 1, 32, 1e30)]),
                   "log-normal magnitudes on a Gaussian"),
        "ties": (blocks(*[[v * 2.0**k for v in tie_row] for k in (0, -20, 40)], size=32),
                 "midpoints of the E2M1 grid (amax 6: X = 1): ties to the even code"),
        "mean_vs_max": (blocks([50.0] + list(rng.standard_normal(31) * 0.01), [-1e3, 1e-3, 0.7], size=32),
                        "one outlier: small elements flush to ±0"),
        "saturation": (blocks([7.99, -7.0, 1.0], [6 * 2.0**125, 1.0], [7 * 2.0**125, -1.0],
                              [f32(3.4028235e38), -f32(3.4028235e38)], size=32),
                       "block maxima the floor rule puts above 6 (saturate), the largest value 6 * 2**125 and above"),
        "zeros": (blocks([0.0] * 32, [-0.0] * 32, [1.0, -0.0, 0.0], size=32), "zeros and -0 (E2M1 keeps -0)"),
        "tiny": (blocks(*[[v * a for v in np.linspace(-1, 1, 32)] for a in (5e-39, 2e-38, 1e-37)],
                        [2.0**-149, -2.0**-149], size=32),
                 "amax below 2**-124: the scale exponent clamps at -127 (torchao differs there; the spec does not)"),
    }
    for name, (x, what) in mx_sets.items():
        c.append((f"mxfp4_b32_{name}", "mx", mx, x, what))

    out = []
    for name, kind, params, x, what in c:
        x = np.asarray(x, dtype=np.float32)
        ref = reference(kind, params, x)
        out.append({"name": f"ref_{name}", "call": f"record_bie_reference.reference({kind!r}, {params})",
                    "reference": REFERENCE, "what": what, "format": {"kind": kind, **params},
                    "inputs": {"dtype": "float32", "seed": SEED, "x": x.tolist()},
                    "values": ref["values"], "bits": ref["bits"], "fields": ref["fields"], "packed": ref["packed"],
                    "num_bits": ref["num_bits"], "tolerance": 0.0,
                    "tolerance_derivation": "exact: both sides compute every value on the format's grid, which float32 "
                                            "holds exactly; compared as float32 bit patterns (-0 vs +0 distinct)"})
    return out


def main() -> None:
    data = json.loads(FIXTURE.read_text())
    kept = [c for c in data["cases"] if "reference" not in c]  # torchao's cases, unchanged
    data["cases"] = kept + cases()
    if NOTE.strip() not in data.get("notes", ""):
        data["notes"] = data.get("notes", "") + NOTE
    FIXTURE.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {FIXTURE.relative_to(ROOT)}: {len(kept)} torchao cases kept, {len(data['cases']) - len(kept)} "
          "reference cases")


if __name__ == "__main__":
    main()
