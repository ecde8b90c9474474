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
from e4_parity_inputs import (  # noqa: E402
    ARM_SETS,
    HORIZON,
    STOPPING_CASES,
    allocation,
    arm_set,
    pulls,
    stopping_instance,
    stopping_noise,
)

from icml24.bandits import optimal_allocation  # noqa: E402


class _Recorder:
    """A bandit arm that returns 0 and counts its draws (the counts are what batch 2 is compared on)."""

    def __init__(self):
        self.draws, self.mean_return = 0, 0.0

    def draw(self):
        self.draws += 1
        return 0.0


class _Stream:
    """Arm k of a stopping case: its j-th draw returns ``mean_k + noise[k, j]`` (e4_parity_inputs.stopping_noise)."""

    def __init__(self, mean: float, noise: np.ndarray):
        self.mean_return, self.noise, self.draws = mean, noise, 0

    def draw(self):
        value = self.mean_return + self.noise[self.draws]
        self.draws += 1
        return value


class _Stopped(Exception):
    pass


class _Statistic(float):
    """The official statistic, which records the threshold it is compared with (``stopping_Z > beta``) and then
    stops the run: batches 3+ are not needed."""

    def __gt__(self, threshold):
        self.threshold = float(threshold)
        raise _Stopped


class _Numpy:
    """numpy for the official module; its ``min`` is E3TC.run's one ``np.min`` call, the stopping statistic."""

    def __getattr__(self, name):
        return getattr(np, name)

    def min(self, values, *args, **kwargs):
        self.statistic = _Statistic(np.min(values, *args, **kwargs))
        return self.statistic


def stopping_case(algorithms, name: str, kind: str, horizon: int, gamma: float) -> dict:
    """Run the official E3TC.run on a fixed instance with fixed reward streams up to its stopping test. The
    allocation is ours (cvxpy is not installed; the allocation is a stated deviation) on the official batch-1
    estimate; the pull counts, V^-1, the statistic and the threshold are the official code's."""
    arms, theta = stopping_instance(kind)
    num_arms, dim = arms.shape
    noise = stopping_noise(num_arms, horizon)
    streams = [_Stream(float(arms[k] @ theta), noise[k]) for k in range(num_arms)]
    agent = algorithms.E3TC(num_arms, dim, 1, gamma=gamma)
    batch1 = {}

    def allocate(context, _horizon):
        means = context.T @ agent.theta
        best = int(np.argmax(means))
        batch1["counts"] = [s.draws for s in streams]
        return optimal_allocation(context.T, means[best] - means, best=best).weights

    agent.track_and_stop_proportion = allocate
    recorder = algorithms.np = _Numpy()
    try:
        agent.run(arms.T.copy(), streams, horizon)
    except _Stopped:
        pass
    finally:
        algorithms.np = np
    counts2 = [s.draws - c for s, c in zip(streams, batch1["counts"], strict=True)]
    values = {"batch1_counts": batch1["counts"], "batch2_counts": counts2, "pulls": int(agent.t),
              "statistic": float(recorder.statistic), "threshold": recorder.statistic.threshold,
              "passed": float(recorder.statistic) > recorder.statistic.threshold}
    print(name, {k: v for k, v in values.items() if "counts" not in k})
    return {"name": name, "call": "E3TC.run up to the Chernoff stopping test (statistic and threshold inline)",
            "inputs": {"recipe": "tests/fixtures/e4_parity_inputs.py (STOPPING_CASES)", "instance": kind,
                       "T": horizon, "gamma": gamma},
            "values": values, "tolerance": 1e-6}  # relative: the official adds 1e-10 I to V^-1


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
    cases += [stopping_case(algorithms, *spec) for spec in STOPPING_CASES]
    write_fixture("e4", "panxulab/optimal-batched-linear-bandits", commit_of(path), cases,
                  notes="Deterministic pieces (the official rewards come from Python's random), and the Chernoff "
                        "stopping test of E3TC.run on fixed reward streams: its statistic and threshold are inline "
                        "in run, recorded by a numpy stand-in whose np.min(values) returns a float that records the "
                        "threshold it is compared with.")


if __name__ == "__main__":
    main()
