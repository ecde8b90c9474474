"""Cost of RPG's regional cross-attention hook against plain cross-attention, per denoising step.

One UNet forward (a classifier-free-guidance batch) with the hook at beta = 0.5 on a 2 x 2 plan (base + 4 regional
chunks) against the plain model on the base prompt, on the local TinyTextUNet and on a diffusers
UNet2DConditionModel with random weights (when diffusers is installed). Our hook attends only the queries inside
each region (the released code attends every query for every region, then crops); the ratio is hooked / plain time.
Agreement: with beta = 1 the hooked forward must equal the plain one exactly. Exits 1 if it does not.

    python benchmarks/bench_rpg.py [--batch 64] [--repeats 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from icml24.generative import TinyTextUNet, parse_split_ratio, regional_hook


def _time(fn, repeats: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def compare(name: str, model, x, t, base, regions, canvas, chunk_len, repeats: int) -> bool:
    layout = parse_split_ratio("1,1,1;1,1,1")
    full_context = torch.cat([base, regions], 1)
    with torch.no_grad():
        reference = _output(model(x, t, base))
        plain = _time(lambda: model(x, t, base), repeats)
        with regional_hook(model, layout, canvas, chunk_len, base_ratio=0.5):
            hooked = _time(lambda: model(x, t, full_context), repeats)
        with regional_hook(model, layout, canvas, chunk_len, base_ratio=1.0):
            same = torch.equal(_output(model(x, t, full_context)), reference)
    print(f"{name}: regional hook (2x2 plan, beta 0.5) vs plain cross-attention, batch {x.shape[0]}, "
          f"{tuple(x.shape[1:])}: plain {plain * 1e3:.1f} ms, hooked {hooked * 1e3:.1f} ms, "
          f"ratio {hooked / plain:.2f}x; beta=1 equals plain: {'yes' if same else 'NO'}")
    return same


def _output(out):
    return out.sample if hasattr(out, "sample") else out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    ok = True
    with torch.random.fork_rng():
        torch.manual_seed(0)
        local = TinyTextUNet(vocab_size=9, length=12, channels=24).eval()
    x, t = torch.randn(args.batch, 3, 16, 16, generator=gen), torch.randint(0, 100, (args.batch,), generator=gen)
    tokens = torch.randint(0, 9, (5 * args.batch, 12), generator=gen)
    with torch.no_grad():
        encoded = local.encode(tokens).reshape(args.batch, 5 * 12, -1)
    ok &= compare("local TinyTextUNet", local, x, t, encoded[:, :12], encoded[:, 12:], (16, 16), 12, args.repeats)
    try:
        from diffusers import UNet2DConditionModel
    except ImportError:
        print("diffusers UNet2DConditionModel: skipped (diffusers not installed)")
        return 0 if ok else 1
    with torch.random.fork_rng():
        torch.manual_seed(0)
        unet = UNet2DConditionModel(
            sample_size=16, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
            down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
            up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32, attention_head_dim=8,
            norm_num_groups=8).eval()
    batch = max(2, args.batch // 8)
    lx = torch.randn(batch, 4, 16, 16, generator=gen)
    ctx = torch.randn(batch, 5 * 77, 32, generator=gen)
    ok &= compare("diffusers UNet2DConditionModel (random weights)", unet, lx, torch.tensor(10), ctx[:, :77],
                  ctx[:, 77:], (16, 16), 77, max(2, args.repeats // 4))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
