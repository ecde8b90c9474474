"""Cost of RPG's regional cross-attention hook against plain cross-attention, per denoising step.

One UNet forward (a classifier-free-guidance batch) with the hook at beta = 0.5 on a 2 x 2 plan (base + 4 regional
chunks) against the plain model on the base prompt, on the local TinyTextUNet and on a diffusers
UNet2DConditionModel with random weights (when diffusers is installed). Our hook attends only the queries inside
each region (the released code attends every query for every region, then crops); the ratio is hooked / plain time.
Agreement: with beta = 1 the hooked forward must equal the plain one exactly. Exits 1 if it does not. Times are
medians of ``--repeats`` (>= 5) forwards after a warm-up. Against the official code: our processor on the parity
fixture's diffusers Attention (2x2 plan, beta 0.5) beside the official ``hook_forward``'s recorded time
(tests/parity/rpg.json, its machine and date printed), the outputs checked against the official ones.

    python benchmarks/bench_rpg.py [--batch 64] [--repeats 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
from _timing import median_of

from icml24.generative import TinyTextUNet, parse_split_ratio, regional_hook


def _time(fn, repeats: int) -> float:
    """Median seconds of max(repeats, 5) calls after a warm-up."""
    return median_of(fn, repeats=max(repeats, 5))[1]


def against_the_recording(repeats: int) -> bool:
    """Our regional processor on the fixture's Attention and inputs against the official hook's recorded time."""
    try:
        from diffusers.models.attention_processor import Attention
    except ImportError:
        print("RPG vs the official hook_forward (recorded): skipped (diffusers not installed)")
        return True
    from icml24.generative import RegionalAttnProcessor

    fixture = json.loads((Path(__file__).resolve().parents[1] / "tests" / "parity" / "rpg.json").read_text())
    case = next(c for c in fixture["cases"] if c["name"] == "attention_1,1,1;1,1,1")
    dim, heads, tokens = case["inputs"]["dim"], case["inputs"]["heads"], case["inputs"]["tokens"]
    module = Attention(query_dim=dim, cross_attention_dim=dim, heads=heads, dim_head=dim // heads)
    layout = parse_split_ratio(case["inputs"]["ratio"])
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fixtures"))
    from rpg_parity_inputs import seeded_attention_inputs  # the recorder's recipe

    x, context = seeded_attention_inputs(module, layout.num_regions, tokens, dim)
    with torch.no_grad():
        processor = RegionalAttnProcessor(module.processor, layout, (8, 8), tokens, base_ratio=0.5)
        out, seconds = median_of(lambda: processor(module, x, context), repeats=max(repeats, 5))
    gap = float(np.abs(out.numpy() - np.asarray(case["values"])).max())
    agree = gap <= case["tolerance"]
    where = f"{fixture['recorded']['machine']}, {fixture['recorded']['date']}"
    print(f"RPG regional cross-attention vs the official hook_forward (recorded on {where}), fixture Attention "
          f"(2x2 plan, beta 0.5, cond + uncond): ours {seconds * 1e3:.2f} ms live (median), official "
          f"{case['official_seconds'] * 1e3:.0f} ms recorded (one cold call), ratio "
          f"{case['official_seconds'] / seconds:.0f}x; "
          f"outputs {'agree' if agree else 'DISAGREE'} (max diff {gap:.1e}, tolerance {case['tolerance']})")
    return agree


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
    ok &= against_the_recording(args.repeats)
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
