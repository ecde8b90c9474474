"""Time one RS-PE policy evaluation at T = 20k: ours (vectorized) against the official loop code, same data.

The official script (wilrev/LowRankBanditsTwoToInfinity, one file) is NOT part of this repository. Point the
benchmark at a local copy of ``LowRankBanditsTwoToInfinity.py``:

    python benchmarks/bench_lowrank_bandits.py --official /path/to/LowRankBanditsTwoToInfinity.py

Both implementations get the same samples (the official generator's), so their estimates must agree; the
script prints both errors, their difference and the time ratios. Without ``--official`` it times ours only.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

from icml24.bandits.lowrank import RSPE, LowRankBandit


def _load_official(path: Path):
    spec = importlib.util.spec_from_file_location("lowrank_official", path)
    module = importlib.util.module_from_spec(spec)
    np.random.seed(0)
    spec.loader.exec_module(module)  # the script draws 20k samples at import; that time is not counted
    return module


def _timed(fn, *args, repeats: int = 1):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - start)
    return result, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, default=None, help="path to LowRankBanditsTwoToInfinity.py")
    parser.add_argument("--horizon", type=int, default=20_000)
    args = parser.parse_args()
    horizon = args.horizon

    env = LowRankBandit.official_instance(50, 50, 2, rng=0)
    behaviour = env.uniform_behaviour

    def ours_end_to_end(seed):
        data = env.collect(horizon, behaviour, rng=seed)
        return RSPE(2, tau=1e-4).fit(*data, behaviour).evaluate(env.optimal_arms)

    _, ours_total = _timed(ours_end_to_end, 0, repeats=3)
    data = env.collect(horizon, behaviour, rng=0)
    _, ours_fit = _timed(lambda: RSPE(2, tau=1e-4).fit(*data, behaviour).evaluate(env.optimal_arms), repeats=3)
    print(f"ours      sampling + RS-PE at T={horizon}: {ours_total * 1e3:8.1f} ms "
          f"(RS-PE fit alone {ours_fit * 1e3:.1f} ms)")
    if args.official is None:
        print("official  skipped (pass --official PATH to a local copy of the official script)")
        return

    official = _load_official(args.official)
    matrix = official.true_matrix
    pr = official.pr
    samples, official_sampling = _timed(official.samples_generation, horizon, pr, matrix)
    official_error, official_fit = _timed(official.DM_RS_MLB, samples, horizon, pr, 1e-4, matrix)
    # the same samples through our estimator (official indices are 1-based)
    array = np.asarray(samples, dtype=float)
    contexts, arms, rewards = array[:, 0].astype(int) - 1, array[:, 1].astype(int) - 1, array[:, 2]
    same_env = LowRankBandit(matrix)
    target = np.asarray(official.best_arms) - 1
    ours_value = RSPE(2, tau=1e-4).fit(contexts, arms, rewards, same_env.uniform_behaviour).evaluate(target)
    ours_error = abs(ours_value - same_env.value(target))
    print(f"official  sampling {official_sampling * 1e3:8.1f} ms, RS-PE fit {official_fit * 1e3:8.1f} ms")
    print(f"speed-up  end to end x{(official_sampling + official_fit) / ours_total:.0f}, "
          f"fit alone x{official_fit / ours_fit:.0f}")
    print(f"same data: official error {official_error:.6f}, ours {ours_error:.6f}, "
          f"difference {abs(official_error - ours_error):.2e}")


if __name__ == "__main__":
    sys.exit(main())
