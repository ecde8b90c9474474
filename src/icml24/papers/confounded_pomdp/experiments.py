"""confounded-pomdp experiments: identification, OPE and policy choice on the toys, with their nulls."""


from __future__ import annotations

import numpy as np

from icml24.core import Null, experiment, labelled, select
from icml24.rl import (
    DeltaFeatures,
    HistoryInstrument,
    NaiveObservationMDP,
    PessimisticPolicyOptimizer,
    RBFFeatures,
    TwoStageBridgeEstimator,
    bridge_error,
    calibrate_xi_scale,
    chain_value,
    continuous_toy,
    coverage_ratio,
    deterministic_policies,
    doubly_robust,
    importance_sampling,
    random_continuous,
    random_tabular,
    tabular_toy,
    true_bridges,
)

from . import PAPER
from .instances import PARTIAL_RATE, TOY_OBS_SCALE, TOY_OPTIMAL_RATE, continuous_noise, partial_logging, toy_logging

_NAIVE_LABEL = ("the naive (confounding-blind) observation-MDP plug-in in the bridge estimator's slot: its values "
                "for evaluation, its greedy policy for policy learning")
NAIVE_TABULAR = Null(_NAIVE_LABEL, {"estimator": "naive"})  # 0.23 of the method's quick seed: not cheap
NAIVE_CONTINUOUS = Null(_NAIVE_LABEL, {"estimator": "naive"}, cheap=True)  # 0.06 of it: no kernel fit
NAIVE_PARTIAL = Null(_NAIVE_LABEL, {"estimator": "naive"}, cheap=True)  # no fit, no pessimism
ESTIMATORS = ("bridge", "naive", "truth")  # the bridge estimator's slot: the method, the null, the oracle
CHOICE_SLOTS = ("pessimistic", "optimal", "uniform")  # the pessimistic choice's slot: the method, oracle, null


def _slope(sizes, values) -> float:
    x, y = np.log(np.asarray(sizes, dtype=float)), np.log(np.maximum(np.asarray(values, dtype=float), 1e-300))
    return float(np.polyfit(x, y, 1)[0])


@experiment(
    PAPER,
    quick={"random_instances": 20, "seeds": 3},
    full={"random_instances": 100, "seeds": 10},
    smoke={"random_instances": 3, "mc_episodes": 20000},
)
def identification(ctx, random_instances: int = 20, mc_episodes: int = 100000) -> dict[str, float]:
    """(a) The chain with the true (pseudo-inverse) bridges against exact DP, on the toy, the continuous instance
    and random instances (tabular with |S| in {2, 3}, |A| in {2, 3}; Gaussian with RBF features), for all
    deterministic and random time-varying stochastic policies; plus DP against a Monte Carlo roll-out."""
    rng = ctx.rng("instances")
    worst, residual = 0.0, 0.0
    cases = [(tabular_toy(), DeltaFeatures(3)), (continuous_toy(), RBFFeatures(np.linspace(-2.5, 2.5, 7), 0.8))]
    for k in range(random_instances):
        s, a = 2 + k % 2, 2 + (k // 2) % 2
        o = s + int(rng.integers(0, 3))
        cases.append((random_tabular(rng, n_states=s, n_actions=a, n_obs=o, n_o0=s), DeltaFeatures(o)))
        cases.append((random_continuous(rng, n_states=s, n_actions=a), RBFFeatures(np.linspace(-3, 3, 9), 0.9)))
    for pomdp, features in cases:
        bridges = true_bridges(pomdp, features)
        residual = max(residual, *bridges.residuals.values())
        policies = list(deterministic_policies(pomdp.n_cells, pomdp.n_actions, pomdp.horizon))
        policies += list(rng.dirichlet(np.ones(pomdp.n_actions), size=(4, pomdp.horizon, pomdp.n_cells)))
        for pi in policies:
            worst = max(worst, abs(chain_value(bridges, pi) - pomdp.value(pi)))
    toy = tabular_toy()
    z = []
    for pi in deterministic_policies(3, 2, 3)[[0, 3, 7]]:
        returns = toy.sample(mc_episodes, ctx.rng("mc", len(z)), policy=pi).rewards.sum(axis=1)
        z.append(abs(returns.mean() - toy.value(pi)) / (returns.std() / np.sqrt(mc_episodes)))
    return {"identification_max_error": worst, "bridge_residual_max": residual, "num_instances": float(len(cases)),
            "dp_vs_mc_max_z": float(max(z))}


@identification.summarizer
def _identification_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """The worst case over seeds, not the mean."""
    return {key: float(max(m[key] for m in per_seed))
            for key in ("identification_max_error", "bridge_residual_max", "dp_vs_mc_max_z")}


RADIUS_SCALE = 2.0  # the class default: the ball only stops the null-space runaway, never excludes the truth
LEVEL = 0.9  # C(xi) covers every block of the true bridges at once with probability >= 0.9 (union bound)
CHOICES = ("pessimistic", "plugin", "naive")


def _xi_scale(ctx, name, pomdp, features, make_instrument, sizes, cell_edges, datasets):
    """Per-block constants of xi = c dof / n, chosen on held-out data sets of the instance (``calibrate_xi_scale``);
    built once under its own seed and shared by every seed of the run."""
    def build(bctx):
        def make(seed):
            return TwoStageBridgeEstimator(features, make_instrument(seed), pomdp.n_actions, pomdp.n_cells,
                                           cell_edges=cell_edges, random_state=seed)
        truth = true_bridges(pomdp, features)
        return [float(c) for c in calibrate_xi_scale(pomdp, truth, make, sizes, datasets, bctx.rng("held-out"), LEVEL)]

    key = {"instance": name, "sizes": [int(n) for n in sizes], "datasets": int(datasets), "level": LEVEL, "seed": 0}
    return np.asarray(ctx.cached(f"xi-{name}", key, build), dtype=float)


def _evaluate(ctx, pomdp, features, make_instrument, sizes, tag, pessimism, sweeps, xi_datasets,
              cell_edges=None, estimator="bridge", choice="pessimistic", cache_tag=None):
    """One seed over the sample sizes: OPE errors of every estimator, bridge errors, and the regret of the three
    policy choices on the same data: ``pessimistic`` (argmax of V_low over the calibrated C(xi)), ``plugin``
    (argmax of V(pi; b_hat)) and ``naive`` (argmax of the observation-MDP value).

    ``estimator`` fills the bridge estimator's slot: "bridge" (the method), the null "naive" (the naive plug-in:
    its values under the ``bridge_*`` keys and its greedy policy in the plug-in and pessimistic slots) or the oracle
    "truth" (the exact DP values: zero OPE error, the optimal policy in both slots); with no bridge fitted, the
    bridge diagnostics and the confidence-set regime (coverage, width) are absent. ``choice`` fills the pessimistic
    choice's slot alone (the plug-in and naive baselines unchanged): "pessimistic" (the method), the oracle
    "optimal" (regret 0) or the null "uniform" (no learning: the exact mean regret of a uniform draw from the
    class). ``cache_tag`` names the instance in the xi calibration's cache (default ``tag``)."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    if choice not in CHOICE_SLOTS:
        raise ValueError(f"choice must be one of {', '.join(CHOICE_SLOTS)}, got {choice!r}")
    policies = deterministic_policies(pomdp.n_cells, pomdp.n_actions, pomdp.horizon)
    truth = np.array([pomdp.value(pi) for pi in policies])
    exact = true_bridges(pomdp, features)
    out = {"best_value": float(truth.max()), "behaviour_value": pomdp.behaviour_value()}
    optimise = pessimism and estimator == "bridge" and choice == "pessimistic"
    if optimise:
        xi_scale = _xi_scale(ctx, cache_tag or tag, pomdp, features, make_instrument, sizes, cell_edges, xi_datasets)
        out.update({f"xi_scale_{name}": float(c) for name, c in zip(exact.block_names(), xi_scale)})
    for n in sizes:
        data = pomdp.sample(n, ctx.rng(tag, n))
        naive = NaiveObservationMDP(pomdp.n_cells, pomdp.n_actions, cell_edges=cell_edges).fit(data)
        values = {"naive": [naive.value(pi) for pi in policies],
                  "is": [importance_sampling(data, pi, naive) for pi in policies],
                  "dr": [doubly_robust(data, pi, naive) for pi in policies]}
        if estimator == "bridge":
            est = TwoStageBridgeEstimator(features, make_instrument(ctx.child_seed("fourier")), pomdp.n_actions,
                                          pomdp.n_cells, cell_edges=cell_edges,
                                          random_state=ctx.child_seed(tag, "split", n)).fit(data)
            values["bridge"] = [est.value(pi) for pi in policies]
        else:
            values["bridge"] = values["naive"] if estimator == "naive" else list(truth)
        for name in ("bridge", "naive", "is", "dr"):
            err = np.asarray(values[name]) - truth
            out[_n(f"{name}_error", n)] = float(np.abs(err).mean())
            out.update({labelled(f"{name}_signed", n=n, policy=k): float(e) for k, e in enumerate(err)})
        out[_n("regret_plugin", n)] = float(truth.max() - truth[int(np.argmax(values["bridge"]))])
        out[_n("regret_naive", n)] = float(truth.max() - truth[int(np.argmax(values["naive"]))])
        if pessimism and not optimise:
            out[_n("regret_pessimistic", n)] = {"optimal": 0.0, "uniform": float(np.mean(truth.max() - truth)),
                                                "pessimistic": out[_n("regret_plugin", n)]}[choice]
        if estimator != "bridge":
            continue
        l2 = bridge_error(est.bridges_, exact)
        out[_n("bridge_l2_reward", n)], out[_n("bridge_l2_dynamic", n)] = l2["reward"], l2["dynamic"]
        signal = pomdp.n_actions * pomdp.n_states  # rank of the population design: |A| |S|
        out[_n("signal_eigenvalue", n)] = float(min(ev[signal - 1] for ev in est.design_eigenvalues_))
        if optimise:
            opt = PessimisticPolicyOptimizer(xi_scale=xi_scale, radius_scale=RADIUS_SCALE, max_sweeps=sweeps)
            opt.fit(est, policies)
            out[_n("regret_pessimistic", n)] = float(truth.max() - truth[opt.best_index_])
            out[_n("covered", n)] = float(opt.confidence_set_.contains(exact).all())
            out[_n("violations", n)] = float(np.sum(opt.lower_values_ > truth + 1e-9))
            out[_n("width", n)] = float(np.mean(opt.plug_in_values_ - opt.lower_values_))  # V_hat - V_low
            out[_n("lower_gap", n)] = float(np.mean(truth - opt.lower_values_))
            out[_n("lower_gap_max", n)] = float(np.max(truth - opt.lower_values_))
    return out


def _n(name: str, n: int) -> str:
    """The key of a per-sample-size metric: ``name[n=<n>]``."""
    return labelled(name, n=n)


def _paired(per_seed, a: str, b: str) -> tuple[float, float]:
    """Mean over seeds of the paired difference m[a] - m[b], and its standard error."""
    d = np.array([m[a] - m[b] for m in per_seed])
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0


def _bias(per_seed: list[dict[str, float]], name: str, **fixed) -> float:
    """|mean over seeds of the signed errors ``name[...,policy=k]``|, averaged over the policies k."""
    signed = np.array([[v for _, v in select(m, name, **fixed)] for m in per_seed])  # seeds x policies
    return float(np.mean(np.abs(signed.mean(axis=0))))


def _summary(per_seed: list[dict[str, float]], sizes: list[int], pessimism: bool) -> dict[str, float]:
    """Bias = |mean over seeds of the signed error|, averaged over policies; error slope over N; the three choices'
    regrets and their paired differences (with standard errors) at every N; coverage and width of C(xi)."""
    keys = per_seed[0]
    out = {}
    for name in ("bridge", "naive", "is", "dr"):
        for n in sizes:
            out[_n(f"{name}_bias", n)] = _bias(per_seed, f"{name}_signed", n=n)
        errors = [np.mean([m[_n(f"{name}_error", n)] for m in per_seed]) for n in sizes]
        out[f"{name}_error_slope"] = _slope(sizes, errors)
        out[f"{name}_bias_slope"] = _slope(sizes, [out[_n(f"{name}_bias", n)] for n in sizes])
    largest, smallest = max(sizes), min(sizes)
    out["largest_n"] = float(largest)  # the claims' scope: effective episodes N / C(pi) at the largest N
    out["bridge_error_largest"] = float(np.mean([m[_n("bridge_error", largest)] for m in per_seed]))
    out["naive_bias_min"] = min(out[_n("naive_bias", n)] for n in sizes)
    out["naive_bias_largest"] = out[_n("naive_bias", largest)]  # regime: the strength of confounding
    out["is_bias_largest"] = out[_n("is_bias", largest)]
    if _n("bridge_l2_reward", largest) in keys:  # absent from the naive null's runs (no bridge is fitted)
        out["bridge_l2_reward_slope"] = _slope(sizes, [np.mean([m[_n("bridge_l2_reward", n)] for m in per_seed])
                                                       for n in sizes])
    if pessimism:
        for n in sizes:
            for other in ("plugin", "naive"):  # > 0: the pessimistic choice has the lower regret
                mean, se = _paired(per_seed, _n(f"regret_{other}", n), _n("regret_pessimistic", n))
                out[_n(f"{other}_minus_pessimistic", n)], out[_n(f"{other}_minus_pessimistic_se", n)] = mean, se
        for choice in CHOICES:
            out[f"regret_{choice}_largest"] = float(np.mean([m[_n(f"regret_{choice}", largest)] for m in per_seed]))
            out[f"regret_{choice}_smallest"] = float(np.mean([m[_n(f"regret_{choice}", smallest)] for m in per_seed]))
        out["pessimistic_drop"], out["pessimistic_drop_se"] = _paired(
            per_seed, _n("regret_pessimistic", smallest), _n("regret_pessimistic", largest))
        for key in ("plugin_minus_pessimistic", "naive_minus_pessimistic"):
            for end, n in (("largest", largest), ("smallest", smallest)):
                out[f"{key}_{end}"], out[f"{key}_se_{end}"] = out[_n(key, n)], out[_n(f"{key}_se", n)]
    if pessimism and _n("covered", largest) in keys:  # the confidence set's regime
        covered = [(m[_n("covered", n)], m[_n("violations", n)]) for m in per_seed for n in sizes]
        out["covered_fraction"] = float(np.mean([c for c, _ in covered]))
        out["violations_when_covered"] = float(sum(v for c, v in covered if c == 1.0))  # c: a 0/1 flag
        out["covered_cases"] = float(sum(c for c, _ in covered))
        for n in sizes:
            out[_n("covered_fraction", n)] = float(np.mean([m[_n("covered", n)] for m in per_seed]))
        out["width_largest"] = float(np.mean([m[_n("width", largest)] for m in per_seed]))
        out["width_smallest"] = float(np.mean([m[_n("width", smallest)] for m in per_seed]))
        out["lower_gap_largest"] = float(np.mean([m[_n("lower_gap", largest)] for m in per_seed]))
        out["lower_gap_max"] = float(max(m[_n("lower_gap_max", n)] for m in per_seed for n in sizes))
    return out


def _sizes_of(per_seed) -> list[int]:
    """The sample sizes of one run: the ``n`` labels of its ``bridge_error[n=...]`` metrics."""
    return [labels["n"] for labels, _ in select(per_seed[0], "bridge_error")]


def _tabular_instrument(n_actions):
    return lambda seed: HistoryInstrument(n_actions, n_obs=3, n_o0=2, random_state=seed)  # draws nothing it uses


def _naive_bias_split(pomdp, uniform) -> dict[str, float]:
    """Exact (population) bias of the naive model, per policy split into partial observability (the naive model
    fitted to an unconfounded uniform behaviour on the same POMDP) and confounding (the rest)."""
    pols = deterministic_policies(pomdp.n_cells, pomdp.n_actions, pomdp.horizon)
    truth = np.array([pomdp.value(pi) for pi in pols])
    confounded = NaiveObservationMDP(pomdp.n_cells, pomdp.n_actions).fit_population(pomdp)
    blind = NaiveObservationMDP(pomdp.n_cells, pomdp.n_actions).fit_population(uniform)
    v_conf, v_blind = (np.array([m.value(pi) for pi in pols]) for m in (confounded, blind))
    return {"naive_population_bias": float(np.mean(np.abs(v_conf - truth))),
            "naive_bias_partial_observability": float(np.mean(np.abs(v_blind - truth))),
            "naive_bias_confounding": float(np.mean(np.abs(v_conf - v_blind)))}


TABULAR_SIZES = [1000, 5000, 20000, 50000]


@experiment(
    PAPER,
    quick={"sizes": TABULAR_SIZES, "seeds": 10},
    full={"sizes": [1000, 2000, 5000, 10000, 20000, 50000], "seeds": 10},
    smoke={"sizes": [300, 1500], "sweeps": 3, "xi_datasets": 3},
    threads=1,
    null=NAIVE_TABULAR,
)
def tabular(ctx, sizes: list[int] = (1000, 5000, 20000, 50000), sweeps: int = 10, xi_datasets: int = 20,
            estimator: str = "bridge", choice: str = "pessimistic",
            optimal_rate: float = TOY_OPTIMAL_RATE) -> dict[str, float]:
    """(b)-(d) The toy (|S| 2, |A| 2, |O| 3, |O_0| 2, T 3): OPE of the 8 deterministic memoryless policies by the
    bridge estimator, the naive observation MDP, IS and DR against exact DP; bridge L2 errors; the regret of the
    pessimistic, plug-in and naive choices on the same data; coverage and width of the calibrated C(xi); the
    optimal policy's coverage ratio; the naive bias split into partial observability and confounding (exact). A
    control at the largest N refits the baselines with a uniform (unconfounded) behaviour policy.

    ``estimator`` fills the bridge estimator's slot: "bridge" (the method) or the null "naive" (the observation-MDP
    plug-in and its greedy policy) or the oracle "truth" (the exact values); ``choice`` fills the pessimistic
    choice's slot (see ``_evaluate``). ``optimal_rate`` is the instance: the behaviour's rate of the optimal action in
    latent state 1 (``toy_logging``; the toy's 0.75)."""
    pomdp = toy_logging(optimal_rate)
    cache = "tabular" if optimal_rate == TOY_OPTIMAL_RATE else f"tabular-optimal-rate-{optimal_rate}"
    out = _evaluate(ctx, pomdp, DeltaFeatures(3), _tabular_instrument(2), sizes, "tabular", True, sweeps,
                    xi_datasets, estimator=estimator, choice=choice, cache_tag=cache)
    control = tabular_toy(confounding=0.0)
    data = control.sample(max(sizes), ctx.rng("control"))
    naive = NaiveObservationMDP(3, 2).fit(data)
    for k, pi in enumerate(deterministic_policies(3, 2, 3)):
        out[labelled("control_is_signed", policy=k)] = importance_sampling(data, pi, naive) - control.value(pi)
        out[labelled("control_naive_signed", policy=k)] = naive.value(pi) - control.value(pi)
    pols = deterministic_policies(3, 2, 3)
    ratios = np.array([coverage_ratio(pomdp, pi) for pi in pols])
    out["coverage_ratio_optimal"] = float(ratios[int(np.argmax([pomdp.value(pi) for pi in pols]))])
    out["coverage_ratio_worst"] = float(ratios.max())
    out.update(_naive_bias_split(pomdp, control))
    return out


@tabular.summarizer
def _tabular_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    out = _summary(per_seed, _sizes_of(per_seed), pessimism=True)
    for name in ("is", "naive"):
        out[f"control_{name}_bias"] = _bias(per_seed, f"control_{name}_signed")
    return out


PARTIAL_SIZES = [2000, 5000, 20000]


@experiment(
    PAPER,
    quick={"sizes": PARTIAL_SIZES, "seeds": 10},
    full={"sizes": [1000, 2000, 5000, 10000, 20000, 50000], "seeds": 20},
    smoke={"sizes": [1000, 6000], "sweeps": 3, "xi_datasets": 3},
    threads=1,
    null=NAIVE_PARTIAL,
)
def partial_coverage(ctx, sizes: list[int] = (2000, 5000, 20000), sweeps: int = 10, xi_datasets: int = 20,
                     estimator: str = "bridge", choice: str = "pessimistic", rare: str = "bad",
                     rate: float = PARTIAL_RATE) -> dict[str, float]:
    """The partial-coverage toy (``partial_coverage_toy``: a third action the behaviour takes almost only where it
    pays): the regret of the pessimistic, plug-in and naive choices over its 27 deterministic memoryless policies,
    on the same data; the coverage ratio C(pi) of the optimal policy and the worst over the class; coverage and
    width of the calibrated C(xi). The instance was designed (four variants tried, on these metrics) to sit in
    the regime the theory describes: the optimal policy covered, the policies that use the rare action not.

    ``rare`` and ``rate`` are the instance (``partial_logging``): which action is rarely logged ("bad": the third
    action in state 0, the toy; "optimal": state 1's optimal action) and how rarely (the toy: 0.02)."""
    pomdp = partial_logging(rare, rate)
    cache = "partial" if (rare, rate) == ("bad", PARTIAL_RATE) else f"partial-{rare}-rate-{rate}"
    out = _evaluate(ctx, pomdp, DeltaFeatures(3), _tabular_instrument(3), sizes, "partial", True, sweeps,
                    xi_datasets, estimator=estimator, choice=choice, cache_tag=cache)
    pols = deterministic_policies(3, 3, 3)
    ratios = np.array([coverage_ratio(pomdp, pi) for pi in pols])
    out["coverage_ratio_optimal"] = float(ratios[int(np.argmax([pomdp.value(pi) for pi in pols]))])
    out["coverage_ratio_worst"] = float(ratios.max())
    return out


@partial_coverage.summarizer
def _partial_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    return _summary(per_seed, _sizes_of(per_seed), pessimism=True)


@experiment(
    PAPER,
    quick={"sizes": [1000, 5000, 20000], "seeds": 4},
    full={"sizes": [1000, 5000, 20000, 50000], "seeds": 10},
    smoke={"sizes": [500, 3000], "sweeps": 3, "xi_datasets": 2},
    threads=1,
    null=NAIVE_CONTINUOUS,
)
def continuous(ctx, sizes: list[int] = (1000, 5000, 20000), pessimism: bool = True, sweeps: int = 10,
               xi_datasets: int = 10, n_centers: int = 7, lengthscale: float = 0.8, n_fourier: int = 64,
               bandwidth: float = 0.7, estimator: str = "bridge",
               obs_scale: float = TOY_OBS_SCALE) -> dict[str, float]:
    """The continuous-observation instance: |S| 3, |A| 2, o ~ N(mu_s, 0.6^2), O_0 ~ N(nu_s, 0.5^2), policies on 4
    bins of o (16 deterministic ones). Bridges use the delta kernel on actions times an RBF kernel on o (Nystrom
    on 7 centres); stage I uses random Fourier features of (O_0, O_{t-1}) times the delta kernel on actions.
    ``obs_scale`` is the instance's observation noise sd (``continuous_noise``; the toy's 0.6)."""
    pomdp = continuous_noise(obs_scale)
    features = RBFFeatures(np.linspace(-2.5, 2.5, n_centers), lengthscale)

    def make_instrument(seed):
        return HistoryInstrument(2, n_fourier=n_fourier, bandwidth=bandwidth, random_state=seed)

    cache = "continuous" if obs_scale == TOY_OBS_SCALE else f"continuous-obs-scale-{obs_scale}"
    return _evaluate(ctx, pomdp, features, make_instrument, sizes, "continuous", pessimism, sweeps, xi_datasets,
                     cell_edges=pomdp.emission.edges, estimator=estimator, cache_tag=cache)


@continuous.summarizer
def _continuous_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    return _summary(per_seed, _sizes_of(per_seed), pessimism=bool(select(per_seed[0], "regret_pessimistic")))
