"""Re-record tests/parity/e4.json from a local copy of panxulab/optimal-batched-linear-bandits.

    python tools/parity/record_e4.py        # needs $ICML24_PEERS/optimal-batched-linear-bandits

The official E3TC keeps its steps as methods or inline in ``run`` and draws rewards from Python's ``random``, so
the fixture compares the deterministic pieces on fixed inputs: the D-optimal design's pull counts
(``D_optimal_design``), the ridge state after a fixed pull sequence (``receive_reward``/``update_model``:
``DesignInv`` and ``theta``), batch 2's pull counts from a fixed allocation ``w`` (``pull_arms_track_and_stop``,
official gamma 10 and our 1) and the elimination rule (``successive_elimination``). cvxpy is imported by the
module but only used by ``track_and_stop_proportion``, which is not called: it is stubbed.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fixtures"))
from _record import commit_of, official_copy, write_fixture  # noqa: E402
from e4_parity_inputs import ARM_SETS, HORIZON, allocation, arm_set, pulls  # noqa: E402


class _Recorder:
    """A bandit arm that returns 0 and counts its draws (the counts are what batch 2 is compared on)."""

    def __init__(self):
        self.draws, self.mean_return = 0, 0.0

    def draw(self):
        self.draws += 1
        return 0.0


def main() -> None:
    path = official_copy("optimal-batched-linear-bandits", "algorithms.py")
    sys.modules.setdefault("cvxpy", types.ModuleType("cvxpy"))
    import algorithms  # the official module

    cases = []
    for name, num_arms, dim, seed in ARM_SETS:
        arms = arm_set(num_arms, dim, seed)
        context = arms.T  # the official code holds arms as columns
        agent = algorithms.E3TC(num_arms, dim, 1)
        design = agent.D_optimal_design(context, np.sqrt(HORIZON))
        agent.clear()
        agent.t = 0
        sequence, rewards = pulls(num_arms, seed)
        for arm, reward in zip(sequence, rewards, strict=True):
            agent.receive_reward(int(arm), context[:, arm], float(reward))
            agent.update_model()
        design_inv, theta = agent.DesignInv.copy(), agent.theta.copy()
        batch2 = {}
        for gamma in (10, 1):
            agent = algorithms.E3TC(num_arms, dim, 1, gamma=gamma)
            agent.t, agent.batch_complexity = 0, 0
            agent.results_for_this_agent, agent.results_batch = np.zeros(HORIZON), np.zeros(HORIZON)
            bandits = [_Recorder() for _ in range(num_arms)]
            agent.pull_arms_track_and_stop(context, bandits, allocation(num_arms, seed), HORIZON)
            batch2[str(gamma)] = [b.draws for b in bandits]
        agent = algorithms.E3TC(num_arms, dim, 1)
        agent.theta = theta
        varepsilon = 0.3
        _, kept = agent.successive_elimination(varepsilon, context)
        cases.append({"name": name, "call": "E3TC.D_optimal_design, receive_reward/update_model, "
                      "pull_arms_track_and_stop (gamma 10 and 1), successive_elimination(0.3)",
                      "inputs": {"recipe": "tests/fixtures/e4_parity_inputs.py", "K": num_arms, "d": dim,
                                 "seed": seed, "T": HORIZON},
                      "values": {"design_counts": design.tolist(), "design_inverse": design_inv.tolist(),
                                 "theta": theta.tolist(), "batch2_counts": batch2, "eliminate_kept": kept.tolist(),
                                 "eliminate_varepsilon": varepsilon},
                      "tolerance": 1e-10})
        print(name, "design", design.astype(int).tolist(), "batch2", batch2, "kept", kept.tolist())
    write_fixture("e4", "panxulab/optimal-batched-linear-bandits", commit_of(path), cases,
                  notes="Deterministic pieces only (the official rewards come from Python's random); the Chernoff "
                        "statistic is inline in E3TC.run and is compared through its inputs (V^-1, theta).")


if __name__ == "__main__":
    main()
