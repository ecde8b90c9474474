"""Optimal Batched Linear Bandits (E4), Ren, Jin & Xu, ICML 2024: E4 beside the batched and sequential baselines."""

from __future__ import annotations

import math
import re

import numpy as np

from icml24.bandits import (
    E4,
    EndOfOptimism,
    LinearBandit,
    LinTS,
    LinUCB,
    PhasedElimination,
    RarelySwitchingOFUL,
    RoundRobin,
    end_of_optimism_instance,
    random_instance,
    run_batched,
)
from icml24.core import Claim, Null, Paper, experiment

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
        "The D-optimal design uses Frank-Wolfe with away steps stopped at the Kiefer-Wolfowitz bound; the official "
        "plain Frank-Wolfe (stopped when g moves by < 1e-4) leaves 2-3 pulls on every arm off the design's support "
        "where ours gives 0, and the support counts differ by up to 3 of about 100 (parity fixture "
        "tests/parity/e4.json).",
        "The allocation (Algorithm 1, step 2) is solved exactly by a numpy saddle-point solver instead of cvxpy/SCS "
        "at eps=1e-2, whose allocations are infeasible and under-explore.",
        "A batch that overshoots the horizon is cut in proportion (truncation='proportional'), not in arm order as "
        "the official loop does (truncation='in_order' restores it).",
        "E4's gamma defaults to 1 (T_3 = (log T)^2 < T; the asymptotic analysis needs only gamma > 0) instead of the "
        "official 10, whose batch 3 ((log T)^11 pulls) is longer than any horizon, so the elimination phase never "
        "ran; the official setting stays available as algorithm 'e4-gamma10'.",
        "Random instances are run under two protocols: the official arm order with in-order truncation (what the "
        "paper's figure measured) and the arms shuffled per seed (what a user gets); claims read the shuffled one.",
        "Frank-Wolfe designs use away steps and stop at the Kiefer-Wolfowitz bound g <= d(1 + 1e-4).",
        "rs-OFUL and EndOA's recovery use the exact V^{-1}, without the official code's 1e-5 I fudge.",
        "The quick setting runs fewer seeds (5 on End of Optimism, 3 on random instances) than the paper's 10, and "
        "sequential LinUCB/LinTS only where T <= sequential_max_horizon.",
    ],
)

_POLICIES = {
    "e4": E4,
    "e4-gamma10": lambda: E4(gamma=10.0),  # the official code's gamma: batch 3 = (log T)^11 pulls
    "phaelimd": PhasedElimination,
    "rs-oful": RarelySwitchingOFUL,
    "endoa": EndOfOptimism,
    "linucb": LinUCB,
    "lints": LinTS,
    "round-robin": RoundRobin,  # non-adaptive: every arm equally often (a null, not a baseline)
}
_SEQUENTIAL = {"linucb", "lints"}
_BASELINES = ("phaelimd", "rs-oful", "endoa")
_BATCHED_BASELINES = ("phaelimd", "rs-oful")


def _key(name: str) -> str:
    return name.replace("-", "_")


# What the claims say E4 beats, run in E4's slot (its numbers are read as e4_*): the batched baseline the paper
# compares with first, and for the log T claims a non-adaptive policy whose regret grows linearly in T.
PHAELIMD_IN_E4_SLOT = Null("PhaElimD (official constants) in E4's slot", {"e4_slot": "phaelimd"})
ROUND_ROBIN_IN_E4_SLOT = Null("uniform round-robin (non-adaptive, one batch) in E4's slot",
                              {"e4_slot": "round-robin"})


def _slot(e4_slot: str) -> str:
    if e4_slot not in _POLICIES:
        raise ValueError(f"e4_slot must be one of {', '.join(_POLICIES)}, got {e4_slot!r}")
    return e4_slot


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
                  sequential_max_horizon: int, figure_title: str, e4_slot: str = "e4") -> dict[str, float]:
    """One run of every algorithm on one instance; metrics are prefixed by ``tag``; ``e4_slot`` runs as e4."""
    import matplotlib.pyplot as plt

    seed = ctx.child_seed(tag, horizon)  # common random numbers: every algorithm sees the same reward stream
    metrics: dict[str, float] = {}
    seconds: dict[str, float] = {}  # wall times vary run to run: an artifact, not a metric
    grid = np.unique(np.linspace(0, horizon - 1, 200).astype(int))
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in ctx.progress(names, description=f"e4 {tag}"):
        if name in _SEQUENTIAL and horizon > sequential_max_horizon:
            continue
        policy = e4_slot if name == "e4" else name
        run = run_batched(_POLICIES[policy](), bandit, horizon, seed, truncation=truncation)
        key = f"{tag}_{_key(name)}"
        metrics[f"{key}_regret"] = run.final_regret
        metrics[f"{key}_batches"] = float(run.num_batches)
        seconds[name] = run.seconds
        if name == "e4":  # 0/1 per run: their mean over seeds is the fraction of runs
            metrics[f"{key}_three_batch_frac"] = float(run.num_batches == 3)
            metrics[f"{key}_chernoff_pass_frac"] = float(run.info.get("chernoff_passed", False))  # a null: none
        label = name if policy == name else f"{policy} in e4's slot"
        ax.plot(grid + 1, run.regret[grid], label=f"{label} ({run.num_batches} batches)")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    ax.set_title(f"{figure_title} (seed {ctx.seed})")
    ax.legend(fontsize=8)
    ctx.figure(f"regret_{tag}", fig)
    ctx.artifact(f"seconds_{tag}", seconds)
    return metrics


def _best_baselines(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Per instance, the best baseline of the MEAN regrets over seeds (not the mean of per-seed minima), the
    fewest MEAN batches of a batched baseline, and over instances the largest ratio of E4's mean batches to it."""
    keys = set().union(*per_seed)
    summary: dict[str, float] = {}
    for group, members, metric in (("best_baseline", _BASELINES, "regret"),
                                   ("best_batched_baseline", _BATCHED_BASELINES, "regret"),
                                   ("fewest_batched_baseline", _BATCHED_BASELINES, "batches")):
        for member in members:
            suffix = f"_{_key(member)}_{metric}"
            for key in sorted(k for k in keys if k.endswith(suffix)):
                mean = float(np.mean([m[key] for m in per_seed if key in m]))
                name = f"{key[:-len(suffix)]}_{group}_{metric}"
                summary[name] = min(summary.get(name, math.inf), mean)
    suffix = "_fewest_batched_baseline_batches"
    ratios = [float(np.mean([m[f"{name.removesuffix(suffix)}_e4_batches"] for m in per_seed])) / fewest
              for name, fewest in summary.items() if name.endswith(suffix)]
    if ratios:
        summary["e4_batches_over_fewest_batched_baseline"] = max(ratios)
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
    null=PHAELIMD_IN_E4_SLOT,
)
def end_of_optimism_regret(ctx, instances: list[str] = ("2:0.01:10000",),
                           algorithms: list[str] = ("e4", "phaelimd", "rs-oful", "endoa", "linucb", "lints"),
                           truncation: str = "proportional", sequential_max_horizon: int = 10_000,
                           e4_slot: str = "e4") -> dict[str, float]:
    """End of Optimism instances (items d:eps:T): one run per seed of E4 and the baselines; regret, batches, time.

    Measured before gamma's default moved to 1 (quick, 5 seeds): on d=2, eps=0.01 E4 317 against the best baseline
    1141; 3 batches in every run. With gamma = 1 (run_batched seeds 0-4): 186 against 291 for gamma = 10. Wall
    times per algorithm are written to the artifact seconds_<tag>.json. Our E4 pays more in batch 2 than the
    official code because our allocation is solved exactly (objective 8.00 on d=2); SCS at eps=1e-2 returns 2.52
    with a constraint violated 789x, an allocation that under-explores (official E4 158 against our 267 with
    gamma = 10, 20 seeds). We do not copy the infeasible answer.

    ``e4_slot`` is the policy run in E4's slot (its numbers are the e4_* metrics): "e4" (the method) or a null,
    e.g. "phaelimd" (what the claims say E4 beats; same reward streams as the phaelimd column).
    """
    names, e4_slot = _algorithms(algorithms), _slot(e4_slot)
    metrics: dict[str, float] = {}
    three, passes = [], []
    for spec in instances:
        dim, eps, horizon = _fields(spec, (int, float, int), "d:eps:T", "2:0.01:10000")
        tag = f"eoo_d{dim}_eps{str(eps).replace('.', 'p')}"
        out = _run_instance(ctx, tag, end_of_optimism_instance(dim, eps), horizon, names, truncation,
                            sequential_max_horizon, f"End of Optimism d={dim}, eps={eps}, T={horizon}", e4_slot)
        metrics.update(out)
        three.append(out[f"{tag}_e4_three_batch_frac"])
        passes.append(out[f"{tag}_e4_chernoff_pass_frac"])
    metrics["e4_three_batch_frac"] = float(np.mean(three))  # over instances; the runner's mean over seeds
    metrics["e4_chernoff_pass_frac"] = float(np.mean(passes))  # makes it the fraction of all runs
    return metrics


_PROTOCOLS = ("index_order", "random_order")


@experiment(
    PAPER,
    quick={"instances": ["3:2", "9:5", "50:20"], "horizon": 50_000,
           "algorithms": ["e4", "e4-gamma10", "phaelimd", "rs-oful", "endoa"], "seeds": 3},
    full={"instances": ["3:2", "5:3", "9:5", "50:20"], "horizon": 50_000,
          "algorithms": ["e4", "e4-gamma10", "phaelimd", "rs-oful", "endoa", "linucb", "lints"], "seeds": 10},
    smoke={"instances": ["50:20"], "horizon": 1000, "algorithms": ["e4", "e4-gamma10", "phaelimd", "endoa"]},
    threads=1,
    summarize=_best_baselines,
    null=PHAELIMD_IN_E4_SLOT,
)
def random_regret(ctx, instances: list[str] = ("50:20",), horizon: int = 50_000,
                  algorithms: list[str] = ("e4", "e4-gamma10", "phaelimd", "rs-oful", "endoa"),
                  protocols: list[str] = _PROTOCOLS, instance_seed: int = 1,
                  sequential_max_horizon: int = 100_000, e4_slot: str = "e4") -> dict[str, float]:
    """Random instances (items K:d; theta = e1, arm 0 = theta, others U[0,1]^d as np.random.seed(1) draws them).

    The instance is the official one on every seed (``instance_seed``); the seed drives rewards and policies.
    Two protocols, both cutting a batch that overshoots the horizon in arm order as the official loop does:
    ``index_order`` keeps the official arm order, in which arm 0 is the optimal arm, so a cut batch exploits by
    accident (what the paper's figure measured); ``random_order`` shuffles the arms per seed (what a user gets).
    Metrics are ``random_k<K>_d<d>_<protocol>_<algorithm>_regret``; ``e4-gamma10`` is E4 with the official
    gamma. Baselines at the official code's constants (PhaElimD, rs-OFUL, EndOA with c = 1). ``e4_slot``: the
    policy run in E4's slot, as in ``end_of_optimism_regret``.
    """
    names, e4_slot = _algorithms(algorithms), _slot(e4_slot)
    unknown = sorted(set(protocols) - set(_PROTOCOLS))
    if unknown or not protocols:
        raise ValueError(f"protocols must be a non-empty subset of {', '.join(_PROTOCOLS)}; unknown: {unknown}")
    metrics: dict[str, float] = {}
    for spec in instances:
        num_arms, dim = _fields(spec, (int, int), "K:d", "50:20")
        official = random_instance(num_arms, dim, np.random.RandomState(instance_seed))
        for protocol in protocols:
            bandit = official
            if protocol == "random_order":
                order = ctx.rng("arm_order", spec).permutation(num_arms)
                bandit = LinearBandit(official.arms[order], official.theta, official.noise_std)
            tag = f"random_k{num_arms}_d{dim}_{protocol}"
            metrics.update(_run_instance(ctx, tag, bandit, horizon, names, "in_order", sequential_max_horizon,
                                         f"Random K={num_arms}, d={dim}, T={horizon}, {protocol}", e4_slot))
    return metrics


def _horizon_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Growth of the MEAN regret / log T between the two largest horizons, per instance and algorithm."""
    keys = set().union(*per_seed)
    pattern = re.compile(r"(.+)_regret_per_logT_T(\d+)")
    groups: dict[str, list[int]] = {}
    for key in keys:
        if match := pattern.fullmatch(key):
            groups.setdefault(match.group(1), []).append(int(match.group(2)))
    summary = {}
    for prefix, horizons in groups.items():
        horizons = sorted(horizons)
        if len(horizons) < 2:
            continue
        means = [float(np.mean([m[f"{prefix}_regret_per_logT_T{h}"] for m in per_seed
                                if f"{prefix}_regret_per_logT_T{h}" in m])) for h in horizons[-2:]]
        summary[f"{prefix}_growth_last"] = means[1] / max(means[0], 1e-12)
    return summary


@experiment(
    PAPER,
    quick={"instances": ["eoo:2:0.01", "random:20:10"], "horizons": [10_000, 100_000, 1_000_000],
           "endoa_max_horizon": 100_000, "seeds": 3},
    full={"instances": ["eoo:2:0.01", "eoo:3:0.01", "random:20:10", "random:50:20"],
          "horizons": [10_000, 100_000, 1_000_000], "endoa_max_horizon": 1_000_000, "seeds": 10},
    smoke={"instances": ["eoo:2:0.01", "random:20:10"], "horizons": [2000, 20_000], "endoa_max_horizon": 2000},
    threads=1,
    summarize=_horizon_summary,
    null=ROUND_ROBIN_IN_E4_SLOT,
)
def regret_vs_horizon(ctx, instances: list[str] = ("eoo:2:0.01", "random:20:10"),
                      horizons: list[int] = (10_000, 100_000, 1_000_000),
                      algorithms: list[str] = ("e4", "e4-gamma10", "phaelimd", "endoa"),
                      endoa_max_horizon: int = 100_000,
                      instance_seed: int = 1, e4_slot: str = "e4") -> dict[str, float]:
    """Regret / log T against T (asymptotic optimality) and batches against log log T, E4 vs PhaElimD vs EndOA.

    Items ``eoo:d:eps`` (End of Optimism) or ``random:K:d`` (the official random instance, arms shuffled per
    seed). Every policy plays in batches whose rewards are drawn in one array operation, so T = 1e6 takes well
    under a second for E4 and PhaElimD; EndOA is sequential (checked in blocks) and runs to ``endoa_max_horizon``
    (about 30 us per pull). The summary gives ``<tag>_<alg>_growth_last``: the mean regret / log T at the
    largest T over the same at the one before; asymptotic optimality means it tends to 1. ``e4_slot``: the policy
    run in E4's slot (e4_* metrics), e.g. "round-robin", the non-adaptive null whose regret is linear in T.
    """
    import matplotlib.pyplot as plt

    names, e4_slot = _algorithms(algorithms), _slot(e4_slot)
    grid = sorted(int(h) for h in horizons)
    metrics: dict[str, float] = {}
    for spec in instances:
        kind, _, rest = spec.partition(":")
        if kind == "eoo":
            dim, eps = _fields(rest, (int, float), "eoo:d:eps", "eoo:2:0.01")
            bandit, tag = end_of_optimism_instance(dim, eps), f"eoo_d{dim}_eps{str(eps).replace('.', 'p')}"
        elif kind == "random":
            num_arms, dim = _fields(rest, (int, int), "random:K:d", "random:20:10")
            official = random_instance(num_arms, dim, np.random.RandomState(instance_seed))
            order = ctx.rng("arm_order", spec).permutation(num_arms)
            bandit = LinearBandit(official.arms[order], official.theta)
            tag = f"random_k{num_arms}_d{dim}"
        else:
            raise ValueError(f"instances item {spec!r} must be eoo:d:eps or random:K:d, e.g. eoo:2:0.01")
        fig, ax = plt.subplots(figsize=(5.5, 4))
        for name in names:
            done = [h for h in grid if name != "endoa" or h <= endoa_max_horizon]
            values = []
            for horizon in done:
                policy = _POLICIES[e4_slot if name == "e4" else name]()
                run = run_batched(policy, bandit, horizon, ctx.child_seed(tag, horizon))
                key = f"{tag}_{_key(name)}"
                metrics[f"{key}_regret_T{horizon}"] = run.final_regret
                metrics[f"{key}_regret_per_logT_T{horizon}"] = run.final_regret / np.log(horizon)
                metrics[f"{key}_batches_T{horizon}"] = float(run.num_batches)
                if name == "e4":  # the regime: does the stopping test pass (3 batches) or not (elimination)?
                    metrics[f"{key}_chernoff_pass_T{horizon}"] = float(run.info.get("chernoff_passed", False))
                values.append(run.final_regret / np.log(horizon))
            if done:
                ax.plot(done, values, marker="o", label=name if name != "e4" or e4_slot == "e4" else
                        f"{e4_slot} in e4's slot")
        ax.set_xscale("log")
        ax.set_xlabel("horizon T")
        ax.set_ylabel("regret / log T")
        ax.set_title(f"{tag} (seed {ctx.seed})")
        ax.legend(fontsize=8)
        ctx.figure(f"regret_per_logT_{tag}", fig)
    metrics["largest_T"] = float(grid[-1])
    metrics["batch_bound_largest_T"] = 4 + float(np.log2(np.log(grid[-1])))  # 3 + levels T_l <= T: O(log log T)
    return metrics


CLAIMS = [
    Claim(
        "On End of Optimism d=2, eps=0.01, T=1e4, E4's regret is at most 0.3x the best of PhaElimD, rs-OFUL, EndOA",
        experiment=end_of_optimism_regret,
        check=lambda m: m["eoo_d2_eps0p01_e4_regret"] <= 0.3 * m["eoo_d2_eps0p01_best_baseline_regret"],
        paper="Fig. (End of Optimism d=2, eps=0.01): E4 ~155, EndOA ~850, PhaElimD ~1050, rs-OFUL ~1100",
    ),
    Claim(
        "E4 ends with exactly 3 batches in at least 90% of runs on the End of Optimism instances, and with fewer "
        "batches on average than the batched baselines (PhaElimD, rs-OFUL) on every instance",
        experiment=end_of_optimism_regret,
        check=lambda m: m["e4_three_batch_frac"] >= 0.9 and m["e4_batches_over_fewest_batched_baseline"] < 1.0,
        paper="batch plots: E4 uses 3 batches; PhaElimD 3-4, rs-OFUL ~100, EndOA/IDS ~T; abstract: E4 beats the "
              "baselines in batch count",
    ),
    Claim(
        "On random (K=50, d=20), T=5e4, arms shuffled per seed, E4's regret is below every baseline's "
        "(PhaElimD, rs-OFUL, EndOA); the official index-order protocol is reported beside it",
        experiment=random_regret,
        check=lambda m: m["random_k50_d20_random_order_e4_regret"]
        < m["random_k50_d20_random_order_best_baseline_regret"],
        paper="Fig. (random K=50, d=20): E4 ~1.5k, EndOA ~9.7k, PhaElimD ~16.4k, rs-OFUL >17.5k",
    ),
    Claim(
        "On End of Optimism d=2, eps=0.01, E4's regret / log T grows by at most 1.25x from T=1e5 to 1e6 "
        "(asymptotic optimality) with at most 4 + log2 log T batches",
        experiment=regret_vs_horizon,
        check=lambda m: m["eoo_d2_eps0p01_e4_growth_last"] <= 1.25
        and m[f"eoo_d2_eps0p01_e4_batches_T{int(m['largest_T'])}"] <= m["batch_bound_largest_T"],
        paper="Theorem (asymptotic optimality with 3 batches as T -> inf; O(log log T) batches)",
    ),
    Claim(
        "On the random instance (K=20, d=10, arms shuffled), E4's regret / log T grows by at most 1.25x from "
        "T=1e5 to 1e6 with at most 4 + log2 log T batches, and E4's regret at the largest T is below PhaElimD's",
        experiment=regret_vs_horizon,
        check=lambda m: m["random_k20_d10_e4_growth_last"] <= 1.25
        and m[f"random_k20_d10_e4_batches_T{int(m['largest_T'])}"] <= m["batch_bound_largest_T"]
        and m[f"random_k20_d10_e4_regret_T{int(m['largest_T'])}"]
        < m[f"random_k20_d10_phaelimd_regret_T{int(m['largest_T'])}"],
        paper="Theorem (asymptotic optimality); issue 25: E4 307.7k vs PhaElimD 65.4k at T=1e6 with gamma=10",
    ),
]
