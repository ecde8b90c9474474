"""Time one RS-PE policy evaluation at T = 20k: ours (vectorized) against the official loop code, same data.

The official script (wilrev/LowRankBanditsTwoToInfinity, one file) is NOT part of this repository. The benchmark
uses a local copy when it finds one: ``--official PATH``, else ``$ICML24_PEERS`` (default: ``peers/`` beside
the repository) ``/LowRankBanditsTwoToInfinity/LowRankBanditsTwoToInfinity.py``.

Both implementations get the same samples (the official generator's), so their estimates must agree; one line
per comparison gives both times, the ratio and whether the outputs agree. Without a copy, the RS-PE fit the parity
fixture recorded (tests/parity/lowrank-bandits.json, m = n = 50, T = 20k: its machine and date printed) stands
against ours on the fixture's samples, our error checked against the recorded one. Times are medians of 5 runs after
a warm-up (the official loop code: one run, it takes a second). Exit status 1 only if outputs disagree.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np
from _timing import best_of, median_of

from icml24.bandits.lowrank import RSPE, LowRankBandit


def _load_official(path: Path):
    spec = importlib.util.spec_from_file_location("lowrank_official", path)
    module = importlib.util.module_from_spec(spec)
    np.random.seed(0)
    spec.loader.exec_module(module)  # the script draws 20k samples at import; that time is not counted
    return module


def _default_official() -> Path | None:
    import os

    peers = Path(os.environ.get("ICML24_PEERS", Path(__file__).resolve().parents[2] / "peers"))
    path = peers / "LowRankBanditsTwoToInfinity" / "LowRankBanditsTwoToInfinity.py"
    return path if path.exists() else None


def _against_the_recording() -> bool:
    """Ours on the fixture's m = n = 50, T = 20k samples against the official RS-PE fit time it recorded."""
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tests" / "fixtures"))
    from lowrank_parity_inputs import CASES, official_style_matrix, uniform_samples

    fixture = json.loads((root / "tests" / "parity" / "lowrank-bandits.json").read_text())
    name, m, n, rank, horizon, seed = CASES[1]
    case = next(c for c in fixture["cases"] if c["name"] == name)
    matrix = official_style_matrix(m, n, rank, seed)
    env, data = LowRankBandit(matrix), uniform_samples(matrix, horizon, seed)
    target = env.optimal_arms
    value, t_ours = median_of(lambda: RSPE(rank, tau=1e-4).fit(*data, env.uniform_behaviour).evaluate(target),
                              clock=time.process_time)  # CPU seconds: a loaded machine's wall clock would inflate ours
    error, recorded = abs(value - env.value(target)), case["values"]["rspe_error"]
    agree = abs(error - recorded) <= case["tolerance"] * max(1.0, recorded)
    official = case["official_seconds"]["rspe"]
    where = f"{fixture['recorded']['machine']}, {fixture['recorded']['date']}"
    print(f"RS-PE fit vs the official DM_RS_MLB (recorded on {where}), fixture samples m=n={m} T={horizon}: "
          f"ours {t_ours * 1e3:.1f} ms CPU live (median of 5), official {official * 1e3:.0f} ms wall recorded, ratio "
          f"{official / t_ours:.0f}x; error {error:.2e} vs recorded {recorded:.2e}: outputs "
          f"{'agree' if agree else 'DISAGREE'}")
    return agree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, default=None, help="path to LowRankBanditsTwoToInfinity.py")
    parser.add_argument("--horizon", type=int, default=20_000)
    args = parser.parse_args()
    horizon = args.horizon
    path = args.official or _default_official()

    env = LowRankBandit.official_instance(50, 50, 2, random_state=0)
    behaviour = env.uniform_behaviour

    def ours_end_to_end(seed):
        data = env.collect(horizon, behaviour, random_state=seed)
        return RSPE(2, tau=1e-4).fit(*data, behaviour).evaluate(env.optimal_arms)

    _, ours_total = median_of(lambda: ours_end_to_end(0))
    data = env.collect(horizon, behaviour, random_state=0)
    _, ours_fit = median_of(lambda: RSPE(2, tau=1e-4).fit(*data, behaviour).evaluate(env.optimal_arms))
    agree = _against_the_recording()
    if path is None:
        print(f"RS-PE m=n=50 T={horizon}: icml24 {ours_total * 1e3:.1f} ms end to end ({ours_fit * 1e3:.1f} ms fit); "
              "official live skipped (no local copy: pass --official PATH or set ICML24_PEERS)")
        return 0 if agree else 1

    official = _load_official(path)
    matrix = official.true_matrix
    samples, official_sampling = best_of(lambda: official.samples_generation(horizon, official.pr, matrix), repeats=1)
    official_error, official_fit = best_of(
        lambda: official.DM_RS_MLB(samples, horizon, official.pr, 1e-4, matrix), repeats=1)
    # the same samples through our estimator (official indices are 1-based)
    array = np.asarray(samples, dtype=float)
    contexts, arms, rewards = array[:, 0].astype(int) - 1, array[:, 1].astype(int) - 1, array[:, 2]
    same_env = LowRankBandit(matrix)
    target = np.asarray(official.best_arms) - 1
    ours_value, ours_same = median_of(
        lambda: RSPE(2, tau=1e-4).fit(contexts, arms, rewards, same_env.uniform_behaviour).evaluate(target))
    difference = abs(official_error - abs(ours_value - same_env.value(target)))
    agree &= difference <= 1e-8 * max(1.0, abs(official_error))
    verdict = f"outputs {'agree' if agree else 'DISAGREE'} (|error difference| {difference:.1e})"
    official_total = official_sampling + official_fit
    print(f"RS-PE fit, same 20k samples, m=n=50 T={horizon}: official {official_fit * 1e3:.0f} ms, icml24 "
          f"{ours_same * 1e3:.1f} ms, ratio {official_fit / ours_same:.0f}x; {verdict}")
    print(f"RS-PE sampling + fit, m=n=50 T={horizon}: official {official_total * 1e3:.0f} ms, icml24 "
          f"{ours_total * 1e3:.1f} ms, ratio {official_total / ours_total:.0f}x (own samples: errors not compared)")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
