"""Optimal Batched Linear Bandits (E4), Ren, Jin & Xu, ICML 2024: E4 beside the batched and sequential baselines."""

from __future__ import annotations

import numpy as np

from icml24.bandits import (
    E4,
    EndOfOptimism,
    LinTS,
    LinUCB,
    PhasedElimination,
    RarelySwitchingOFUL,
    end_of_optimism_instance,
    random_instance,
    run_batched,
)
from icml24.core import Claim, Paper, experiment

PAPER = Paper(
    slug="e4",
    title="Optimal Batched Linear Bandits",
    authors="Xuanfei Ren, Tianyuan Jin, Pan Xu",
    venue="ICML 2024",
    code="https://github.com/panxulab/optimal-batched-linear-bandits",
    summary=(
        "E4 (Explore, Estimate, Eliminate, Exploit) explores on a D-optimal design, solves the optimal allocation "
        "of the regret lower bound, pulls it for ~alpha log T rounds, and commits after a Chernoff stopping test "
        "(3 batches), or else falls back to phased elimination (O(log log T) batches). We run E4, PhaElimD, "
        "rs-OFUL and EndOA (and sequential LinUCB / LinTS) on the paper's End of Optimism and random instances, "
        "each policy in batches whose rewards are drawn in one array operation, and check regret and batch counts."
    ),
    deviations=[
        "Allocation solved exactly (scipy/numpy saddle-point solver, best-arm weight taken to its infinite limit) "
        "instead of cvxpy/SCS at eps=1e-2: SCS returns infeasible allocations (objective 2.5 vs optimum 8 on "
        "End of Optimism d=2) that under-explore, so our E4 pays more in batch 2 than the official code.",
        "A batch that overshoots the horizon is cut in proportion (runner truncation='proportional'). The official "
        "loop pulls arm 0 first, and arm 0 is the optimal arm in every paper instance: when E4's Chernoff test "
        "fails, batch 3 ((log T)^11 >> T pulls) then exploits by accident. truncation='in_order' restores it.",
        "Frank-Wolfe design uses away steps and stops at the Kiefer-Wolfowitz bound g <= d(1+1e-4); the official "
        "code stops when g changes by < 1e-4 and keeps tiny masses (one pull each) on every arm.",
        "rs-OFUL and EndOA's recovery use the exact V^{-1}; the official code adds 1e-5 I whenever det V^{-1} < 1e-12 "
        "(always for d=20), which inflates every exploration bonus.",
        "Quick setting: fewer seeds (5 on End of Optimism, 3 on random instances) than the paper's 10; sequential "
        "LinUCB/LinTS only where T <= sequential_max_horizon.",
    ],
)

_POLICIES = {
    "e4": E4,
    "phaelimd": PhasedElimination,
    "rs-oful": RarelySwitchingOFUL,
    "endoa": EndOfOptimism,
    "linucb": LinUCB,
    "lints": LinTS,
}
_SEQUENTIAL = {"linucb", "lints"}
_BATCHED_BASELINES = ("phaelimd", "rs-oful")


def _names(algorithms: str) -> list[str]:
    names = [name.strip().lower() for name in algorithms.split(",") if name.strip()]
    unknown = sorted(set(names) - set(_POLICIES))
    if unknown or "e4" not in names:
        raise ValueError(f"algorithms must list e4 and any of {', '.join(_POLICIES)}; unknown: {unknown}")
    return names


def _run_instance(ctx, tag: str, bandit, horizon: int, seeds: int, names: list[str], truncation: str,
                  sequential_max_horizon: int, figure_title: str, instance_index: int) -> dict[str, float]:
    """All algorithms on one instance, ``seeds`` runs each; metrics are prefixed by ``tag``."""
    import matplotlib.pyplot as plt

    metrics: dict[str, float] = {}
    grid = np.unique(np.linspace(0, horizon - 1, 200).astype(int))
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in ctx.progress(names, description=f"e4 {tag}"):
        if name in _SEQUENTIAL and horizon > sequential_max_horizon:
            continue
        runs = [run_batched(_POLICIES[name](), bandit, horizon, np.random.SeedSequence([ctx.seed, instance_index, i]),
                            truncation=truncation) for i in range(seeds)]
        regrets = np.array([run.final_regret for run in runs])
        batches = np.array([run.num_batches for run in runs], dtype=float)
        key = f"{tag}_{name.replace('-', '_')}"
        metrics[f"{key}_regret"] = float(regrets.mean())
        metrics[f"{key}_regret_sd"] = float(regrets.std())
        metrics[f"{key}_batches"] = float(batches.mean())
        metrics[f"{key}_seconds"] = float(np.mean([run.seconds for run in runs]))
        if name == "e4":
            metrics[f"{key}_three_batch_frac"] = float(np.mean(batches == 3))
            metrics[f"{key}_chernoff_pass_frac"] = float(np.mean([run.info["chernoff_passed"] for run in runs]))
        curves = np.stack([run.regret[grid] for run in runs])
        mean = curves.mean(axis=0)
        ax.plot(grid + 1, mean, label=f"{name} ({batches.mean():.0f} batches)")
        ax.fill_between(grid + 1, mean - curves.std(axis=0), mean + curves.std(axis=0), alpha=0.15)
    baselines = [metrics[f"{tag}_{b.replace('-', '_')}_regret"] for b in ("phaelimd", "rs-oful", "endoa")
                 if f"{tag}_{b.replace('-', '_')}_regret" in metrics]
    if baselines:
        metrics[f"{tag}_best_baseline_regret"] = float(min(baselines))
    batched = [metrics[f"{tag}_{b.replace('-', '_')}_regret"] for b in _BATCHED_BASELINES
               if f"{tag}_{b.replace('-', '_')}_regret" in metrics]
    if batched:
        metrics[f"{tag}_best_batched_baseline_regret"] = float(min(batched))
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    ax.set_title(figure_title)
    ax.legend(fontsize=8)
    ctx.figure(f"regret_{tag}", fig)
    return metrics


def _parse(spec: str, fields: int, what: str) -> list[list[str]]:
    items = [item.split(":") for item in spec.split(",") if item.strip()]
    if not items or any(len(item) != fields for item in items):
        raise ValueError(f"{what} must be a comma list of {fields} ':'-separated fields, got {spec!r}")
    return items


@experiment(
    PAPER,
    quick={"instances": "2:0.01:10000,2:0.2:10000,3:0.01:50000", "seeds": 5, "sequential_max_horizon": 10_000},
    full={"instances": "2:0.01:10000,2:0.2:10000,3:0.01:50000,3:0.2:50000,5:0.01:100000,5:0.2:100000",
          "seeds": 10, "sequential_max_horizon": 100_000},
)
def end_of_optimism_regret(ctx, instances: str = "2:0.01:10000", seeds: int = 5,
                           algorithms: str = "e4,phaelimd,rs-oful,endoa,linucb,lints",
                           truncation: str = "proportional", sequential_max_horizon: int = 10_000) -> dict[str, float]:
    """End of Optimism instances (d:eps:T): regret, batches and wall time of E4 and the baselines."""
    names = _names(algorithms)
    metrics: dict[str, float] = {}
    three, passes = [], []
    for index, (dim, eps, horizon) in enumerate(_parse(instances, 3, "instances")):
        tag = f"eoo_d{int(dim)}_eps{str(float(eps)).replace('.', 'p')}"
        bandit = end_of_optimism_instance(int(dim), float(eps))
        out = _run_instance(ctx, tag, bandit, int(horizon), seeds, names, truncation, sequential_max_horizon,
                            f"End of Optimism d={dim}, eps={eps}, T={horizon}", index)
        metrics.update(out)
        three.append(out[f"{tag}_e4_three_batch_frac"])
        passes.append(out[f"{tag}_e4_chernoff_pass_frac"])
    metrics["e4_three_batch_frac"] = float(np.mean(three))
    metrics["e4_chernoff_pass_frac"] = float(np.mean(passes))
    return metrics


@experiment(
    PAPER,
    quick={"instances": "3:2,9:5,50:20", "horizon": 50_000, "seeds": 3, "algorithms": "e4,phaelimd,rs-oful,endoa"},
    full={"instances": "3:2,5:3,9:5,50:20", "horizon": 50_000, "seeds": 10},
)
def random_regret(ctx, instances: str = "50:20", horizon: int = 50_000, seeds: int = 3,
                  algorithms: str = "e4,phaelimd,rs-oful,endoa,linucb,lints", instance_seed: int = 1,
                  truncation: str = "proportional", sequential_max_horizon: int = 100_000) -> dict[str, float]:
    """Random instances (K:d; theta = e1, arm 0 = theta, others U[0,1]^d as np.random.seed(1) draws them)."""
    names = _names(algorithms)
    metrics: dict[str, float] = {}
    for index, (num_arms, dim) in enumerate(_parse(instances, 2, "instances")):
        tag = f"random_k{int(num_arms)}_d{int(dim)}"
        bandit = random_instance(int(num_arms), int(dim), np.random.RandomState(instance_seed))
        metrics.update(_run_instance(ctx, tag, bandit, horizon, seeds, names, truncation, sequential_max_horizon,
                                     f"Random K={num_arms}, d={dim}, T={horizon}", 100 + index))
    return metrics


CLAIMS = [
    Claim(
        "On End of Optimism d=2, eps=0.01, T=1e4, E4's regret is at most 0.3x the best of PhaElimD, rs-OFUL, EndOA",
        experiment=end_of_optimism_regret,
        check=lambda m: m["eoo_d2_eps0p01_e4_regret"] <= 0.3 * m["eoo_d2_eps0p01_best_baseline_regret"],
        paper="Fig. (End of Optimism d=2, eps=0.01): E4 ~155, EndOA ~850, PhaElimD ~1050, rs-OFUL ~1100",
    ),
    Claim(
        "E4 ends with exactly 3 batches in at least 90% of runs on the End of Optimism instances",
        experiment=end_of_optimism_regret,
        check=lambda m: m["e4_three_batch_frac"] >= 0.9,
        paper="batch plots: E4 uses 3 batches; PhaElimD 3-4, rs-OFUL ~100, EndOA/IDS ~T",
    ),
    Claim(
        "On random (K=50, d=20), T=5e4, E4's regret is below every batched baseline's (PhaElimD, rs-OFUL)",
        experiment=random_regret,
        check=lambda m: m["random_k50_d20_e4_regret"] < m["random_k50_d20_best_batched_baseline_regret"],
        paper="Fig. (random K=50, d=20): E4 ~1.5k, EndOA ~9.7k, PhaElimD ~16.4k, rs-OFUL >17.5k",
    ),
]
