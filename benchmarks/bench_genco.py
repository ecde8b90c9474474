"""GenCO's shortest-path solver: one batched Dijkstra call (``ShortestPathSolver``, the disjoint union of every map in
one ``scipy.sparse.csgraph`` call) against what a user would write instead, ``scipy.sparse.csgraph.dijkstra`` on
each map's own grid graph with the path read back from its predecessors; secondary lines: our solver called per map,
and the same paths as a unit-flow MILP solved by HiGHS. Equal path costs, median seconds of ``--repeats`` runs after
one warm-up, in CPU seconds (a loaded machine's wall clock inflates the per-map loops); exits 1 when any peer's path
costs disagree.

    python benchmarks/bench_genco.py [--grid 12] [--maps 32] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _timing import median_of
from scipy import sparse
from scipy.sparse.csgraph import dijkstra

from icml24.generative import ShortestPathSolver, shortest_path_milp
from icml24.generative.genco.solvers import _grid_graph


def scipy_per_map(costs: np.ndarray, height: int, width: int) -> np.ndarray:
    """The plain scipy way: per map, a CSR graph whose edge into a cell costs that cell, one Dijkstra from the
    top-left corner, the path to the bottom-right corner walked back through the predecessors."""
    src, dst = _grid_graph(height, width, diagonal=True)
    n = height * width
    out = np.zeros_like(costs)
    for b, c in enumerate(costs):
        graph = sparse.csr_array((c[dst] + 1e-12, (src, dst)), shape=(n, n))
        _, pred = dijkstra(graph, directed=True, indices=0, return_predecessors=True)
        node = n - 1
        while node != 0:
            out[b, node] = 1.0
            node = pred[node]
        out[b, 0] = 1.0
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--grid", type=int, default=12)
    parser.add_argument("--maps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.repeats < 5:
        parser.error("--repeats must be >= 5 (the median of at least 5 runs)")
    costs = np.random.default_rng(0).uniform(0.1, 10.0, (args.maps, args.grid * args.grid))
    fast, exact = ShortestPathSolver(args.grid, args.grid), shortest_path_milp(args.grid, args.grid)
    paths, t_fast = median_of(lambda: fast.solve(costs), repeats=args.repeats, clock=time.process_time)
    reference = fast.objective(costs, paths)
    ok = True
    peers = [("scipy.sparse.csgraph.dijkstra per map (peer)", lambda: scipy_per_map(costs, args.grid, args.grid)),
             ("our solver per map (loop, secondary)", lambda: np.stack([fast.solve(c) for c in costs])),
             ("HiGHS path MILP (secondary)", lambda: exact.solve(costs))]
    print(f"shortest path, {args.maps} maps of {args.grid}x{args.grid}, median CPU time of {args.repeats} runs after a "
          "warm-up")
    for name, fn in peers:
        other, t_other = median_of(fn, repeats=args.repeats, clock=time.process_time)
        agree = bool(np.allclose(fast.objective(costs, other), reference, atol=1e-7))
        ok &= agree
        print(f"  batched Dijkstra {t_fast:.4f} s vs {name} {t_other:.4f} s: {t_other / t_fast:.1f}x, "
              f"path costs agree: {agree}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
