"""Time per GES search: ours against causal-learn's ges, on the same data in the same run.

1. Same score, two searches: our GES with causal-learn's marginal local score (cached) against causal-learn's own
   ges with that score. The CPDAGs must agree (this checks our search); the ratio is search + cache overhead.
2. The learned-kernel score in our GES against causal-learn's ges with its CV score (the slow one in the paper's
   comparison) and with its marginal score. Different scores need not agree: skeleton F1 of each is printed.

    python benchmarks/bench_kernel_ges.py [--variables 5] [--samples 100] [--density 0.5] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import torch

from icml24.causal import GES, CausalLearnScore, LearnedKernelScore, causallearn_ges, generate, skeleton_f1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variables", type=int, default=5)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--density", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)  # compare the searches, not the thread pools
    warnings.filterwarnings("ignore")  # causal-learn's overflow warnings during its hyperparameter search
    data = generate(args.variables, args.samples, args.density, rng=np.random.default_rng(args.seed))
    size = f"d={args.variables} n={args.samples} density={args.density}"

    start = time.perf_counter()
    ours = GES(CausalLearnScore("marginal").fit(data.data)).fit().cpdag_
    ours_seconds = time.perf_counter() - start
    theirs, theirs_seconds = causallearn_ges(data.data, "marginal")
    agree = bool((ours == theirs).all())
    print(f"same score (causal-learn marginal), our GES vs causal-learn ges, {size}: "
          f"ours {ours_seconds:.1f}s, causal-learn {theirs_seconds:.1f}s, ratio {theirs_seconds / ours_seconds:.2f}x, "
          f"CPDAGs {'agree' if agree else 'DISAGREE'}")

    start = time.perf_counter()
    learned = GES(LearnedKernelScore().fit(data.data, data.groups)).fit().cpdag_
    learned_seconds = time.perf_counter() - start
    for name in ("cv", "marginal"):
        peer, peer_seconds = (theirs, theirs_seconds) if name == "marginal" else causallearn_ges(data.data, name)
        print(f"learned-kernel GES vs causal-learn ges ({name} score), {size}: ours {learned_seconds:.1f}s, "
              f"causal-learn {peer_seconds:.1f}s, ratio {peer_seconds / learned_seconds:.2f}x, skeleton F1 ours "
              f"{skeleton_f1(data.dag, learned):.2f} vs {skeleton_f1(data.dag, peer):.2f} (different scores)")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
