"""tall-masks: our merging kernels against official-style implementations, same inputs, one run.

The official TALL-masks code works on flattened weights for the mask rule and TIES, but builds the consensus mask
by looping over the tensors of every state dict and accumulating float counts, and packs one ``np.packbits`` per
task. We re-implement those paper-style loops here (our own code, following the described algorithm) on a
transformer-like state dict (many tensors), check that both give the same masks, and print the speed ratios.

Run: python benchmarks/bench_tall_masks.py [num_params_millions]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from icml24.merging import (
    PackedMasks,
    StateDictLayout,
    compute_tall_masks,
    consensus_mask,
    ties_vector,
)


def _state_dicts(num_tasks: int, millions: float, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    width = 256
    num_tensors = max(1, int(millions * 1e6 / (width * width + width)))
    base = {}
    for i in range(num_tensors):
        base[f"block{i}.weight"] = torch.randn(width, width, generator=g)
        base[f"block{i}.bias"] = torch.randn(width, generator=g)
    finetuned = [{k: v + 0.01 * torch.randn(v.shape, generator=g) * (torch.rand(v.shape, generator=g) < 0.3)
                  for k, v in base.items()} for _ in range(num_tasks)]
    return base, finetuned


def _timed(fn, repeat: int = 3):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def paper_style_ties(tv: torch.Tensor, keep: float = 0.2) -> torch.Tensor:
    """TIES as the official utilities compute it: kth-value trimming, sign of the sum, disjoint sum."""
    num_params = tv.shape[1]
    kth = tv.abs().kthvalue(num_params - int(num_params * keep), dim=1, keepdim=True).values
    trimmed = tv * (tv.abs() >= kth)
    sign = torch.sign(trimmed.sum(0))
    sign[sign == 0] = torch.sign(sign.sum())
    keep_mask = torch.where(sign.unsqueeze(0) > 0, trimmed > 0, trimmed < 0)
    return (trimmed * keep_mask).sum(0)


def paper_style_consensus(masks_per_task: list[dict[str, torch.Tensor]], k: int) -> dict[str, torch.Tensor]:
    out = {}
    for key in masks_per_task[0]:
        count = torch.zeros_like(masks_per_task[0][key], dtype=torch.float32)
        for mask in masks_per_task:
            count = count + mask[key].float()
        out[key] = count >= k
    return out


def main(millions: float = 4.0, num_tasks: int = 8) -> None:
    torch.set_num_threads(1)
    base, finetuned = _state_dicts(num_tasks, millions)
    layout = StateDictLayout.from_state_dict(base)
    flat_base, flat_ft = layout.flatten(base), layout.flatten_many(finetuned)
    tv = flat_ft - flat_base
    print(f"{num_tasks} tasks, {layout.num_params / 1e6:.1f}M parameters in {len(layout.keys)} tensors")

    ours_s, ours_ties = _timed(lambda: ties_vector(tv, 0.2, "sum"))
    ref_s, ref_ties = _timed(lambda: paper_style_ties(tv, 0.2))
    agree = float((ours_ties == ref_ties).float().mean())
    print(f"TIES dis-sum   ours {ours_s:.3f}s | paper-style {ref_s:.3f}s | ratio {ref_s / ours_s:.2f}x | "
          f"agreement {agree:.6f} (the paper's k-th value keeps one more entry per task)")

    mtl = tv.sum(0)
    ours_s, masks = _timed(lambda: compute_tall_masks(tv, mtl, 0.4))
    ref_s, ref_masks = _timed(lambda: (flat_base - flat_ft).abs() > 0.4 * (flat_base + mtl - flat_ft).abs())
    agree = float((masks == ref_masks).float().mean())
    print(f"TALL masks     ours {ours_s:.3f}s | weight-space rule {ref_s:.3f}s | ratio {ref_s / ours_s:.2f}x | "
          f"agreement {agree:.6f} (float rounding of theta_0 + tau)")

    per_task = [{k: v.bool() for k, v in layout.unflatten(m.float()).items()} for m in masks]
    ours_s, cons = _timed(lambda: consensus_mask(masks, 2))
    ref_s, ref_cons = _timed(lambda: paper_style_consensus(per_task, 2))
    same = torch.equal(cons, layout.flatten(ref_cons).bool())
    print(f"consensus k=2  ours {ours_s:.3f}s | per-tensor loop {ref_s:.3f}s | ratio {ref_s / ours_s:.2f}x | "
          f"identical {same}")

    ours_s, packed = _timed(lambda: PackedMasks.from_bool(masks))
    ref_s, ref_packed = _timed(lambda: [np.packbits(m.numpy()) for m in masks])
    same = all(np.array_equal(packed.packed[t], ref_packed[t]) for t in range(num_tasks))
    print(f"packbits       ours {ours_s:.3f}s | per-task {ref_s:.3f}s | ratio {ref_s / ours_s:.2f}x | "
          f"identical {same}; "
          f"{packed.nbytes / 1e6:.2f} MB for {num_tasks} masks vs {4 * num_tasks * layout.num_params / 1e6:.1f} MB "
          f"of float32 checkpoints")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 4.0)
