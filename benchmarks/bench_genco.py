"""GenCO's shortest-path solver: one batched Dijkstra call (``ShortestPathSolver``) against (a) the same paths as
a unit-flow MILP solved by HiGHS and (b) a per-map Dijkstra loop; equal path costs, time ratios in one run.

    python benchmarks/bench_genco.py [--grid 12] [--maps 32] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _timing import best_of

from icml24.generative import ShortestPathSolver, shortest_path_milp


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--grid", type=int, default=12)
    parser.add_argument("--maps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    costs = np.random.default_rng(0).uniform(0.1, 10.0, (args.maps, args.grid * args.grid))
    fast, exact = ShortestPathSolver(args.grid, args.grid), shortest_path_milp(args.grid, args.grid)
    paths, t_fast = best_of(lambda: fast.solve(costs), args.repeats)
    reference = fast.objective(costs, paths)
    ok = True
    peers = [("HiGHS path MILP", lambda: exact.solve(costs), 1),
             ("per-map Dijkstra loop", lambda: np.stack([fast.solve(c) for c in costs]), args.repeats)]
    for name, fn, repeats in peers:
        other, t_other = best_of(fn, repeats)
        agree = bool(np.allclose(fast.objective(costs, other), reference, atol=1e-7))
        ok &= agree
        print(f"shortest path, {args.maps} maps of {args.grid}x{args.grid}: batched Dijkstra {t_fast:.4f} s, "
              f"{name} {t_other:.4f} s, ratio {t_other / t_fast:.1f}x, path costs agree: {agree}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
