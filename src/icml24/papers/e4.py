"""Optimal Batched Linear Bandits (E4), Ren, Jin & Xu, ICML 2024: E4 beside the batched and sequential baselines."""

from __future__ import annotations

import math

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
        "The allocation (Algorithm 1, step 2) is solved exactly by a numpy saddle-point solver instead of cvxpy/SCS "
        "at eps=1e-2, whose allocations are infeasible and under-explore.",
        "A batch that overshoots the horizon is cut in proportion (truncation='proportional'), not in arm order as "
        "the official loop does (truncation='in_order' restores it).",
        "Frank-Wolfe designs use away steps and stop at the Kiefer-Wolfowitz bound g <= d(1 + 1e-4).",
        "rs-OFUL and EndOA's recovery use the exact V^{-1}, without the official code's 1e-5 I fudge.",
        "The quick setting runs fewer seeds (5 on End of Optimism, 3 on random instances) than the paper's 10, and "
        "sequential LinUCB/LinTS only where T <= sequential_max_horizon.",
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
_BASELINES = ("phaelimd", "rs-oful", "endoa")
_BATCHED_BASELINES = ("phaelimd", "rs-oful")


def _key(name: str) -> str:
    return name.replace("-", "_")


def _algorithms(algorithms: list[str]) -> list[str]:
    names = [name.strip().lower() for name in algorithms]
    unknown = sorted(set(names) - set(_POLICIES))
    if unknown or "e4" not in names:
        raise ValueError(f"algorithms must list e4 and any of {', '.join(_POLICIES)}; unknown: {unknown}")
    return names


def _fields(spec: str, kinds: tuple[type, ...], form: str, example: str) -> tuple:
    """One ``instances`` item, ``'a:b:c'``, converted field by field, or a ValueError that shows the form."""
    parts = spec.split(":")
    values = []
    try:
        if len(parts) != len(kinds):
            raise ValueError
        for kind, part in zip(kinds, parts):
            value = float(part)  # ints may be written 1e4
            if kind is int and not value.is_integer():
                raise ValueError
            values.append(kind(value))
    except ValueError:
        raise ValueError(f"instances item {spec!r} must be {form}, e.g. {example}") from None
    return tuple(values)


def _run_instance(ctx, tag: str, bandit, horizon: int, names: list[str], truncation: str,
                  sequential_max_horizon: int, figure_title: str) -> dict[str, float]:
    """One run of every algorithm on one instance; metrics are prefixed by ``tag``."""
    import matplotlib.pyplot as plt

    seed = ctx.child_seed(tag, horizon)  # common random numbers: every algorithm sees the same reward stream
    metrics: dict[str, float] = {}
    seconds: dict[str, float] = {}  # wall times vary run to run: an artifact, not a metric
    grid = np.unique(np.linspace(0, horizon - 1, 200).astype(int))
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in ctx.progress(names, description=f"e4 {tag}"):
        if name in _SEQUENTIAL and horizon > sequential_max_horizon:
            continue
        run = run_batched(_POLICIES[name](), bandit, horizon, seed, truncation=truncation)
        key = f"{tag}_{_key(name)}"
        metrics[f"{key}_regret"] = run.final_regret
        metrics[f"{key}_batches"] = float(run.num_batches)
        seconds[name] = run.seconds
        if name == "e4":  # 0/1 per run: their mean over seeds is the fraction of runs
            metrics[f"{key}_three_batch_frac"] = float(run.num_batches == 3)
            metrics[f"{key}_chernoff_pass_frac"] = float(run.info["chernoff_passed"])
        ax.plot(grid + 1, run.regret[grid], label=f"{name} ({run.num_batches} batches)")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    ax.set_title(f"{figure_title} (seed {ctx.seed})")
    ax.legend(fontsize=8)
    ctx.figure(f"regret_{tag}", fig)
    ctx.artifact(f"seconds_{tag}", seconds)
    return metrics


def _best_baselines(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Per instance, the best baseline of the MEAN regrets over seeds (not the mean of per-seed minima)."""
    keys = set().union(*per_seed)
    summary: dict[str, float] = {}
    for group, members in (("best_baseline", _BASELINES), ("best_batched_baseline", _BATCHED_BASELINES)):
        for member in members:
            suffix = f"_{_key(member)}_regret"
            for key in sorted(k for k in keys if k.endswith(suffix)):
                mean = float(np.mean([m[key] for m in per_seed if key in m]))
                name = f"{key[:-len(suffix)]}_{group}_regret"
                summary[name] = min(summary.get(name, math.inf), mean)
    return summary


@experiment(
    PAPER,
    quick={"instances": ["2:0.01:10000", "2:0.2:10000", "3:0.01:50000"], "sequential_max_horizon": 10_000,
           "seeds": 5},
    full={"instances": ["2:0.01:10000", "2:0.2:10000", "3:0.01:50000", "3:0.2:50000", "5:0.01:100000",
                        "5:0.2:100000"], "sequential_max_horizon": 100_000, "seeds": 10},
    smoke={"instances": ["2:0.01:2000"], "algorithms": ["e4", "phaelimd", "rs-oful", "endoa"],
           "sequential_max_horizon": 500},
    threads=1,
    summarize=_best_baselines,
)
def end_of_optimism_regret(ctx, instances: list[str] = ("2:0.01:10000",),
                           algorithms: list[str] = ("e4", "phaelimd", "rs-oful", "endoa", "linucb", "lints"),
                           truncation: str = "proportional", sequential_max_horizon: int = 10_000) -> dict[str, float]:
    """End of Optimism instances (items d:eps:T): one run per seed of E4 and the baselines; regret, batches, time.

    Measured (quick, 5 seeds): on d=2, eps=0.01 E4 317 against the best baseline 1141 (the old internal loop: 282
    against 1063); 3 batches in every run. Wall times per algorithm are written to the artifact seconds_<tag>.json.
    Our E4 pays more in batch 2 than the official code because the exact allocation is feasible: SCS at eps=1e-2
    returns an objective of 2.5 against the optimum 8 on this instance, an allocation that under-explores.
    """
    names = _algorithms(algorithms)
    metrics: dict[str, float] = {}
    three, passes = [], []
    for spec in instances:
        dim, eps, horizon = _fields(spec, (int, float, int), "d:eps:T", "2:0.01:10000")
        tag = f"eoo_d{dim}_eps{str(eps).replace('.', 'p')}"
        out = _run_instance(ctx, tag, end_of_optimism_instance(dim, eps), horizon, names, truncation,
                            sequential_max_horizon, f"End of Optimism d={dim}, eps={eps}, T={horizon}")
        metrics.update(out)
        three.append(out[f"{tag}_e4_three_batch_frac"])
        passes.append(out[f"{tag}_e4_chernoff_pass_frac"])
    metrics["e4_three_batch_frac"] = float(np.mean(three))  # over instances; the runner's mean over seeds
    metrics["e4_chernoff_pass_frac"] = float(np.mean(passes))  # makes it the fraction of all runs
    return metrics


@experiment(
    PAPER,
    quick={"instances": ["3:2", "9:5", "50:20"], "horizon": 50_000,
           "algorithms": ["e4", "phaelimd", "rs-oful", "endoa"], "seeds": 3},
    full={"instances": ["3:2", "5:3", "9:5", "50:20"], "horizon": 50_000, "seeds": 10},
    smoke={"instances": ["50:20"], "horizon": 1000, "algorithms": ["e4", "phaelimd", "rs-oful"]},
    threads=1,
    summarize=_best_baselines,
)
def random_regret(ctx, instances: list[str] = ("50:20",), horizon: int = 50_000,
                  algorithms: list[str] = ("e4", "phaelimd", "rs-oful", "endoa", "linucb", "lints"),
                  instance_seed: int = 1, truncation: str = "proportional",
                  sequential_max_horizon: int = 100_000) -> dict[str, float]:
    """Random instances (items K:d; theta = e1, arm 0 = theta, others U[0,1]^d as np.random.seed(1) draws them).

    The instance is the official one on every seed (``instance_seed``); the seed drives rewards and policies.
    Measured (quick, 3 seeds): on (50, 20) E4 24.3k against PhaElimD 17.1k (the old internal loop: 24.5k against
    16.7k). E4's stopping test fails there and its third batch ((log T)^11 >> T pulls) spends the rest of the
    horizon on a D-optimal design. The official code (2.6k) is lucky: its loop pulls arms in index order and arm 0
    is the optimal arm, so the cut third batch exploits by accident (truncation='in_order' reproduces it).
    """
    names = _algorithms(algorithms)
    metrics: dict[str, float] = {}
    for spec in instances:
        num_arms, dim = _fields(spec, (int, int), "K:d", "50:20")
        tag = f"random_k{num_arms}_d{dim}"
        bandit = random_instance(num_arms, dim, np.random.RandomState(instance_seed))
        metrics.update(_run_instance(ctx, tag, bandit, horizon, names, truncation, sequential_max_horizon,
                                     f"Random K={num_arms}, d={dim}, T={horizon}"))
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
