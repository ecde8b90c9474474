"""Exhaustive ground truth batched through the model against one query at a time (as the official environment
queries the model once per step), and the precomputed environment against stepping the model per query.

    python benchmarks/bench_failure_landscape.py [--images 40] [--steps 2000]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch

from icml24.data import digits
from icml24.rl.failures import (
    FailureEnv,
    RandomSearch,
    digit_concepts,
    exhaustive_failure_rates,
    looped_failure_rates,
    train_classifier,
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=40)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    x, y, shape = digits()
    x = x.reshape(-1, *shape)
    order = np.random.default_rng(0).permutation(len(x))
    train, test = order[:1400], order[1400:1400 + args.images]
    model = train_classifier(x[train], y[train], generator=torch.Generator().manual_seed(0))
    grid = digit_concepts()
    ok = True

    start = time.perf_counter()
    fast = exhaustive_failure_rates(model, x[test], y[test], grid)
    t_fast = time.perf_counter() - start
    start = time.perf_counter()
    slow = looped_failure_rates(model, x[test], y[test], grid)
    t_slow = time.perf_counter() - start
    agree = float((fast.failures == slow.failures).mean())
    ok &= agree > 0.999
    print(f"ground truth, {grid.num_actions} actions x {args.images} images: batched {t_fast:.3f} s, per-query loop "
          f"{t_slow:.2f} s, ratio {t_slow / t_fast:.0f}x, failure outcomes agree on {100 * agree:.2f}% of pairs")

    results, times = {}, {}
    for name, precompute in (("precomputed", True), ("live", False)):
        start = time.perf_counter()
        env = FailureEnv(model, x[test], y[test], grid, precompute=precompute)
        results[name] = RandomSearch().explore(env, args.steps, seed=0)
        times[name] = time.perf_counter() - start
    same = bool((results["precomputed"].failures == results["live"].failures).all())
    ok &= same
    print(f"environment, {args.steps} random-search steps: precomputed table {times['precomputed']:.2f} s (incl. "
          f"build), live model per step {times['live']:.2f} s, ratio {times['live'] / times['precomputed']:.1f}x, "
          f"same failures: {same}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
