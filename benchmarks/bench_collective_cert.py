"""collective-cert: speed of our certificate pieces against the paper-style implementations, in one run.

1. LP: the exact symmetry-reduced LP2 vs the paper's LP2 (rho x n variables for A1), both HiGHS, official Cora-ML
   votes, 100 targets, rho = 100 (MOSEK, used by the official code, is commercial and not available here); then
   the same pair with the 3-hop term (the certificate sound for the symmetric GCN) at rho = 20.
2. Smoothing: our vote counter (edgeless nodes reuse one isolated prediction; one batched forward over the touched
   nodes of many samples) vs the official loop (one full-graph forward per Monte Carlo sample), same GCN.

Run: ICML24_DATA=/path/to/data python benchmarks/bench_collective_cert.py
"""

from __future__ import annotations

import random
import sys
import time

import numpy as np
import scipy.sparse as sp
import torch

from icml24.data import cert_graph, cert_split, cert_votes
from icml24.graph.certify import (
    GCN,
    clopper_pearson,
    flip_weights,
    lp2,
    lp2_reduced,
    path_cost,
    path_costs,
    smoothed_votes,
)
from icml24.graph.certify.smoothing import perturb


def bench_lp(rho: int = 100, hops: int = 2) -> bool:
    data, votes = cert_graph("cora_ml"), cert_votes()
    y, n = data.y.numpy(), data.num_nodes
    ei = data.edge_index.numpy()
    adj = sp.csr_matrix((np.ones(ei.shape[1]), ei), shape=(n, n))
    _, _, test = cert_split(y, 50, 2020)
    p_a, p_b = clopper_pearson(votes["count_top"], votes["count_runner_up"], votes["num_samples"], 2 * 0.01 / 7)
    targets = np.array(random.Random(2021).sample(list(test[votes["top2"][test, 0] == y[test]]), 100))
    weights, (c1, c2) = flip_weights(p_a[targets], p_b[targets]), path_costs(0.9, 0.8)
    c3 = path_cost(3, 0.9, 0.8) if hops == 3 else None
    start = time.perf_counter()
    reduced = lp2_reduced(adj, targets, weights, rho, 6, c1, c2, c3=c3)
    reduced_s = time.perf_counter() - start
    start = time.perf_counter()
    full = lp2(adj, targets, weights, rho, 6, c1, c2, restrict=False, c3=c3)
    full_s = time.perf_counter() - start
    agree = abs(full.value - reduced.value) <= 1e-4
    print(f"LP2 hops={hops} rho={rho}: paper LP2 {full.num_variables} vars {full_s:.2f}s (M*={full.value:.4f}) | "
          f"reduced {reduced.num_variables} vars {reduced_s:.3f}s (M*={reduced.value:.4f}) | "
          f"speed-up {full_s / reduced_s:.0f}x | optima agree: {agree}")
    return agree


def bench_votes(num_samples: int = 300) -> None:
    torch.set_num_threads(1)
    data = cert_graph("cora_ml")
    torch.manual_seed(0)
    model = GCN(data.x.shape[1], 7, hidden_channels=64).eval()
    start = time.perf_counter()
    with torch.no_grad():
        counts = torch.zeros(data.num_nodes, 7, dtype=torch.long)
        gen = torch.Generator().manual_seed(0)
        for _ in range(num_samples):  # official style: one full forward per perturbed graph
            pred = model(data.x, perturb(data.edge_index, data.num_nodes, 0.9, 0.8, gen)).argmax(1)
            counts[torch.arange(data.num_nodes), pred] += 1
    loop_s = time.perf_counter() - start
    start = time.perf_counter()
    smoothed_votes(model, data.x, data.edge_index, 0.9, 0.8, num_samples, 7, 1000, torch.Generator().manual_seed(0))
    ours_s = time.perf_counter() - start
    print(f"votes N={num_samples}: loop {loop_s:.2f}s ({num_samples / loop_s:.0f}/s) | ours {ours_s:.3f}s "
          f"({num_samples / ours_s:.0f}/s) | speed-up {loop_s / ours_s:.0f}x")


if __name__ == "__main__":
    agreed = [bench_lp(), bench_lp(rho=20, hops=3)]
    bench_votes()
    sys.exit(0 if all(agreed) else 1)
