"""Quantize-dequantize throughput (elements/s) of each block format, against a peer in the same run.

Peers: for MXFP4, torchao's MX quantize-dequantize (``to_mx`` + ``to_dtype``, FLOOR scaling), which must agree bit for
bit; for every format, its own packed-code path (encode to integer codes, decode), which the fast fake-quantization
path must equal exactly. One line per comparison, each time the median of ``--repeats`` (>= 5) runs after a warm-up;
exits non-zero only if outputs disagree.

    python benchmarks/bench_bie.py [--rows 1024] [--cols 1536] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys

import torch
from _timing import median_of

from icml24.llm.formats import BFPFormat, BiEFormat, IntFormat, MXFormat


def timed(fn, repeats: int):
    """``(median seconds of max(repeats, 5) runs after a warm-up, fn())``."""
    out, seconds = median_of(fn, repeats=max(repeats, 5))
    return seconds, out


def torchao_mxfp4():
    try:
        from torchao.prototype.mx_formats.mx_tensor import to_dtype, to_mx
    except Exception as error:  # noqa: BLE001 - any import failure means: no peer
        print(f"torchao MX unavailable ({type(error).__name__}: {error}); MXFP4 compared with its code path only")
        return None

    def qdq(x):
        scale, data = to_mx(x, torch.float4_e2m1fn_x2, 32)
        return to_dtype(data, scale, torch.float4_e2m1fn_x2, 32, torch.float32)

    return qdq


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--cols", type=int, default=1536)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(args.rows, args.cols, generator=g) * torch.exp(torch.randn(args.rows, args.cols, generator=g))
    n = x.numel()
    ok = True
    formats = [IntFormat(4, 64), BFPFormat(3, 32), MXFormat("e2m1", 32), BiEFormat(2, 64), BiEFormat(3, 64)]
    for fmt in formats:
        fast_s, fast = timed(lambda f=fmt: f.quantize(x), args.repeats)
        code_s, coded = timed(lambda f=fmt: f.decode(f.encode(x)), args.repeats)
        agree = torch.equal(fast, coded)
        ok &= agree
        print(f"{fmt.label} ({fmt.bits_per_element:g} b/elem), {args.rows}x{args.cols}: "
              f"fake-quant {fast_s * 1e3:.1f} ms "
              f"({n / fast_s / 1e6:.1f} M elem/s) vs packed encode+decode {code_s * 1e3:.1f} ms "
              f"({n / code_s / 1e6:.1f} M elem/s): {code_s / fast_s:.1f}x, outputs {'agree' if agree else 'DISAGREE'}")
    peer = torchao_mxfp4()
    if peer is not None:
        ours_s, ours = timed(lambda: MXFormat("e2m1", 32).quantize(x), args.repeats)
        peer_s, theirs = timed(lambda: peer(x), args.repeats)
        agree = torch.equal(ours, theirs)
        ok &= agree
        print(f"mxfp4 ours vs torchao to_mx+to_dtype, {args.rows}x{args.cols}: {ours_s * 1e3:.1f} ms "
              f"({n / ours_s / 1e6:.1f} M elem/s) vs {peer_s * 1e3:.1f} ms ({n / peer_s / 1e6:.1f} M elem/s): "
              f"ours/torchao time {ours_s / peer_s:.2f}, outputs {'bit-identical' if agree else 'DISAGREE'}")
    if not ok:
        print("FAIL: a comparison's outputs disagree", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
