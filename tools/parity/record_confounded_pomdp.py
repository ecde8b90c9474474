"""Re-record tests/parity/confounded-pomdp.json from a local copy of soheilsayahvarg/model-based-rl-confounded-pomdps.

    python tools/parity/record_confounded_pomdp.py   # needs $ICML24_PEERS/model-based-rl-confounded-pomdps

The third-party study (the paper has no code) implements the tabular two-stage estimator in
``Extension/src/estimation/bridge_estimator.py`` (``TabularBridgeEstimator``) and the chain value in
``Phase_2/src/estimation/value_plugin.py`` (``plugin_value``). Episodes come from OUR simulator
(``tabular_toy().sample(n, default_rng(seed))``), so both sides see identical logs. Three cases:

- ``stage1``: the official stage-I tables (``_stage1_tables``, all episodes in stage I): the ridge conditional
  mean embedding mu_hat(w | x) and the MLE target p_hat(r, o | x) at t = 1, 2.
- ``stage2_integrated``: the official stage-II solve (``_stage2_solve``, primal) with every index y drawn once
  per point (a stub generator) and lambda2 / |Y|: that is the closed form our estimator uses, on the official
  tables, so the two must agree to rounding.
- ``estimator``: the whole official pipeline (random split, one uniform y'' per point, MLE targets) on the same
  episodes, values of the 8 deterministic memoryless policies, the true values (exact DP), and the official time.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _record import commit_of, official_copy, write_fixture  # noqa: E402

from icml24.rl import deterministic_policies, tabular_toy  # noqa: E402

REPOSITORY = "soheilsayahvarg/model-based-rl-confounded-pomdps"
STAGE_N, STAGE_SEED = 2000, 0
ESTIMATOR_RUNS = [(2000, 0), (2000, 1), (2000, 2), (10000, 0), (10000, 1), (10000, 2)]


class _EveryIndex:
    """Stands in for the generator of the official stage II: each y exactly once per (replicated) point."""

    def __init__(self, n_y: int):
        self.n_y = n_y

    def integers(self, low, high, size):
        return np.tile(np.arange(self.n_y), size // self.n_y)


def _episodes(n, seed):
    data = tabular_toy().sample(n, np.random.default_rng(seed))
    return data.o0, data.obs, data.actions, data.rewards


def main() -> None:
    path = official_copy("model-based-rl-confounded-pomdps", "Extension/src/estimation/bridge_estimator.py")
    sys.path.insert(0, str(path / "Extension" / "src" / "estimation"))
    sys.path.insert(0, str(path / "Phase_2" / "src" / "estimation"))
    from bridge_estimator import TabularBridgeEstimator, stage_indices
    from value_plugin import empirical_p_o1, plugin_value

    cases = []
    o0, obs, actions, rewards = _episodes(STAGE_N, STAGE_SEED)
    est = TabularBridgeEstimator(3, 2, 2, 2, 3, mode="primal")
    n, lam1 = STAGE_N, 1.0 / STAGE_N
    tables, solves = {}, {}
    for t in (1, 2):
        w, x, y, _, sz = stage_indices(o0, obs, actions, rewards, t, 3, 2, 2, 2)
        mu, pmf, seen = est._stage1_tables(w, x, y, sz["n_w"], sz["n_x"], sz["n_y"], n, lam1)
        tables[f"t{t}"] = {"mu": mu.tolist(), "pmf_reward": pmf.tolist()}
        lam2 = 0.03 / np.sqrt(n)
        reps = np.repeat(x, sz["n_y"])  # every stage-II point once per index y
        b = est._stage2_solve(mu, pmf, seen, reps, sz["n_w"], sz["n_y"], reps.size, lam2 / sz["n_y"],
                              _EveryIndex(sz["n_y"]), label=f"bR_t{t}")
        solves[f"t{t}"] = b.tolist()
    recipe = {"generator": "icml24.rl.tabular_toy().sample(n, numpy.random.default_rng(seed))", "n": STAGE_N,
              "seed": STAGE_SEED, "stage_one": "all episodes, lambda1 = 1 / n", "y": "(r, o) flat as r * 3 + o"}
    cases.append({"name": "stage1", "call": "TabularBridgeEstimator._stage1_tables(w, x, y, ..., N1=n, lam1=1/n)",
                  "inputs": recipe, "values": tables, "tolerance": 1e-12,
                  "deviation": "the official target p_hat(y | x) is the MLE n(y, x) / n(x); ours is the same ridge "
                               "regression as mu_hat, n(y, x) / (n(x) + N1 lambda1)"})
    cases.append({"name": "stage2_integrated",
                  "call": "TabularBridgeEstimator._stage2_solve(mu, pmf, seen, x repeated |Y| times, ..., "
                          "lam2 = 0.03 / sqrt(n) / |Y|, rng = each index once per point), primal",
                  "inputs": {**recipe, "lambda2": "0.03 / sqrt(n) in our closed form"}, "values": solves,
                  "tolerance": 1e-10})

    policies = deterministic_policies(3, 2, 3)
    truth = [tabular_toy().value(pi) for pi in policies]
    values, seconds = {}, []
    for n, seed in ESTIMATOR_RUNS:
        o0, obs, actions, rewards = _episodes(n, seed)
        start = time.process_time()  # CPU seconds: a loaded recording machine does not inflate them
        fitted = TabularBridgeEstimator(3, 2, 2, 2, 3, seed=seed).fit(o0, obs, actions, rewards)
        if n == 10000:
            seconds.append(time.process_time() - start)
        bR, bD = fitted.bridges()
        p1 = empirical_p_o1(obs, 3)
        values[f"n{n}_seed{seed}"] = [plugin_value(bR, bD, pi[0], p1)[0] for pi in policies]
    cases.append({"name": "estimator", "call": "TabularBridgeEstimator(3, 2, 2, 2, 3, seed=seed).fit(o0, O, A, R); "
                  "plugin_value(bR, bD, pi, empirical_p_o1(O, 3)) for the 8 deterministic memoryless policies",
                  "inputs": {"generator": recipe["generator"], "runs": [list(r) for r in ESTIMATOR_RUNS]},
                  "values": {"policy_values": values, "true_values": truth}, "tolerance": 0.25,
                  "official_seconds": float(np.median(seconds))})
    write_fixture("confounded-pomdp", REPOSITORY, commit_of(path), cases, third_party=True,
                  notes="The paper has no code; this is the third-party study's estimator. The local copy was "
                        "rebuilt from the code index (two files, code only), commit in COMMIT. The official stage "
                        "II draws one index per point; with every index once and lambda2 / |Y| it is our closed "
                        "form, so the default third-party ridge is |Y| times ours in the integrated form. "
                        "official_seconds: the official fit at N = 10000 (its default auto mode: the dual), process "
                        "CPU seconds with one BLAS thread, median of 3 seeds.")


if __name__ == "__main__":
    with threadpool_limits(1):  # one BLAS thread, as the benchmark times ours
        main()
