"""Wall time and regret per run of every algorithm on the random (K=50, d=20) instance, T=5e4.

    python benchmarks/bench_e4.py [--seeds 2] [--official /path/to/optimal-batched-linear-bandits]

With ``--official`` (a local checkout of panxulab/optimal-batched-linear-bandits; needs cvxpy) the official
E4 (``E3TC``) and PhaElimD run on the same instance beside ours and the time ratio is printed.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from icml24.bandits import (
    E4,
    EndOfOptimism,
    LinTS,
    LinUCB,
    PhasedElimination,
    RarelySwitchingOFUL,
    random_instance,
    run_batched,
)


def official(path: str, horizon: int, seeds: int) -> dict[str, tuple[float, float]]:
    sys.path.insert(0, path)
    import algorithms  # noqa: F401  (the official module)
    from arms import GaussianArm

    bandit = random_instance(50, 20, np.random.RandomState(1))
    context = bandit.arms.T
    out = {}
    for name, make in [("E3TC", lambda: algorithms.E3TC(50, 20, 1)),
                       ("PhaElimD", lambda: algorithms.SuccessiveElimination(50, 20, 1))]:
        regrets, start = [], time.perf_counter()
        for seed in range(seeds):
            import random

            random.seed(seed)
            np.random.seed(seed)
            arms = [GaussianArm(float(m), 1) for m in bandit.means]
            rewards, _, _ = make().run(context, arms, horizon)
            regrets.append(bandit.means.max() * horizon - rewards.sum())
        out[name] = ((time.perf_counter() - start) / seeds, float(np.mean(regrets)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--horizon", type=int, default=50_000)
    parser.add_argument("--official", default="")
    parser.add_argument("--sequential", action="store_true", help="also time LinUCB and LinTS")
    args = parser.parse_args()
    bandit = random_instance(50, 20, np.random.RandomState(1))
    policies = [E4, PhasedElimination, RarelySwitchingOFUL, EndOfOptimism]
    policies += [LinUCB, LinTS] if args.sequential else []
    ours = {}
    for policy in policies:
        runs = [run_batched(policy(), bandit, args.horizon, seed=s) for s in range(args.seeds)]
        ours[policy.__name__] = (np.mean([r.seconds for r in runs]), np.mean([r.final_regret for r in runs]),
                                 np.mean([r.num_batches for r in runs]))
        print(f"icml24 {policy.__name__:22s} {ours[policy.__name__][0]:8.3f} s/run  regret "
              f"{ours[policy.__name__][1]:9.1f}  batches {ours[policy.__name__][2]:8.1f}")
    if args.official:
        for name, (seconds, regret) in official(args.official, args.horizon, args.seeds).items():
            mine = ours["E4" if name == "E3TC" else "PhasedElimination"]
            print(f"official {name:20s} {seconds:8.3f} s/run  regret {regret:9.1f}  "
                  f"(icml24 is {seconds / mine[0]:.0f}x faster)")


if __name__ == "__main__":
    main()
