"""Optimal Batched Linear Bandits (E4), Ren, Jin & Xu, ICML 2024: E4 beside the batched and sequential baselines."""

from __future__ import annotations

import math

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
from icml24.core import Claim, Null, Paper, Regime, experiment, labelled, select

PAPER = Paper(
    slug="e4",
    title="Optimal Batched Linear Bandits",
    authors="Xuanfei Ren, Tianyuan Jin, Pan Xu",
    venue="ICML 2024",
    code="https://github.com/panxulab/optimal-batched-linear-bandits",
    summary=(
        "E4 (Explore, Estimate, Eliminate, Exploit) explores on a D-optimal design, pulls the optimal allocation of "
        "the regret lower bound ~alpha log T times, and commits after a Chernoff stopping test (3 batches), or else "
        "falls back to phased elimination. We run E4, PhaElimD, rs-OFUL and EndOA (and LinUCB / LinTS) on the "
        "paper's End of Optimism and random instances, in batches, and check regret, batches and the stopping test."
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
        "ran; the official setting stays available as algorithm 'e4-gamma10', and the 3-batch claim is judged "
        "with it because with gamma = 1 the batch-2 cap (log T)^2 keeps the stopping test from passing at any "
        "horizon we can run.",
        "The paper's second exploration rate (O(log T) batches) is implemented as our reading, T_l = 4^l d log(K T^2) "
        "so that eps_l = 2^{-l} (algorithm 'e4-instance'); the minimax rate T_l = T^{1 - 2^{-l}} is the official "
        "code's.",
        "Random instances are run under two protocols: the official arm order with in-order truncation (what the "
        "paper's figure measured) and the arms shuffled per seed (what a user gets); claims read the shuffled one.",
        "rs-OFUL and EndOA's recovery use the exact V^{-1}, without the official code's 1e-5 I fudge.",
        "The quick setting runs fewer seeds (5 on End of Optimism, 3 on random instances) than the paper's 10, and "
        "sequential LinUCB/LinTS only where T <= sequential_max_horizon.",
    ],
)

_POLICIES = {
    "e4": E4,  # the minimax rate T_l = T^{1 - 2^{-l}}, gamma = 1
    "e4-gamma10": lambda: E4(gamma=10.0),  # the official code's gamma: batch 3 = (log T)^11 pulls
    "e4-instance": lambda: E4(rate="instance"),  # the O(log T)-batch rate (our reading): T_l = 4^l d log(K T^2)
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

# What the claims say E4 beats, run in every E4 setting's slot: PhaElimD, and a policy linear in T (log T claims).
PHAELIMD_IN_E4_SLOT = Null("PhaElimD (official constants) in E4's slot", {"e4_slot": "phaelimd"})
ROUND_ROBIN_IN_E4_SLOT = Null("uniform round-robin (non-adaptive, one batch) in E4's slot",
                              {"e4_slot": "round-robin"})


def _policy(name: str, e4_slot: str):
    """A fresh policy for ``name``; every E4 setting (e4, e4-gamma10, e4-instance) runs ``e4_slot`` instead."""
    return _POLICIES[e4_slot if name.startswith("e4") and e4_slot != "e4" else name]()


def _algorithms(algorithms: list[str], e4_slot: str) -> tuple[list[str], str]:
    names = [name.strip().lower() for name in algorithms]
    unknown = sorted(set(names) - set(_POLICIES))
    if unknown or "e4" not in names:
        raise ValueError(f"algorithms must list e4 and any of {', '.join(_POLICIES)}; unknown: {unknown}")
    if e4_slot not in _POLICIES:
        raise ValueError(f"e4_slot must be one of {', '.join(_POLICIES)}, got {e4_slot!r}")
    return names, e4_slot


def _fields(spec: str, kinds: tuple[type, ...], form: str, example: str) -> tuple:
    """One ``instances`` item the user typed, ``'a:b:c'``, converted field by field (once, at the boundary), or a
    ValueError that shows the form. Metric keys are built with ``labelled`` and never parsed back."""
    try:
        values = [float(part) for part in spec.split(":")]  # ints may be written 1e4
        if len(values) != len(kinds) or any(k is int and not v.is_integer() for k, v in zip(kinds, values)):
            raise ValueError
    except ValueError:
        raise ValueError(f"instances item {spec!r} must be {form}, e.g. {example}") from None
    return tuple(kind(value) for kind, value in zip(kinds, values))


def _e4_record(metrics: dict[str, float], run, **labels) -> None:
    """The stopping test of one E4 run as labelled metrics (0/1 indicators average to fractions over seeds); a null
    in E4's slot has no statistic, threshold or cap."""
    info = {"chernoff_passed": False, "commit_batch": 0, **run.info, "three_batch": run.num_batches == 3}
    for name in ("three_batch", "chernoff_passed", "commit_batch", "chernoff_statistic", "chernoff_threshold",
                 "cap_binding_arms"):
        if name in info:
            metrics[labelled(name, **labels)] = float(info[name])


def _figure(ctx, name: str, title: str, xlabel: str, ylabel: str, lines: list, xlog: bool = False) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for x, y, label in lines:
        ax.plot(x, y, marker="o" if xlog else None, label=label)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title, xscale="log" if xlog else "linear")
    ax.legend(fontsize=8)
    ctx.figure(name, fig)


def _run_instance(ctx, labels: dict, bandit, horizon: int, names: list[str], truncation: str,
                  sequential_max_horizon: int, figure_title: str, e4_slot: str = "e4") -> dict[str, float]:
    """One run of every algorithm on one instance; metrics ``regret``, ``batches``, ... labelled ``labels``, ``alg``."""
    tag = "_".join(f"{k}{v}" for k, v in sorted(labels.items())).replace(".", "p")  # a file name, never read
    seed = ctx.child_seed(tag, horizon)  # common random numbers: every algorithm sees the same reward stream
    metrics: dict[str, float] = {}
    seconds: dict[str, float] = {}  # wall times vary run to run: an artifact, not a metric
    grid = np.unique(np.linspace(0, horizon - 1, 200).astype(int))
    lines = []
    for name in ctx.progress(names, description=f"e4 {tag}"):
        if name in _SEQUENTIAL and horizon > sequential_max_horizon:
            continue
        run = run_batched(_policy(name, e4_slot), bandit, horizon, seed, truncation=truncation)
        metrics[labelled("regret", **labels, alg=name)] = run.final_regret
        metrics[labelled("batches", **labels, alg=name)] = float(run.num_batches)
        seconds[name] = run.seconds
        if name.startswith("e4"):
            _e4_record(metrics, run, **labels, alg=name)
        label = name if not name.startswith("e4") or e4_slot == "e4" else f"{e4_slot} in {name}'s slot"
        lines.append((grid + 1, run.regret[grid], f"{label} ({run.num_batches} batches)"))
    _figure(ctx, f"regret_{tag}", f"{figure_title} (seed {ctx.seed})", "round t", "cumulative regret", lines)
    ctx.artifact(f"seconds_{tag}", seconds)
    return metrics


def _means(per_seed: list[dict[str, float]], name: str) -> dict[tuple, float]:
    """The mean over seeds of every member of the family ``name``, keyed by its labels (a sorted tuple)."""
    values: dict[tuple, list[float]] = {}
    for metrics in per_seed:
        for labels, value in select(metrics, name):
            values.setdefault(tuple(sorted(labels.items())), []).append(value)
    return {key: float(np.mean(v)) for key, v in values.items()}


def _without(key: tuple, *drop: str) -> dict:
    return {k: v for k, v in key if k not in drop}


def _best_baselines(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Per instance, the best baseline of the MEAN regrets over seeds (not the mean of per-seed minima), the
    fewest MEAN batches of a batched baseline, and over instances the largest ratio of E4's mean batches to it."""
    summary: dict[str, float] = {}
    for group, members, metric in (("best_baseline_regret", _BASELINES, "regret"),
                                   ("best_batched_baseline_regret", _BATCHED_BASELINES, "regret"),
                                   ("fewest_batched_baseline_batches", _BATCHED_BASELINES, "batches")):
        for key, mean in _means(per_seed, metric).items():
            if dict(key)["alg"] in members:
                name = labelled(group, **_without(key, "alg"))
                summary[name] = min(summary.get(name, math.inf), mean)
    fewest = {key: summary.get(labelled("fewest_batched_baseline_batches", **_without(key, "alg")))
              for key in _means(per_seed, "batches") if dict(key)["alg"] == "e4"}
    if ratios := [_means(per_seed, "batches")[key] / value for key, value in fewest.items() if value]:
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

    Metrics ``regret[T=..,alg=..,d=..,eps=..,instance=eoo]``, ``batches`` and E4's stopping record (``_e4_record``);
    wall times go to the artifact seconds_<tag>.json. d=2, eps=0.01, seeds 0-4: E4 186 (gamma = 1) against 291
    (gamma = 10). Our exact allocation (objective 8.00) pays more in batch 2 than the official SCS one (2.52, a
    constraint violated 789x: official E4 158 against our 267 with gamma = 10, 20 seeds); we do not copy it.
    ``e4_slot``: the policy run in every E4 setting's slot (same reward streams), e.g. the null "phaelimd".
    """
    names, e4_slot = _algorithms(algorithms, e4_slot)
    metrics: dict[str, float] = {}
    three = []
    for spec in instances:
        dim, eps, horizon = _fields(spec, (int, float, int), "d:eps:T", "2:0.01:10000")
        labels = {"instance": "eoo", "d": dim, "eps": eps, "T": horizon}
        out = _run_instance(ctx, labels, end_of_optimism_instance(dim, eps), horizon, names, truncation,
                            sequential_max_horizon, f"End of Optimism d={dim}, eps={eps}, T={horizon}", e4_slot)
        metrics.update(out)
        three.append(out[labelled("three_batch", **labels, alg="e4")])
    metrics["e4_three_batch_frac"] = float(np.mean(three))  # over instances; the mean over seeds: of all runs
    return metrics


_PROTOCOLS = ("index_order", "random_order")


def _random_bandit(ctx, spec: str, generator: str = "official", instance_seed: int = 1, shuffle: bool = True):
    """``(bandit, K, d)`` of a ``K:d`` item: the official instance (``np.random.seed(instance_seed)``, the same on
    every seed) or a fresh one per seed (``generator="per_seed"``), its arms shuffled per seed unless not."""
    num_arms, dim = _fields(spec, (int, int), "K:d", "20:10")
    if generator == "official":
        bandit = random_instance(num_arms, dim, np.random.RandomState(instance_seed))
    elif generator == "per_seed":
        bandit = random_instance(num_arms, dim, ctx.rng("instance", spec))
    else:
        raise ValueError(f"generator must be 'official' or 'per_seed', got {generator!r}")
    if shuffle:
        order = ctx.rng("arm_order", spec).permutation(num_arms)
        bandit = LinearBandit(bandit.arms[order], bandit.theta, bandit.noise_std)
    return bandit, num_arms, dim


def _largest(metrics, name: str, **fixed) -> dict:
    """Labels of the largest random instance (most K * d) under ``name``: claims read whatever the user ran."""
    found = [labels for labels, _ in select(metrics, name, instance="random", **fixed)]
    if not found:  # KeyError: an ``error`` verdict
        raise KeyError(labelled(name, instance="random", **fixed))
    return max(found, key=lambda labels: (labels["K"] * labels["d"], labels["K"]))


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
    """Random instances (items K:d; theta = e1, arm 0 = theta, others U[0,1]^d as np.random.seed(1) draws them),
    the official instance on every seed; the seed drives rewards, policies and the arm order. Batches that overshoot
    are cut in arm order as the official loop does: ``index_order`` keeps the official order (arm 0 is optimal, so
    a cut batch exploits by accident: what the paper's figure measured), ``random_order`` shuffles the arms per
    seed. Metrics ``regret[K=..,alg=..,d=..,instance=random,protocol=..]``; baselines at the official constants.
    """
    names, e4_slot = _algorithms(algorithms, e4_slot)
    unknown = sorted(set(protocols) - set(_PROTOCOLS))
    if unknown or not protocols:
        raise ValueError(f"protocols must be a non-empty subset of {', '.join(_PROTOCOLS)}; unknown: {unknown}")
    metrics: dict[str, float] = {}
    for spec in instances:
        for protocol in protocols:
            bandit, num_arms, dim = _random_bandit(ctx, spec, "official", instance_seed, protocol == "random_order")
            labels = {"instance": "random", "K": num_arms, "d": dim, "protocol": protocol}
            metrics.update(_run_instance(ctx, labels, bandit, horizon, names, "in_order", sequential_max_horizon,
                                         f"Random K={num_arms}, d={dim}, T={horizon}, {protocol}", e4_slot))
    return metrics


def _curves(per_seed: list[dict[str, float]], name: str) -> dict[tuple, dict[int, float]]:
    """``{labels but T: {T: mean over seeds}}`` of the family ``name``."""
    curves: dict[tuple, dict[int, float]] = {}
    for key, mean in _means(per_seed, name).items():
        curves.setdefault(tuple(sorted(_without(key, "T").items())), {})[int(dict(key)["T"])] = mean
    return curves


def _horizon_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Growth of the MEAN regret / log T between the two largest horizons, per instance and algorithm."""
    return {labelled("growth_last", **dict(key)): curve[sorted(curve)[-1]] / max(curve[sorted(curve)[-2]], 1e-12)
            for key, curve in _curves(per_seed, "regret_per_logT").items() if len(curve) >= 2}


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
                      algorithms: list[str] = ("e4", "e4-gamma10", "e4-instance", "phaelimd", "endoa"),
                      endoa_max_horizon: int = 100_000,
                      instance_seed: int = 1, e4_slot: str = "e4") -> dict[str, float]:
    """Regret / log T against T (asymptotic optimality) and batches, E4's settings vs PhaElimD vs EndOA, on items
    ``eoo:d:eps`` or ``random:K:d`` (the official instance, arms shuffled per seed). EndOA is sequential (about
    30 us per pull) and runs to ``endoa_max_horizon``. Metrics ``regret[T=..,alg=..,<instance>]``,
    ``regret_per_logT``, ``batches``, E4's stopping record; the summary's ``growth_last[alg=..,<instance>]`` is the
    mean regret / log T at the largest T over the one before (tends to 1 if asymptotically optimal).
    """
    names, e4_slot = _algorithms(algorithms, e4_slot)
    grid = sorted(int(h) for h in horizons)
    metrics: dict[str, float] = {}
    for spec in instances:
        kind, _, rest = spec.partition(":")
        if kind == "eoo":
            dim, eps = _fields(rest, (int, float), "eoo:d:eps", "eoo:2:0.01")
            bandit, labels = end_of_optimism_instance(dim, eps), {"instance": "eoo", "d": dim, "eps": eps}
        elif kind == "random":
            bandit, num_arms, dim = _random_bandit(ctx, rest, "official", instance_seed)
            labels = {"instance": "random", "K": num_arms, "d": dim}
        else:
            raise ValueError(f"instances item {spec!r} must be eoo:d:eps or random:K:d, e.g. eoo:2:0.01")
        tag = "_".join(f"{k}{v}" for k, v in sorted(labels.items())).replace(".", "p")  # a file name
        lines = []
        for name in names:
            done = [h for h in grid if name != "endoa" or h <= endoa_max_horizon]
            for horizon in done:
                run = run_batched(_policy(name, e4_slot), bandit, horizon, ctx.child_seed(tag, horizon))
                at = {**labels, "alg": name, "T": horizon}
                metrics[labelled("regret", **at)] = run.final_regret
                metrics[labelled("regret_per_logT", **at)] = run.final_regret / np.log(horizon)
                metrics[labelled("batches", **at)] = float(run.num_batches)
                if name.startswith("e4"):  # the regime: does the stopping test pass (3 batches) or not?
                    _e4_record(metrics, run, **at)
            slot = name if not name.startswith("e4") or e4_slot == "e4" else f"{e4_slot} in {name}'s slot"
            lines.append((done, [metrics[labelled("regret_per_logT", **labels, alg=name, T=h)] for h in done], slot))
        _figure(ctx, f"regret_per_logT_{tag}", f"{tag} (seed {ctx.seed})", "horizon T", "regret / log T", lines, True)
    metrics["largest_T"] = float(grid[-1])
    metrics["batch_bound_largest_T"] = 4 + float(np.log2(np.log(grid[-1])))  # 3 + levels T_l <= T: O(log log T)
    metrics["log2_largest_T"] = float(np.log2(grid[-1]))  # the O(log T) rate's batch bound
    return metrics


def _stopping_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Per instance and E4 setting, the smallest T of the grid at which the stopping test passed in at least half
    the runs (``first_pass_T``; 0: at no T of the grid)."""
    return {labelled("first_pass_T", **dict(key)): float(min([h for h, f in curve.items() if f >= 0.5], default=0))
            for key, curve in _curves(per_seed, "chernoff_passed").items()}


@experiment(
    PAPER,
    quick={"instances": ["20:10"], "horizons": [20_000, 100_000, 1_000_000, 10_000_000], "seeds": 5},
    full={"instances": ["20:10", "50:20"], "horizons": [20_000, 100_000, 1_000_000, 10_000_000], "seeds": 10},
    smoke={"instances": ["20:10"], "horizons": [2000, 20_000]},
    threads=1,
    summarize=_stopping_summary,
    null=PHAELIMD_IN_E4_SLOT,
)
def stopping_vs_horizon(ctx, instances: list[str] = ("20:10",),
                        horizons: list[int] = (20_000, 100_000, 1_000_000, 10_000_000),
                        algorithms: list[str] = ("e4", "e4-gamma10"),
                        generators: list[str] = ("official", "per_seed"), instance_seed: int = 1,
                        e4_slot: str = "e4") -> dict[str, float]:
    """When does E4's Chernoff stopping test pass? E4's settings alone on random instances (items K:d, arms
    shuffled per seed; ``generators`` "official": the np.random.seed(instance_seed) instance, "per_seed": a fresh
    one per seed) over a grid of T: the statistic, its threshold, pass, the committing batch, ``cap_binding_arms``.
    Seeds 100-104, K = 20, d = 10: with gamma = 1 the test failed in every run up to T = 1e7 (statistic 0-10
    against 23-31; the (log T)^2 cap binds on 6-14 arms); with gamma = 10 it first passed at T = 1e6 on the
    official instance (4 of 5) and by 1e7 on 1 of 5 per-seed instances (smallest gaps 0.004-0.175).
    """
    names, e4_slot = _algorithms(algorithms, e4_slot)
    metrics: dict[str, float] = {}
    for spec in instances:
        for generator in generators:
            bandit, num_arms, dim = _random_bandit(ctx, spec, generator, instance_seed)
            for horizon in sorted(int(h) for h in horizons):
                for name in names:
                    run = run_batched(_policy(name, e4_slot), bandit, horizon,
                                      ctx.child_seed(spec, generator, horizon))
                    at = dict(instance="random", K=num_arms, d=dim, generator=generator, alg=name, T=horizon)
                    metrics[labelled("regret", **at)] = run.final_regret
                    metrics[labelled("batches", **at)] = float(run.num_batches)
                    _e4_record(metrics, run, **at)
    metrics["largest_T"] = float(max(horizons))
    return metrics


def _random_e4_under_phaelimd(m, alg: str) -> bool:
    """On the largest random instance run, ``alg``'s regret at the largest T is below PhaElimD's."""
    at = {**_largest(m, "growth_last", alg=alg), "T": int(m["largest_T"])}
    return m[labelled("regret", **at)] < m[labelled("regret", **{**at, "alg": "phaelimd"})]


def _random_batches_within(m, alg: str, bound: str) -> bool:
    labels = _largest(m, "growth_last", alg=alg)
    return m[labelled("batches", **labels, T=int(m["largest_T"]))] <= m[bound]


def _random_e4_asymptotic(m) -> bool:
    return (m[labelled("growth_last", **_largest(m, "growth_last", alg="e4"))] <= 1.25
            and _random_batches_within(m, "e4", "batch_bound_largest_T") and _random_e4_under_phaelimd(m, "e4"))


def _random_beats_best_baseline(m) -> bool:
    labels = _largest(m, "best_baseline_regret", protocol="random_order")
    return m[labelled("regret", **labels, alg="e4")] < m[labelled("best_baseline_regret", **labels)]


def _official_gamma_commits(m) -> bool:
    labels = _largest(m, "chernoff_passed", alg="e4-gamma10", generator="official", T=int(m["largest_T"]))
    return m[labelled("chernoff_passed", **labels)] >= 0.9


EOO_D2 = {"instance": "eoo", "d": 2, "eps": 0.01}


def _eoo_d2(m) -> dict:
    """Labels of the End of Optimism d=2, eps=0.01 run at its largest T (1e4 at quick; any T the user ran)."""
    return max((labels for labels, _ in select(m, "best_baseline_regret", **EOO_D2)), key=lambda x: x["T"])
CLAIMS = [
    Claim(
        "On End of Optimism d=2, eps=0.01, T=1e4, E4's regret is at most 0.3x the best of PhaElimD, rs-OFUL, EndOA",
        experiment=end_of_optimism_regret,
        check=lambda m: m[labelled("regret", **_eoo_d2(m), alg="e4")] <= 0.3 * m[labelled("best_baseline_regret",
                                                                                          **_eoo_d2(m))],
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
        "On the largest random instance run (K=50, d=20 by default), T=5e4, arms shuffled per seed, E4's regret is "
        "below every baseline's (PhaElimD, rs-OFUL, EndOA); the official index-order protocol is reported beside it",
        experiment=random_regret,
        check=_random_beats_best_baseline,
        paper="Fig. (random K=50, d=20): E4 ~1.5k, EndOA ~9.7k, PhaElimD ~16.4k, rs-OFUL >17.5k",
    ),
    Claim(
        "On End of Optimism d=2, eps=0.01, E4's regret / log T grows by at most 1.25x from T=1e5 to 1e6 "
        "(asymptotic optimality) with at most 4 + log2 log T batches",
        experiment=regret_vs_horizon,
        check=lambda m: m[labelled("growth_last", **EOO_D2, alg="e4")] <= 1.25
        and m[labelled("batches", **EOO_D2, alg="e4", T=int(m["largest_T"]))] <= m["batch_bound_largest_T"],
        paper="Theorem (asymptotic optimality with 3 batches as T -> inf; O(log log T) batches)",
    ),
    Claim(
        "On the largest random instance run (K=20, d=10 by default, arms shuffled), E4's regret / log T grows by at "
        "most 1.25x between the two largest T (1e5, 1e6) with at most 4 + log2 log T batches, and E4's regret at "
        "the largest T is below PhaElimD's",
        experiment=regret_vs_horizon,
        check=_random_e4_asymptotic,
        paper="Theorem (asymptotic optimality); issue 25: E4 307.7k vs PhaElimD 65.4k at T=1e6 with gamma=10",
    ),
    Claim(
        "Minimax rate, 3 batches: with the official gamma = 10, E4's stopping test passes (it commits after batch 2, "
        "3 batches in all) in at least 90% of runs at the largest T (1e7) on the official random instance (the "
        "largest run: K=20, d=10 by default)",
        experiment=stopping_vs_horizon,
        check=_official_gamma_commits,
        paper="Theorem (asymptotically optimal regret with only 3 batches as T -> inf); the paper's experiments stop "
              "at T = 1e5",
    ),
    Claim(
        "O(log T)-batch rate (our reading, T_l = 4^l d log(K T^2)): on the largest random instance run (K=20, d=10 "
        "by default), E4 with it uses at most log2 T batches at the largest T (1e6) and its regret there is below "
        "PhaElimD's",
        experiment=regret_vs_horizon,
        check=lambda m: _random_batches_within(m, "e4-instance", "log2_largest_T")
        and _random_e4_under_phaelimd(m, "e4-instance"),
        paper="Theorem (instance-dependent regret with O(log T) batches, minimax and asymptotic optimality kept)",
        null=PHAELIMD_IN_E4_SLOT,
    ),
]

REGIMES = [
    Regime("The smallest T (of 2e4, 1e5, 1e6, 1e7) at which E4's stopping test passes in at least half the runs on "
           "random K=20, d=10 (0: at none), gamma = 1 and the official 10, official and per-seed instances",
           experiment=stopping_vs_horizon,
           metrics=[labelled("first_pass_T", instance="random", K=20, d=10, alg=alg, generator=generator)
                    for alg in ("e4", "e4-gamma10") for generator in ("official", "per_seed")],
           paper="Theorem: 3 batches as T -> inf; the paper's random experiments run T = 5e4"),
]
