"""Block number formats as bit-exact fake quantizers with a packed encoding (BiE, Zou et al., ICML 2024).

- ``blocks``: blocking, shared exponents, bit packing, ``Packed``.
- ``IntFormat`` (INT-k per group), ``BFPFormat`` (one shared exponent), ``MXFormat`` (OCP MX,
  MXFP4 = E2M1 + E8M0) and ``BiEFormat`` (two shared exponents and a per-element selector).
"""

from .bfp import BFPFormat
from .biexponent import BiEFormat
from .blocks import BlockFormat, Packed, floor_log2, shared_exponent
from .integer import IntFormat
from .mx import MXFormat

__all__ = ["BFPFormat", "BiEFormat", "BlockFormat", "IntFormat", "MXFormat", "Packed", "floor_log2",
           "shared_exponent"]
