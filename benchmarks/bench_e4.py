"""CPU time of E4 and PhaElimD beside the official code's (E3TC, SuccessiveElimination) on the same instance.

    python benchmarks/bench_e4.py [--seeds 1] [--horizon 20000] [--official PATH] [--record]

The official code (panxulab/optimal-batched-linear-bandits; needs cvxpy) is NOT part of this repository. The
benchmark uses a local copy when it finds one: ``--official PATH``, else ``$ICML24_PEERS`` (default: ``peers/``
beside the repository) ``/optimal-batched-linear-bandits``; a ``_deps`` folder inside it (cvxpy installed with
``pip install --target``, numpy and scipy left to the venv) is put on the path. Our E4 runs with the official
``gamma = 10`` so both run the same algorithm. The noise streams differ (the official code draws from Python's
``random``), so "outputs agree" means: both end committed to the same (optimal) arm, on every seed.

Times are process CPU seconds (both sides single-threaded: one BLAS thread, SCS's solver), the median of 5 runs
(seed 0) after a warm-up. Without a local copy, the official times recorded in tests/fixtures/e4_official_times.json
(random K=9 d=5 T=20000, machine, load and date in the file; ``--record`` with a copy rewrites it) stand beside our
live time, the line labelled "recorded <date>". Exit status 1 only if the outputs disagree.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _timing import median_of
from threadpoolctl import threadpool_limits

from icml24.bandits import E4, PhasedElimination, random_instance, run_batched

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests/fixtures/e4_official_times.json"
OFFICIAL = {"E4": "E3TC", "PhaElimD": "SuccessiveElimination"}  # ours -> the official class
CPU = time.process_time


def _ratio(r: float) -> str:
    return f"{r:.1f}" if r < 10 else f"{r:.0f}"


def _default_official() -> Path | None:
    peers = Path(os.environ.get("ICML24_PEERS", ROOT.parent / "peers"))
    path = peers / "optimal-batched-linear-bandits"
    return path if (path / "algorithms.py").exists() else None


def _official_runs(path: Path, bandit, horizon: int, seeds: int) -> dict[str, tuple[float, float, bool]]:
    """Per official class: (median CPU seconds of the seed-0 run, mean regret over seeds, ends on the best arm)."""
    for folder in (path / "_deps", path):
        if folder.exists():
            sys.path.insert(0, str(folder))
    warnings.filterwarnings("ignore", category=FutureWarning, module="algorithms")  # cvxpy's reshape-order notice
    import algorithms  # the official module
    from arms import GaussianArm

    num_arms, dim = bandit.arms.shape

    def run(cls, seed: int) -> np.ndarray:
        random.seed(seed)
        np.random.seed(seed)
        arms = [GaussianArm(float(mean), 1) for mean in bandit.means]
        return cls(num_arms, dim, 1).run(bandit.arms.T.copy(), arms, horizon)[0]  # reg = 1, default gamma (10)

    out = {}
    for ours, name in OFFICIAL.items():
        cls = getattr(algorithms, name)
        pulled = [run(cls, seed) for seed in range(seeds)]
        _, seconds = median_of(lambda cls=cls: run(cls, 0), clock=CPU)
        regret = float(np.mean([bandit.means.max() * horizon - means.sum() for means in pulled]))
        out[ours] = (seconds, regret, all(bool(np.isclose(m[-1], bandit.means.max())) for m in pulled))
    return out


def _record(official: dict, ours: dict, args) -> None:
    """Write the official and our times of this run to the benchmark fixture."""
    parity = json.loads((ROOT / "tests/parity/e4.json").read_text())["source"]
    load = os.getloadavg()
    RECORDED.write_text(json.dumps({
        "paper": "e4",
        "source": {"repository": parity["repository"], "commit": parity["commit"]},
        "recorded": {"script": "benchmarks/bench_e4.py --record", "date": datetime.now(UTC).date().isoformat(),
                     "machine": f"{platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.1f}",
                     "python": platform.python_version(), "cvxpy": sys.modules["cvxpy"].__version__},
        "notes": "The local copy timed is the parity fixture's commit (tests/parity/e4.json); re-record with a copy "
                 "at another commit only after updating that fixture.",
        "clock": "process CPU seconds, median of 5 runs (seed 0) after a warm-up; one BLAS thread",
        "instance": {"kind": "random_instance(K, d, np.random.RandomState(1))", "K": args.arms, "d": args.dim,
                     "T": args.horizon, "seeds": args.seeds},
        "cases": [{"name": name, "official": OFFICIAL[name], "official_seconds": official[name][0],
                   "official_regret": official[name][1], "ours_seconds": ours[name][0], "ours_regret": ours[name][1],
                   "both_end_on_the_best_arm": official[name][2] and ours[name][2]} for name in OFFICIAL],
    }, indent=1) + "\n")
    print(f"recorded to {RECORDED.relative_to(ROOT)}")


def _against_the_recording(ours: dict, size: str, args) -> None:
    """Our live times beside the official times the fixture recorded (same instance only)."""
    fixture = json.loads(RECORDED.read_text())
    inst, when = fixture["instance"], fixture["recorded"]
    same = (inst["K"], inst["d"], inst["T"]) == (args.arms, args.dim, args.horizon)
    for case in fixture["cases"]:
        seconds, regret, _ = ours[case["name"]]
        line = f"{case['name']} {size}: icml24 {seconds * 1e3:.1f} ms CPU/run live (median of 5, regret {regret:.0f})"
        if not same:
            print(f"{line}; official: no local copy, and the recording is for K={inst['K']} d={inst['d']} "
                  f"T={inst['T']} (run with those sizes for the recorded ratio)")
            continue
        official = case["official_seconds"]
        print(f"{line}, official {case['official']} {official * 1e3:.0f} ms CPU/run recorded {when['date']} "
              f"({when['machine']}; ours then {case['ours_seconds'] * 1e3:.1f} ms), ratio {_ratio(official / seconds)}x"
              " against the recording (no local copy: no live official run, no agreement check)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--arms", type=int, default=9)
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--official", type=Path, default=None)
    parser.add_argument("--record", action="store_true", help="write the times of this run to the fixture")
    args = parser.parse_args()
    bandit = random_instance(args.arms, args.dim, np.random.RandomState(1))
    size = f"random K={args.arms} d={args.dim} T={args.horizon}"
    ours = {}
    with threadpool_limits(1):
        for name, make in (("E4", lambda: E4(gamma=10.0)), ("PhaElimD", PhasedElimination)):
            runs = [run_batched(make(), bandit, args.horizon, random_state=s, truncation="in_order")
                    for s in range(args.seeds)]
            _, seconds = median_of(lambda make=make: run_batched(make(), bandit, args.horizon, random_state=0,
                                                                 truncation="in_order"), clock=CPU)
            ours[name] = (seconds, float(np.mean([r.final_regret for r in runs])),
                          all(r.regret[-1] == r.regret[-2] for r in runs))  # the last pull has gap 0
        path = args.official or _default_official()
        if path is None:
            _against_the_recording(ours, size, args)
            return 0
        official = _official_runs(path, bandit, args.horizon, args.seeds)
    disagree = False
    for name, (seconds, regret, ends_best) in official.items():
        mine = ours[name]
        agree = ends_best and mine[2]
        disagree |= not agree
        print(f"{name} {size}: official {OFFICIAL[name]} {seconds * 1e3:.0f} ms CPU/run (regret {regret:.0f}), "
              f"icml24 {mine[0] * 1e3:.1f} ms CPU/run (regret {mine[1]:.0f}), ratio {_ratio(seconds / mine[0])}x "
              f"(median of 5, CPU, live); outputs {'agree' if agree else 'DISAGREE'} (both end on the optimal arm over "
              f"{args.seeds} seed(s): official {ends_best}, icml24 {mine[2]})")
    if args.record:
        _record(official, ours, args)
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
