"""Wall time of E4 and PhaElimD beside the official code's (E3TC, SuccessiveElimination) on the same instance.

    python benchmarks/bench_e4.py [--seeds 1] [--horizon 20000] [--official /path/to/optimal-batched-linear-bandits]

The official code (panxulab/optimal-batched-linear-bandits; needs cvxpy) is NOT part of this repository. The
benchmark uses a local copy when it finds one: ``--official PATH``, else ``$ICML24_PEERS`` (default: ``peers/``
beside the repository) ``/optimal-batched-linear-bandits``; a ``_deps`` folder inside it (e.g. cvxpy installed
with ``pip install --target``) is put on the path. Our E4 runs with the official ``gamma = 10`` so both run
the same algorithm. The noise streams differ (the official code draws from Python's ``random``), so "outputs
agree" means: both end committed to the same (optimal) arm. One line per comparison; exit status 1 only if
the outputs disagree. Without a local copy it times ours only: the parity fixture records no official time (the
official E3TC needs cvxpy for its allocation, which the venv does not have). Our times are medians of 5 runs (seed 0)
after a warm-up; the official loop runs once per seed (it takes seconds).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
from _timing import median_of

from icml24.bandits import E4, PhasedElimination, random_instance, run_batched


def _default_official() -> Path | None:
    peers = Path(os.environ.get("ICML24_PEERS", Path(__file__).resolve().parents[2] / "peers"))
    path = peers / "optimal-batched-linear-bandits"
    return path if (path / "algorithms.py").exists() else None


def _official_runs(path: Path, bandit, horizon: int, seeds: int) -> dict[str, tuple[float, float, bool]]:
    for folder in (path / "_deps", path):
        if folder.exists():
            sys.path.insert(0, str(folder))
    import algorithms  # the official module
    from arms import GaussianArm

    num_arms, dim = bandit.arms.shape
    out = {}
    for name, make in (("E4", lambda: algorithms.E3TC(num_arms, dim, 1)),
                       ("PhaElimD", lambda: algorithms.SuccessiveElimination(num_arms, dim, 1))):
        start, regrets, ends_best = time.perf_counter(), [], True
        for seed in range(seeds):
            random.seed(seed)
            np.random.seed(seed)
            arms = [GaussianArm(float(mean), 1) for mean in bandit.means]
            means = make().run(bandit.arms.T.copy(), arms, horizon)[0]
            regrets.append(bandit.means.max() * horizon - means.sum())
            ends_best &= bool(np.isclose(means[-1], bandit.means.max()))
        out[name] = ((time.perf_counter() - start) / seeds, float(np.mean(regrets)), ends_best)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--arms", type=int, default=9)
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--official", type=Path, default=None)
    args = parser.parse_args()
    bandit = random_instance(args.arms, args.dim, np.random.RandomState(1))
    size = f"random K={args.arms} d={args.dim} T={args.horizon}"
    ours = {}
    for name, make in (("E4", lambda: E4(gamma=10.0)), ("PhaElimD", PhasedElimination)):
        runs = [run_batched(make(), bandit, args.horizon, random_state=s, truncation="in_order")
                for s in range(args.seeds)]
        _, seconds = median_of(lambda make=make: run_batched(make(), bandit, args.horizon, random_state=0,
                                                             truncation="in_order"))
        ours[name] = (seconds, float(np.mean([r.final_regret for r in runs])),
                      all(r.regret[-1] == r.regret[-2] for r in runs))  # the last pull has gap 0
    path = args.official or _default_official()
    if path is None:
        for name, (seconds, regret, _) in ours.items():
            print(f"{name} {size}: icml24 {seconds * 1e3:.0f} ms/run (median of 5, regret {regret:.0f}); official "
                  "skipped (no local copy: pass --official PATH or set ICML24_PEERS; no recorded official time)")
        return 0
    official = _official_runs(path, bandit, args.horizon, args.seeds)
    disagree = False
    for name, (seconds, regret, ends_best) in official.items():
        mine = ours[name]
        agree = ends_best and mine[2]
        disagree |= not agree
        print(f"{name} {size}: official {seconds * 1e3:.0f} ms/run (regret {regret:.0f}), icml24 "
              f"{mine[0] * 1e3:.0f} ms/run (regret {mine[1]:.0f}), ratio {seconds / mine[0]:.0f}x; outputs "
              f"{'agree' if agree else 'DISAGREE'} (both end on the optimal arm: official {ends_best}, "
              f"icml24 {mine[2]})")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
