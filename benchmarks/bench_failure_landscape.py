"""The exhaustive ground truth (every action x every image) against the way a user would compute it in torch: one
batched forward per action, each action's perturbation written out with torch's own ops (a single rotation grid,
one separable blur kernel, the darkening factor) for the whole pool; then, as secondary lines, against one query
at a time (as the official environment queries the model once per step) and the precomputed environment against
stepping the model per query.

    python benchmarks/bench_failure_landscape.py [--images 360] [--loop-images 5] [--steps 500] [--runs 5]

Each timing is the median CPU time of ``--runs`` (>= 5) runs after a warm-up, one torch thread. Exits 1 when a
comparison's outputs disagree (failure outcomes on more than 0.1% of (action, image) pairs, or any different query
outcome of the environment).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from _timing import median_of

from icml24.data import digits
from icml24.rl.failures import (
    FailureEnv,
    RandomSearch,
    digit_concepts,
    exhaustive_failure_rates,
    looped_failure_rates,
    train_classifier,
)


def median_time(fn, runs: int):
    """``(fn(), median CPU seconds of max(runs, 5) runs)`` after one warm-up call (one torch thread: CPU seconds
    are what a shared machine disturbs least)."""
    return median_of(fn, repeats=max(runs, 5), clock=time.process_time)


@torch.no_grad()
def per_action_torch(model, images: np.ndarray, labels: np.ndarray, grid) -> np.ndarray:
    """The peer: for each action, its rotation, blur and darkening applied to the whole pool with plain torch ops
    (rotation about the centre, bilinear, zero padding; a Gaussian truncated at ceil(2 sigma), zero padding;
    brightness 1 - f; clipped to [0, 1]) and one forward pass. Returns failures ``[A, n]``."""
    x = torch.from_numpy(images)[:, None]  # [n, 1, H, W]
    n, _, h, w = x.shape
    y = torch.from_numpy(labels)
    names = grid.names
    failures = np.zeros((grid.num_actions, n), dtype=bool)
    for a, values in enumerate(grid.values):
        v = dict(zip(names, values.tolist()))
        out = x
        rad = math.radians(v.get("rotation", 0.0))
        if rad:
            theta = torch.tensor([[math.cos(rad), -math.sin(rad) * h / w, 0.0],
                                  [math.sin(rad) * w / h, math.cos(rad), 0.0]], dtype=x.dtype)
            sampling = F.affine_grid(theta.expand(n, 2, 3), [n, 1, h, w], align_corners=False)
            out = F.grid_sample(out, sampling, mode="bilinear", padding_mode="zeros", align_corners=False)
        sigma = v.get("blur", 0.0)
        if sigma > 0:
            radius = max(1, math.ceil(2 * sigma))
            offsets = torch.arange(-radius, radius + 1, dtype=x.dtype)
            kernel = torch.exp(-0.5 * (offsets / sigma) ** 2)
            kernel = kernel / kernel.sum()
            out = F.conv2d(F.pad(out, (radius, radius, 0, 0)), kernel.view(1, 1, 1, -1))
            out = F.conv2d(F.pad(out, (0, 0, radius, radius)), kernel.view(1, 1, -1, 1))
        out = (out * (1.0 - v.get("darken", 0.0))).clamp(0.0, 1.0)
        failures[a] = (model(out[:, 0]).argmax(-1) != y).numpy()
    return failures


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=360)
    parser.add_argument("--loop-images", type=int, default=5)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    x, y, shape = digits()
    x = x.reshape(-1, *shape)
    order = np.random.default_rng(0).permutation(len(x))
    train, test = order[:1400], order[1400:1400 + args.images]
    model = train_classifier(x[train], y[train], random_state=0)
    grid = digit_concepts()
    ok = True

    ours, t_ours = median_time(lambda: exhaustive_failure_rates(model, x[test], y[test], grid), args.runs)
    peer, t_peer = median_time(lambda: per_action_torch(model, x[test], y[test], grid), args.runs)
    agree = float((ours.failures == peer).mean())
    ok &= agree >= 0.999
    print(f"ground truth, {grid.num_actions} actions x {len(test)} images (median of {args.runs}): ours "
          f"{t_ours * 1e3:.0f} ms, per-action batched torch (peer) {t_peer * 1e3:.0f} ms, ratio {t_peer / t_ours:.2f}x;"
          f" failure outcomes agree on {100 * agree:.3f}% of pairs, rates within "
          f"{np.abs(ours.rates - peer.mean(1)).max():.4f}")

    few = test[:args.loop_images]
    fast, t_fast = median_time(lambda: exhaustive_failure_rates(model, x[few], y[few], grid), args.runs)
    slow, t_slow = median_time(lambda: looped_failure_rates(model, x[few], y[few], grid), max(1, args.runs // 5))
    agree = float((fast.failures == slow.failures).mean())
    ok &= agree >= 0.999
    print(f"  secondary: {len(few)} images, per-query loop (as the official env queries) {t_slow:.2f} s vs ours "
          f"{t_fast * 1e3:.1f} ms, ratio {t_slow / t_fast:.0f}x, agree on {100 * agree:.2f}% of pairs")

    results, times = {}, {}
    for name, precompute in (("precomputed", True), ("live", False)):
        def explore(precompute=precompute):
            env = FailureEnv(model, x[test], y[test], grid, precompute=precompute)
            return RandomSearch().explore(env, args.steps, random_state=0)

        results[name], times[name] = median_time(explore, args.runs)
    same = bool((results["precomputed"].failures == results["live"].failures).all())
    ok &= same
    print(f"  secondary: environment, {args.steps} random-search steps: precomputed table {times['precomputed']:.2f} "
          f"s (incl. build), live model per step {times['live']:.2f} s, ratio "
          f"{times['live'] / times['precomputed']:.1f}x, same failures: {same}")
    if not ok:
        print("FAIL: a comparison's outputs disagree", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
