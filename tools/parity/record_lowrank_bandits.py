"""Re-record tests/parity/lowrank-bandits.json from a local copy of wilrev/LowRankBanditsTwoToInfinity.

    python tools/parity/record_lowrank_bandits.py        # needs $ICML24_PEERS/LowRankBanditsTwoToInfinity

The official script is one file whose estimators read module globals (``best_arms``, ``r``, ``m``); the recorder
sets them to the fixture's instance, feeds the same samples (1-based, as the script expects) to each official
estimator and records its output: |estimate - true value| for the evaluators, the greedy policy's true value for
the best-policy identifiers. Timing is the official RS-PE call.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fixtures"))
from _record import commit_of, official_copy, write_fixture  # noqa: E402
from lowrank_parity_inputs import CASES, official_style_matrix, uniform_samples  # noqa: E402


def _load(path: Path):
    spec = importlib.util.spec_from_file_location("lowrank_official", path / "LowRankBanditsTwoToInfinity.py")
    module = importlib.util.module_from_spec(spec)
    np.random.seed(0)  # the script draws its own instance and 20k samples at import; not used here
    spec.loader.exec_module(module)
    return module


def main() -> None:
    path = official_copy("LowRankBanditsTwoToInfinity", "LowRankBanditsTwoToInfinity.py")
    official = _load(path)
    cases = []
    for name, m, n, rank, horizon, seed in CASES:
        matrix = official_style_matrix(m, n, rank, seed)
        contexts, arms, rewards = uniform_samples(matrix, horizon, seed)
        official.m, official.n, official.r = m, n, rank
        official.best_arms = [1 + int(np.argmax(matrix[x])) for x in range(m)]
        samples = [(int(x) + 1, int(a) + 1, float(rw)) for x, a, rw in zip(contexts, arms, rewards, strict=True)]
        pr = 1 - 1 / n  # the script's uniform behaviour
        start = time.perf_counter()
        rspe = official.DM_RS_MLB(samples, horizon, pr, 1e-4, matrix)
        seconds = time.perf_counter() - start
        values = {
            "rspe_error": float(rspe),
            "rspe_split_half_error": float(official.DM_RS_MLB_split(samples, horizon, pr, 1e-4, 0.5, matrix)),
            "sips_error": float(official.DM_RS(samples, horizon, pr, matrix)),
            "ips_error": float(official.IPS(samples, horizon, pr, matrix)),
            "sbpi_value": float(official.RS_BPI(samples, horizon, pr, matrix)),
            "rsbpi_value": float(official.RS_MLB_BPI(samples, horizon, pr, matrix)),
            "ips_bpi_value": float(official.IPS_BPI(samples, horizon, pr, matrix)),
            "target_value": float(official.policy_value(matrix)),
        }
        cases.append({"name": name, "call": "DM_RS_MLB, DM_RS_MLB_split(1/2), DM_RS, IPS, RS_BPI, RS_MLB_BPI, "
                      "IPS_BPI, policy_value", "inputs": {"recipe": "tests/fixtures/lowrank_parity_inputs.py",
                                                          "m": m, "n": n, "rank": rank, "T": horizon, "seed": seed},
                      "values": values, "tolerance": 1e-8, "official_seconds": {"rspe": seconds}})
        print(name, values, f"{seconds:.2f} s")
    write_fixture("lowrank-bandits", "wilrev/LowRankBanditsTwoToInfinity", commit_of(path), cases,
                  notes="Official functions called with module globals set to the fixture's instance.")


if __name__ == "__main__":
    main()
