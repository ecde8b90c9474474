"""lowrank-bandits experiments: policy evaluation, best policy identification, the size sweep, the sample
complexity and regret, each with its method slot (nulls and the oracle run in it on the same samples)."""

from __future__ import annotations

import numpy as np

from icml24.bandits import (
    IPS,
    RSBPI,
    RSPE,
    RSRMIN,
    SBPI,
    SIPS,
    ExploreSubspaceRefine,
    IPSGreedy,
    LinUCBOneHot,
    LowRankBandit,
    PairUCB,
)
from icml24.core import Null, experiment, labelled, select

from . import PAPER

# An error or regret below this is zero: values are O(1-1000), so one rounding moves them by ~1e-13; ratios and
# log-log slopes floor their inputs here (the oracle's errors are exactly 0), and a gain counts only beyond it.
RESOLUTION = 1e-12


def _loglog_slope(x, y) -> float:
    """Slope of log y against log x, y floored at RESOLUTION (an all-zero curve, the oracle's, has slope 0)."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.maximum(np.asarray(y, float), RESOLUTION)), 1)[0])


def _ratio(num: float, den: float) -> float:
    """num / den with den floored at RESOLUTION (the oracle's zero error gives a finite, huge ratio)."""
    return float(num / max(den, RESOLUTION))


def _mean(per_seed: list[dict[str, float]], key: str) -> float:
    return float(np.mean([m[key] for m in per_seed]))


def _grid(per_seed: list[dict[str, float]], name: str, label: str, **fixed) -> list[int]:
    """The sorted values of ``label`` over the labelled metrics ``name[...]`` of one run (``icml24.core.select``)."""
    return sorted({labels[label] for labels, _ in select(per_seed[0], name, **fixed)})


def _plot_curves(ctx, name: str, x, curves: dict[str, np.ndarray], xlabel: str, ylabel: str, logy: bool = True,
                 hline: float | None = None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for label, values in curves.items():
        ax.plot(x, values, marker="o", label=label)
    if hline is not None:
        ax.axhline(hline, color="k", linestyle="--", label="optimal value")
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"seed {ctx.seed}")
    ax.legend()
    ctx.figure(name, fig)


# ------------------------------------------------------------------------- what the claims say the method beats
# Each runs in the method's slot on the same samples and is reported under the method's name (rspe_*, rsbpi_*, ...).
# "oracle" (what a perfect method gives, the positive control): the true value of the target policy (PE), the
# optimal arm of every context (BPI), zero pseudo-regret (the optimal arm every round).
_PE_SLOT = {"rspe": lambda rank, tau: RSPE(rank, tau=tau), "ips": lambda rank, tau: IPS(),
            "sips": lambda rank, tau: SIPS(rank), "oracle": None}
IPS_IN_RSPE_SLOT = Null("IPS in RS-PE's slot", {"rspe_slot": "ips"})
_BPI_SLOT = ("rsbpi", "sbpi", "benchmark", "random", "oracle")  # random: a uniformly random arm per context
RANDOM_IN_RSBPI_SLOT = Null("a uniformly random policy in RS-BPI's slot", {"rsbpi_slot": "random"})
_RMIN_SLOT = ("rsrmin", "estr", "pairucb", "linucb", "oracle")
ESTR_IN_RSRMIN_SLOT = Null("the ESTR-style baseline (the strongest at quick) in RS-RMIN's slot",
                           {"rsrmin_slot": "estr"})


def _check_slot(name: str, value: str, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _pe_estimate(slot: str, rank: int, tau: float, data: tuple, target, truth: float) -> float:
    """The value of ``target`` that the estimator in the slot returns from ``data`` (the oracle: the true value)."""
    return truth if slot == "oracle" else _PE_SLOT[slot](rank, tau).fit(*data).evaluate(target)


_INSTANCES = ("official", "gaussian")  # the spiky official matrix; an incoherent Gaussian one (entries ~ N(0, scale^2))
_SIZE_INSTANCES = ("constant", "gaussian", "official")  # rank 1, m = n: all ones (the paper's); Gaussian; spiky


def _instance(ctx, instance: str, m: int, n: int, rank: int, *keys, scale: float = 1.0) -> LowRankBandit:
    """The reward matrix of one seed (``keys``: the repetition) on the stream ``instance`` (numbers of the default
    official instance unchanged); ``constant`` is the all-ones matrix of the size experiments (rank 1)."""
    if instance == "official":
        return LowRankBandit.official_instance(m, n, rank, random_state=ctx.rng("instance", *keys))
    if instance == "gaussian":
        return LowRankBandit.gaussian_instance(m, n, rank, random_state=ctx.rng("instance", *keys),
                                               scale=scale)
    if instance == "constant":
        return LowRankBandit.constant(m, n)
    raise ValueError(f"instance must be one of {', '.join(_SIZE_INSTANCES)}, got {instance!r}")


# ---------------------------------------------------------------------------------------------- experiments
_PE_METHODS = ("ips", "sips", "rspe", "rspe_official")
_QUANTILES = {"median": 0.5, "q10": 0.1, "q90": 0.9}


def _pe_errors(env, grid: list[int], pool: int, rank: int, tau: float, rng,
               rspe_slot: str = "rspe") -> dict[str, np.ndarray]:
    """PE errors of every method at each T of ``grid`` on one sample stream of ``max(grid[-1], pool)`` samples.

    ``rspe_official`` is the official script's protocol: subspaces from the first T samples, regression on all
    ``pool`` samples (a leak when T < pool). ``spike_missed`` is 1 where the first T samples never saw one of the
    matrix's two largest entries (the regime that makes errors heavy-tailed).
    """
    target = env.optimal_arms
    truth = env.value(target)
    behaviour = env.uniform_behaviour
    contexts, arms, rewards = env.collect(max(grid[-1], pool), behaviour, random_state=rng)
    matrix = np.abs(env.reward_matrix)
    spikes = np.argsort(matrix, axis=None)[-2:]
    pairs = contexts * matrix.shape[1] + arms
    out = {name: np.zeros(len(grid)) for name in (*_PE_METHODS, "spike_missed")}
    for k, horizon in enumerate(grid):  # prefixes of one stream, as in the official script
        data = (contexts[:horizon], arms[:horizon], rewards[:horizon], behaviour)
        out["ips"][k] = abs(IPS().fit(*data).evaluate(target) - truth)
        out["sips"][k] = abs(SIPS(rank).fit(*data).evaluate(target) - truth)
        out["rspe"][k] = abs(_pe_estimate(rspe_slot, rank, tau, data, target, truth) - truth)
        leaky = RSPE(rank, tau=tau, phase1_samples=horizon).fit(contexts, arms, rewards, behaviour)
        out["rspe_official"][k] = abs(leaky.evaluate(target) - truth)
        out["spike_missed"][k] = float(not np.all(np.isin(spikes, pairs[:horizon])))
    return out


@experiment(PAPER, quick={"seeds": 8}, full={"seeds": 50},
            smoke={"m": 12, "n": 10, "horizons": [500, 1000], "official_pool": 1000}, threads=1, null=IPS_IN_RSPE_SLOT)
def policy_evaluation(ctx, m: int = 50, n: int = 50, rank: int = 2, horizons: list[int] = (2000, 4000, 8000, 16000),
                      tau: float = 1e-4, official_pool: int = 20_000, rspe_slot: str = "rspe",
                      instance: str = "official") -> dict[str, float]:
    """PE error of IPS, SIPS and RS-PE (no split) for the optimal policy on the official instance, vs T.

    One seed draws one instance and one sample stream; each T uses its prefix, as the official script does.
    ``rspe_official`` runs the official script's protocol beside ours: its second phase sees all
    ``official_pool`` (20k) samples at every T. Errors are heavy-tailed (in about 10-15% of runs the samples miss
    one of the official matrix's two entries of ~600, or the phase-1 subspace fails), so the summary gives the
    mean (what the paper's figures plot: the official plotting code draws np.mean with a t-interval), the median
    and the 10/90% quantiles; ``spike_missed[T=<T>]`` is the fraction of seeds in that regime. Per-T errors are
    labelled ``<method>_error[T=<T>]``. ``rspe_slot`` is the
    estimator run as rspe: "rspe" (the method), a null, "ips" or "sips", on the same samples, or "oracle" (the
    true value). ``instance``: "official" (spiky, the paper's) or "gaussian" (incoherent, entries ~ N(0, 1)).
    """
    env = _instance(ctx, _check_slot("instance", instance, _INSTANCES), m, n, rank)
    grid = sorted(horizons)
    errors = _pe_errors(env, grid, official_pool, rank, tau, ctx.rng("samples"),
                        _check_slot("rspe_slot", rspe_slot, _PE_SLOT))
    metrics = {"snr": env.snr, "optimal_value": env.value(env.optimal_arms)}
    for k, horizon in enumerate(grid):
        for name in errors:
            key = labelled(f"{name}_error" if name != "spike_missed" else "spike_missed", T=horizon)
            metrics[key] = float(errors[name][k])
    _plot_curves(ctx, "pe_error_vs_T", grid, {"IPS": errors["ips"], "SIPS": errors["sips"], "RS-PE": errors["rspe"],
                                              "RS-PE, official protocol (leaks)": errors["rspe_official"]},
                 "samples T", "|v^ - v| (policy evaluation error)")
    return metrics


@policy_evaluation.summarizer
def _policy_evaluation_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Ratios of the MEAN (and median) errors over seeds at T >= 8k, slopes of the mean errors, the quantiles of
    every method's error at every T, and how much of RS-PE's small-T curve the official protocol's leak explains."""
    grid = _grid(per_seed, "rspe_error", "T")
    methods = [name for name in _PE_METHODS if labelled(f"{name}_error", T=grid[0]) in per_seed[0]]
    errors = {name: np.array([[m[labelled(f"{name}_error", T=h)] for h in grid] for m in per_seed])
              for name in methods}
    means = {name: errors[name].mean(axis=0) for name in methods}
    medians = {name: np.median(errors[name], axis=0) for name in methods}
    large = [k for k, horizon in enumerate(grid) if horizon >= 8000] or [len(grid) - 1]
    summary = {
        "min_ips_over_rspe_T8k_plus": min(_ratio(means["ips"][k], means["rspe"][k]) for k in large),
        # the mean is dominated by the rare runs whose samples never see a spike of M; the median shows the rest
        "median_ips_over_rspe_T8k_plus": min(_ratio(medians["ips"][k], medians["rspe"][k]) for k in large),
        "rspe_slope_vs_T": _loglog_slope(grid, means["rspe"]),
        "ips_slope_vs_T": _loglog_slope(grid, means["ips"]),
    }
    for name in methods:
        for k, horizon in enumerate(grid):
            for label, q in _QUANTILES.items():
                summary[labelled(f"{name}_error_{label}", T=horizon)] = float(np.quantile(errors[name][:, k], q))
    if "rspe_official" in methods:  # > 1: the leak flatters the official curve by this factor at the smallest T
        summary["official_leak_factor_smallest_T"] = _ratio(means["rspe"][0], means["rspe_official"][0])
        summary["official_leak_factor_smallest_T_median"] = _ratio(medians["rspe"][0], medians["rspe_official"][0])
    return summary


@experiment(PAPER, quick={"repetitions": 12, "seeds": 1}, full={"repetitions": 100, "seeds": 1},
            smoke={"m": 12, "n": 10, "horizons": [500, 1000], "repetitions": 2, "official_pool": 1000}, threads=1,
            null=IPS_IN_RSPE_SLOT)
def pe_error_distribution(ctx, m: int = 50, n: int = 50, rank: int = 2, horizons: list[int] = (2000, 8000),
                          repetitions: int = 12, tau: float = 1e-4, official_pool: int = 20_000,
                          rspe_slot: str = "rspe", instance: str = "official") -> dict[str, float]:
    """The per-repetition distribution of PE errors (a fresh official instance and stream per repetition).

    One run holds all repetitions so that one figure can show every repetition's error (dots), the mean, the
    median and the 10-90% band per method and T. Metrics: mean, median, q10, q90 per method and T, the fraction
    of repetitions where RS-PE beats IPS, and the fraction that missed a spike (the heavy-tail regime).
    ``rspe_slot``, ``instance``: as in ``policy_evaluation``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid, slot = sorted(horizons), _check_slot("rspe_slot", rspe_slot, _PE_SLOT)
    _check_slot("instance", instance, _INSTANCES)
    runs = []
    for rep in ctx.progress(range(repetitions), description="repetitions", total=repetitions):
        env = _instance(ctx, instance, m, n, rank, rep)
        runs.append(_pe_errors(env, grid, official_pool, rank, tau, ctx.rng("samples", rep), slot))
    errors = {name: np.array([run[name] for run in runs]) for name in (*_PE_METHODS, "spike_missed")}
    metrics: dict[str, float] = {"repetitions": float(repetitions)}
    fig, axes = plt.subplots(1, len(grid), figsize=(4 * len(grid), 4), squeeze=False)
    for k, horizon in enumerate(grid):
        ax = axes[0, k]
        for position, name in enumerate(_PE_METHODS):
            values = errors[name][:, k]
            metrics[f"{name}_error_T{horizon}_mean"] = float(values.mean())
            for label, q in _QUANTILES.items():
                metrics[f"{name}_error_T{horizon}_{label}"] = float(np.quantile(values, q))
            jitter = position + 0.15 * np.linspace(-1, 1, values.size)
            ax.scatter(jitter, values, s=10, alpha=0.6)
            low, high = np.quantile(values, [0.1, 0.9])
            ax.vlines(position + 0.3, low, high, color="k")
            ax.plot(position + 0.3, np.median(values), "k_", markersize=14)
            ax.plot(position + 0.3, values.mean(), "r*", markersize=9)
        ax.set_yscale("log")
        ax.set_xticks(range(len(_PE_METHODS)), ["IPS", "SIPS", "RS-PE", "RS-PE\nofficial"])
        ax.set_title(f"T = {horizon} (dots: repetitions; bar: 10-90%, -: median, *: mean)", fontsize=8)
        # a win counts only beyond RESOLUTION (IPS in the slot ties exactly; a rounding-sized gain is no win)
        metrics[f"rspe_beats_ips_frac_T{horizon}"] = float(np.mean(errors["rspe"][:, k] < errors["ips"][:, k]
                                                                   - RESOLUTION))
        metrics[f"spike_missed_frac_T{horizon}"] = float(errors["spike_missed"][:, k].mean())
    for key in ("rspe_beats_ips_frac", "ips_error", "rspe_error"):  # the largest T, which the claim reads
        suffix = "_median" if key.endswith("error") else ""
        source = f"{key}_T{grid[-1]}{suffix}" if suffix else f"{key}_T{grid[-1]}"
        metrics[f"{key}_largest_T{suffix}"] = metrics[source]
    metrics["largest_T"] = float(grid[-1])
    axes[0, 0].set_ylabel("|v^ - v|")
    ctx.figure("pe_error_distribution", fig)
    return metrics


@experiment(PAPER, quick={"seeds": 8}, full={"seeds": 20},
            smoke={"sizes": [5, 10], "horizon": 800}, threads=1, null=IPS_IN_RSPE_SLOT)
def size_sweep(ctx, sizes: list[int] = (10, 20, 40, 80, 160), horizon: int = 10_000,
               tau: float = 1e-4, rspe_slot: str = "rspe", instance: str = "constant") -> dict[str, float]:
    """PE error vs matrix size (m = n, all-ones rank-1 matrix, target: arm 0, T = 1e4) for IPS, SIPS, RS-PE.

    ``rspe_slot``: as in ``policy_evaluation``. ``instance``: the rank-1 matrix, "constant" (all ones, the
    paper's), "gaussian" (incoherent, redrawn per seed and size) or "official" (spiky, redrawn likewise).
    """
    grid, slot = sorted(sizes), _check_slot("rspe_slot", rspe_slot, _PE_SLOT)
    _check_slot("instance", instance, _SIZE_INSTANCES)
    metrics = {}
    errors = {name: np.zeros(len(grid)) for name in ("ips", "sips", "rspe")}
    for k, size in enumerate(ctx.progress(grid, description="sizes", total=len(grid))):
        env = _instance(ctx, instance, size, size, 1, size)
        target = np.zeros(size, dtype=np.int64)
        truth = env.value(target)
        behaviour = env.uniform_behaviour
        data = env.collect(horizon, behaviour, random_state=ctx.rng("size", size)) + (behaviour,)
        errors["ips"][k] = abs(IPS().fit(*data).evaluate(target) - truth)
        errors["sips"][k] = abs(SIPS(1).fit(*data).evaluate(target) - truth)
        errors["rspe"][k] = abs(_pe_estimate(slot, 1, tau, data, target, truth) - truth)
        for name in errors:
            metrics[labelled(f"{name}_error", size=size)] = float(errors[name][k])
    _plot_curves(ctx, "pe_error_vs_size", grid, {"IPS": errors["ips"], "SIPS": errors["sips"], "RS-PE": errors["rspe"]},
                 "matrix size m = n", f"PE error at T = {horizon}")
    return metrics


@size_sweep.summarizer
def _size_sweep_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Log-log slopes of the mean errors over m + n, and the ratio of mean errors at the largest size."""
    grid = _grid(per_seed, "rspe_error", "size")
    means = {name: [_mean(per_seed, labelled(f"{name}_error", size=size)) for size in grid] for name in ("ips", "rspe")}
    totals = [2 * size for size in grid]
    return {
        "ips_slope_vs_size": _loglog_slope(totals, means["ips"]),
        "rspe_slope_vs_size": _loglog_slope(totals, means["rspe"]),
        "ips_over_rspe_largest": _ratio(means["ips"][-1], means["rspe"][-1]),
    }


@experiment(PAPER, quick={"seeds": 6}, full={"seeds": 20},
            smoke={"sizes": [5, 10], "horizons": [300, 600, 1200]}, threads=1, null=IPS_IN_RSPE_SLOT)
def sample_complexity(ctx, sizes: list[int] = (10, 20, 40, 80), horizons: list[int] = (1000, 2000, 4000, 8000, 16000),
                      epsilon: float = 0.05, tau: float = 1e-4, rspe_slot: str = "rspe",
                      instance: str = "constant") -> dict[str, float]:
    """Samples RS-PE needs for PE error epsilon vs m + n (all-ones rank-1 matrix; log-log fit of error vs T).

    One seed gives RS-PE's error at every (size, T); the summary fits log(mean error) vs log T per size, solves
    for the T where it reaches epsilon, and fits those against m + n; the per-size fits are noisy.
    IPS runs beside it on the same samples (``ips_*``): for a deterministic target policy under uniform behaviour
    its variance is about 2n/T, so its samples also grow linearly in n, hence the claim compares with IPS.
    ``rspe_slot``: as in ``policy_evaluation``; ``instance``: as in ``size_sweep``.
    """
    size_grid, grid = sorted(sizes), sorted(horizons)
    slot = _check_slot("rspe_slot", rspe_slot, _PE_SLOT)
    _check_slot("instance", instance, _SIZE_INSTANCES)
    metrics = {"epsilon": float(epsilon)}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for size in ctx.progress(size_grid, description="sizes", total=len(size_grid)):
        env = _instance(ctx, instance, size, size, 1, size)
        target = np.zeros(size, dtype=np.int64)
        truth = env.value(target)
        behaviour = env.uniform_behaviour
        contexts, arms, rewards = env.collect(grid[-1], behaviour, random_state=ctx.rng("size", size))
        errors = []
        for horizon in grid:
            data = (contexts[:horizon], arms[:horizon], rewards[:horizon], behaviour)
            errors.append(abs(_pe_estimate(slot, 1, tau, data, target, truth) - truth))
            metrics[labelled("rspe_error", size=size, T=horizon)] = float(errors[-1])
            metrics[labelled("ips_error", size=size, T=horizon)] = float(abs(IPS().fit(*data).evaluate(target)
                                                                             - truth))
        ax.loglog(grid, np.maximum(errors, RESOLUTION), marker="o", label=f"m = n = {size}")
    ax.axhline(epsilon, color="k", linestyle="--", label=f"epsilon = {epsilon}")
    ax.set_xlabel("samples T")
    ax.set_ylabel(f"RS-PE error (seed {ctx.seed})")
    ax.legend()
    ctx.figure("pe_error_by_size", fig)
    return metrics


@sample_complexity.summarizer
def _sample_complexity_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Per size, the T where the log-log fit of the mean error vs T reaches epsilon (the smallest T of the grid where
    the mean error is within epsilon at every T: the need is at most that); their slope over m + n, for RS-PE and
    (where run beside it) IPS, and IPS's samples over RS-PE's at the largest size."""
    sizes = _grid(per_seed, "rspe_error", "size")
    summary, needed = {}, {"rspe": [], "ips": []}
    for name, prefix in (("rspe", ""), ("ips", "ips_")):
        if not select(per_seed[0], f"{name}_error"):
            continue
        for size in sizes:
            grid = _grid(per_seed, "rspe_error", "T", size=size)
            mean_error = [_mean(per_seed, labelled(f"{name}_error", size=size, T=horizon)) for horizon in grid]
            epsilon = _mean(per_seed, "epsilon")
            slope, intercept = np.polyfit(np.log(grid), np.log(np.maximum(mean_error, RESOLUTION)), 1)
            within = max(mean_error) <= epsilon  # e.g. the oracle's zero error: no fit to extrapolate
            needed[name].append(float(grid[0] if within else np.exp((np.log(epsilon) - intercept) / slope)))
            summary[f"{prefix}samples_needed_size{size}"] = needed[name][-1]
            summary[f"{prefix}error_slope_vs_T_size{size}"] = float(slope)
        summary[f"{prefix}sample_complexity_slope"] = _loglog_slope([2 * size for size in sizes], needed[name])
    if needed["ips"]:
        summary["ips_over_rspe_samples_largest"] = _ratio(needed["ips"][-1], needed["rspe"][-1])
    return summary


@experiment(PAPER, quick={"seeds": 8}, full={"seeds": 20},
            smoke={"m": 12, "n": 10, "horizons": [500, 8000]}, threads=1, null=RANDOM_IN_RSBPI_SLOT)
def best_policy(ctx, m: int = 50, n: int = 50, rank: int = 2,
                horizons: list[int] = (2000, 4000, 8000, 16000), rsbpi_slot: str = "rsbpi",
                instance: str = "official") -> dict[str, float]:
    """Value of the policy returned by RS-BPI, SBPI and greedy-on-IPS ("Benchmark") vs T (official instance).

    The gap of a seed is its instance's optimal value minus the returned policy's; the runner averages gaps.
    ``rsbpi_slot`` is the policy reported as rsbpi:
    "rsbpi" (the method), a null: "sbpi", "benchmark", "random" (a uniformly random arm per context), or "oracle"
    (the optimal arm of every context). ``instance``: as in ``policy_evaluation``.
    """
    slot = _check_slot("rsbpi_slot", rsbpi_slot, _BPI_SLOT)
    env = _instance(ctx, _check_slot("instance", instance, _INSTANCES), m, n, rank)
    grid = sorted(horizons)
    behaviour = env.uniform_behaviour
    contexts, arms, rewards = env.collect(grid[-1], behaviour, random_state=ctx.rng("samples"))
    values = {name: np.zeros(len(grid)) for name in ("rsbpi", "sbpi", "benchmark")}
    for k, horizon in enumerate(grid):
        data = (contexts[:horizon], arms[:horizon], rewards[:horizon], behaviour)
        if slot == "random":
            values["rsbpi"][k] = env.value(ctx.rng("random_policy", horizon).integers(n, size=m))
        elif slot == "oracle":
            values["rsbpi"][k] = env.value(env.optimal_arms)
        else:
            values["rsbpi"][k] = env.value({"rsbpi": RSBPI(rank), "sbpi": SBPI(rank),
                                            "benchmark": IPSGreedy()}[slot].fit(*data).policy_)
        values["sbpi"][k] = env.value(SBPI(rank).fit(*data).policy_)
        values["benchmark"][k] = env.value(IPSGreedy().fit(*data).policy_)
    best = env.optimal_value()
    metrics = {"optimal_value": best, "snr": env.snr}
    for k, horizon in enumerate(grid):
        for name, value in values.items():
            metrics[f"{name}_gap_T{horizon}"] = float(best - value[k])
    _plot_curves(ctx, "bpi_value_vs_T", grid, {"RS-BPI": values["rsbpi"], "SBPI": values["sbpi"],
                                               "Benchmark (greedy IPS)": values["benchmark"]},
                 "samples T", "value of the returned policy", logy=False, hline=best)
    return metrics


@experiment(PAPER, quick={"horizons": [1000, 2000, 4000, 8000], "seeds": 2}, full={"seeds": 20},
            smoke={"m": 8, "n": 6, "horizons": [200, 400]}, threads=1, null=ESTR_IN_RSRMIN_SLOT)
def regret(ctx, m: int = 50, n: int = 50, rank: int = 2,
           horizons: list[int] = (2000, 4000, 8000, 16000), rsrmin_slot: str = "rsrmin",
           scale: float = 1.0) -> dict[str, float]:
    """Cumulative regret of RS-RMIN (reconstruction) vs LinUCB on one-hot features, per-pair UCB and the ESTR-style
    low-rank baseline (Gaussian M). Baselines at their textbook constants (OFUL radius with delta = 1/T, ridge
    1e-2; UCB1 bonus sqrt(2 log N); ESTR exploration sqrt(r (m+n) T)).

    Every learner sees the same contexts and noise (one stream per seed). The instance is incoherent because
    the official M is spiky: uniform exploration of a few thousand rounds often never sees its two entries of
    ~600, and the paper's guarantees assume incoherence. ``rsrmin_slot`` is the learner reported as rsrmin:
    "rsrmin" (the method), a null: "estr", "pairucb", "linucb" (run exactly as in its own column), or "oracle" (the
    optimal arm every round: zero pseudo-regret). ``scale``: the entries' standard deviation (signal-to-noise with
    unit noise).
    """
    slot = _check_slot("rsrmin_slot", rsrmin_slot, _RMIN_SLOT)
    env = _instance(ctx, "gaussian", m, n, rank, scale=scale)
    grid = sorted(horizons)
    stream = ctx.child_seed("play")  # common random numbers for the three learners
    regrets = {}
    # the baselines are anytime: one run to the largest horizon, read at each T
    for name, learner in (("linucb", LinUCBOneHot()), ("pairucb", PairUCB())):
        regrets[name] = np.cumsum(learner.run(env, grid[-1], random_state=stream))[np.asarray(grid) - 1]
    # RS-RMIN's exploration length depends on T: one run per T
    regrets["estr"] = np.array([ExploreSubspaceRefine(rank).run(env, horizon, random_state=stream).sum()
                                for horizon in grid])
    if slot == "oracle":
        regrets["rsrmin"] = np.zeros(len(grid))
    else:
        regrets["rsrmin"] = regrets[slot].copy() if slot != "rsrmin" else np.array(
            [RSRMIN(rank).run(env, horizon, random_state=stream).sum() for horizon in grid])
    metrics = {"snr": env.snr, "largest_T": float(grid[-1])}
    for k, horizon in enumerate(grid):
        for name in regrets:
            metrics[labelled(f"{name}_regret", T=horizon)] = float(regrets[name][k])
    for name in regrets:
        metrics[f"{name}_regret_last"] = float(regrets[name][-1])
    _plot_curves(ctx, "regret_vs_T", grid, {"RS-RMIN (reconstruction)": regrets["rsrmin"],
                                            "LinUCB (one-hot, d = mn)": regrets["linucb"],
                                            "per-pair UCB": regrets["pairucb"],
                                            "ESTR-style (low-rank aware)": regrets["estr"]},
                 "horizon T", "cumulative regret")
    return metrics


@regret.summarizer
def _regret_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Log-log slope of the MEAN cumulative regret over seeds vs T, per learner."""
    grid = _grid(per_seed, "rsrmin_regret", "T")
    return {f"{name}_slope": _loglog_slope(grid, [_mean(per_seed, labelled(f"{name}_regret", T=h)) for h in grid])
            for name in ("rsrmin", "linucb", "pairucb", "estr") if labelled(f"{name}_regret", T=grid[0]) in per_seed[0]}


# ---------------------------------------------------------------------------------------------- claims
