"""Time per GES search: ours against causal-learn's ges, on the same data in the same run.

0. The learned-kernel score's objective: closed-form gradient (what L-BFGS-B uses) against torch autograd, on 9
   (child, parents) pairs with 0-2 parents, 10 evaluations each at the initial point; values and gradients agree.
1. Same score, two searches: our GES with causal-learn's marginal local score (cached) against causal-learn's own
   ges with that score. The CPDAGs must agree (this checks our search); the ratio is search + cache overhead.
2. The learned-kernel score in our GES against causal-learn's ges with its CV score (issue 21: runtime
   reported against it) and with its marginal score. Different scores need not agree: skeleton F1 of each is printed.

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


def _autograd(objective, theta):
    t = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
    value = objective(t)
    value.backward()
    return value.item(), t.grad.numpy().copy()


def gradient_line(data, size: str, repeats: int = 10) -> bool:
    score = LearnedKernelScore().fit(data.data, data.groups)
    d = score.num_variables_
    pairs = [(c, [p]) for c in range(d) for p in range(d) if p != c][:6] + [(c, []) for c in range(2)]
    pairs += [(d - 1, [0, 1])]
    problems = [score.problem(c, ps) for c, ps in pairs]
    seconds, agree = [], True
    for evaluate in (_autograd, lambda objective, theta: objective.value_and_grad(theta)):
        start = time.perf_counter()
        for objective, init, _ in problems:
            for _ in range(repeats):
                evaluate(objective, init)
        seconds.append(time.perf_counter() - start)
    for objective, init, _ in problems:
        (v1, g1), (v2, g2) = _autograd(objective, init), objective.value_and_grad(init)
        agree &= bool(abs(v1 - v2) <= 1e-10 * max(1.0, abs(v1)) and np.allclose(g1, g2, rtol=1e-8, atol=1e-12))
    print(f"learned-kernel objective + gradient, closed form vs torch autograd, {size}, {len(pairs)} pairs x "
          f"{repeats}: closed form {seconds[1]:.2f}s, autograd {seconds[0]:.2f}s, "
          f"ratio {seconds[0] / seconds[1]:.2f}x, values and gradients {'agree' if agree else 'DISAGREE'}")
    return agree


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
    gradients_agree = gradient_line(data, size)

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
    return 0 if agree and gradients_agree else 1


if __name__ == "__main__":
    sys.exit(main())
