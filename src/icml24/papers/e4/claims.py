"""e4 claims and regimes, with the instance families they speak of and the oracle (the optimal arm every round, zero
regret, in every E4 setting's slot)."""

from __future__ import annotations

from icml24.core import Claim, Family, Oracle, Regime, labelled, select

from .experiments import (
    PHAELIMD_IN_E4_SLOT,
    _largest,
    end_of_optimism_regret,
    random_regret,
    regret_vs_horizon,
    stopping_vs_horizon,
)

# A gain counts only beyond this relative tolerance: regrets are sums of up to 1e7 gaps and batch ratios means of
# integers, which one rounding moves by ~1e-12 relative; a tie (a null in E4's slot) is exact.
TIE = 1e-9

OPTIMAL_ARM = Oracle("the optimal arm every round (zero regret, one batch, committed at once) in every E4 setting's "
                     "slot", {"e4_slot": "oracle"})

# Instances: End of Optimism over eps and d (the paper's eps sweep runs 0.005-0.3 at d = 2), the official random
# instance's recipe drawn with other instance seeds (1001, 1002: disjoint from the seeds any setting was chosen on).
# A member that varies the instance runs only the instance its claims read (the claim reads the largest / the
# smallest-(d, eps) instance run), to keep its cost down. cheap (measured once, CPU s per quick seed x seeds, the
# members beyond {}): End of Optimism (1.7 + 1.7 + 0.3) x 5, regret_vs_horizon (0.5 + 0.6) x 3 and (1.3 + 1.3) x 3,
# stopping (1.3 + 2.0) x 5: ~46 s together; random K=50, d=20 (6.3 + 6.3) x 3 runs with --family only.
EOO_INSTANCES = Family(
    "End of Optimism over eps and d: the quick instances (d=2 eps=0.01 and 0.2 at T=1e4, d=3 eps=0.01 at T=5e4), "
    "d=2 eps=0.005 and eps=0.1 at T=1e4, d=3 eps=0.2 at T=5e4",
    members={"quick instances": {}, "d=2 eps=0.005": {"instances": ["2:0.005:10000"]},
             "d=2 eps=0.1": {"instances": ["2:0.1:10000"]}, "d=3 eps=0.2": {"instances": ["3:0.2:50000"]}},
    share=0.75, cheap=True,
)
EOO_HORIZON = Family(
    "End of Optimism over eps and d at T = 1e4..1e6: d=2 eps=0.01 (the default), d=2 eps=0.1, d=3 eps=0.01",
    members={"d=2 eps=0.01": {}, "d=2 eps=0.1": {"instances": ["eoo:2:0.1"]},
             "d=3 eps=0.01": {"instances": ["eoo:3:0.01"]}},
    share=2 / 3, cheap=True,
)
RANDOM_50_20 = Family(
    "random K=50, d=20 instances (the official recipe): np.random.seed 1 (the official one), 1001, 1002",
    members={"seed 1 (official)": {}, "seed 1001": {"instances": ["50:20"], "instance_seed": 1001},
             "seed 1002": {"instances": ["50:20"], "instance_seed": 1002}},
    share=2 / 3,
)
RANDOM_20_10 = Family(
    "random K=20, d=10 instances (the official recipe): np.random.seed 1 (the official one), 1001, 1002",
    members={"seed 1 (official)": {}, "seed 1001": {"instances": ["random:20:10"], "instance_seed": 1001},
             "seed 1002": {"instances": ["random:20:10"], "instance_seed": 1002}},
    share=2 / 3, cheap=True,
)
RANDOM_STOPPING = Family(
    "random K=20, d=10 instances (the official recipe) for the stopping test: np.random.seed 1 (the official one), "
    "1001, 1002",
    members={"seed 1 (official)": {}, "seed 1001": {"instance_seed": 1001, "generators": ["official"]},
             "seed 1002": {"instance_seed": 1002, "generators": ["official"]}},
    share=2 / 3, cheap=True,
)


def _below(value: float, other: float) -> bool:
    """``value`` is below ``other`` by more than rounding (relative TIE)."""
    return value < other - TIE * abs(other)


def _random_e4_under_phaelimd(m, alg: str) -> bool:
    """On the largest random instance run, ``alg``'s regret at the largest T is below PhaElimD's."""
    at = {**_largest(m, "growth_last", alg=alg), "T": int(m["largest_T"])}
    return _below(m[labelled("regret", **at)], m[labelled("regret", **{**at, "alg": "phaelimd"})])


def _random_batches_within(m, alg: str, bound: str) -> bool:
    labels = _largest(m, "growth_last", alg=alg)
    return m[labelled("batches", **labels, T=int(m["largest_T"]))] <= m[bound]


def _random_e4_asymptotic(m) -> bool:
    return (m[labelled("growth_last", **_largest(m, "growth_last", alg="e4"))] <= 1.25
            and _random_batches_within(m, "e4", "batch_bound_largest_T") and _random_e4_under_phaelimd(m, "e4"))


def _random_beats_best_baseline(m) -> bool:
    labels = _largest(m, "best_baseline_regret", protocol="random_order")
    return _below(m[labelled("regret", **labels, alg="e4")], m[labelled("best_baseline_regret", **labels)])


def _official_gamma_commits(m) -> bool:
    labels = _largest(m, "chernoff_passed", alg="e4-gamma10", generator="official", T=int(m["largest_T"]))
    return m[labelled("chernoff_passed", **labels)] >= 0.9


def _headline(m, name: str, alg: str | None = None) -> dict:
    """Labels of the End of Optimism instance with the smallest (d, eps) run, at its largest T where T is a label
    (d=2, eps=0.01, T=1e4 by default; a family member runs another)."""
    found = [labels for labels, _ in select(m, name, instance="eoo", **({"alg": alg} if alg else {}))]
    if not found:  # KeyError: an ``error`` verdict
        raise KeyError(labelled(name, instance="eoo"))
    return min(found, key=lambda x: (x["d"], x["eps"], -x.get("T", 0)))


def _eoo_e4_vs_best_baseline(m) -> bool:
    labels = _headline(m, "best_baseline_regret")
    return m[labelled("regret", **labels, alg="e4")] <= 0.3 * m[labelled("best_baseline_regret", **labels)]


def _eoo_e4_asymptotic(m) -> bool:
    labels = _headline(m, "growth_last", alg="e4")
    return (m[labelled("growth_last", **labels)] <= 1.25
            and m[labelled("batches", **labels, T=int(m["largest_T"]))] <= m["batch_bound_largest_T"])


SEQUENTIAL_NOTE = ("the fully sequential LinUCB and LinTS (one pull per batch: T batches) are not in the comparison "
                   "and have lower regret at d=2, eps=0.01, T=1e4 (issue #56: 45.6 and 16.1 against E4's 186); "
                   "their regret is reported beside it")

CLAIMS = [
    Claim(
        "On the End of Optimism instance with the smallest d and eps run (d=2, eps=0.01, T=1e4 by default), E4's "
        "regret is at most 0.3x the best of PhaElimD, rs-OFUL, EndOA, on at least 3 of the 4 members of the eps/d "
        "family; " + SEQUENTIAL_NOTE,
        experiment=end_of_optimism_regret,
        check=_eoo_e4_vs_best_baseline,
        paper="Fig. (End of Optimism d=2, eps=0.01): E4 ~155, EndOA ~850, PhaElimD ~1050, rs-OFUL ~1100",
        oracle=OPTIMAL_ARM, family=EOO_INSTANCES,
    ),
    Claim(
        "E4 ends with at most 3 batches (3 when its stopping test passes; the oracle commits in 1) in at least 90% "
        "of runs on the End of Optimism instances, and with fewer batches on average than the batched baselines "
        "(PhaElimD, rs-OFUL) on every instance, on at least 3 of the 4 members of the eps/d family; LinUCB and "
        "LinTS use T batches",
        experiment=end_of_optimism_regret,
        check=lambda m: m["e4_at_most_three_batch_frac"] >= 0.9
        and m["e4_batches_over_fewest_batched_baseline"] < 1.0 - TIE,
        paper="batch plots: E4 uses 3 batches; PhaElimD 3-4, rs-OFUL ~100, EndOA/IDS ~T; abstract: E4 beats the "
              "baselines in batch count",
        oracle=OPTIMAL_ARM, family=EOO_INSTANCES,
    ),
    Claim(
        "On the largest random instance run (K=50, d=20 by default), T=5e4, arms shuffled per seed, E4's regret is "
        "below every baseline's (PhaElimD, rs-OFUL, EndOA), on at least 2 of 3 instance draws; the official "
        "index-order protocol is reported beside it",
        experiment=random_regret,
        check=_random_beats_best_baseline,
        paper="Fig. (random K=50, d=20): E4 ~1.5k, EndOA ~9.7k, PhaElimD ~16.4k, rs-OFUL >17.5k",
        oracle=OPTIMAL_ARM, family=RANDOM_50_20,
    ),
    Claim(
        "On the End of Optimism instance with the smallest d and eps run (d=2, eps=0.01 by default), E4's regret / "
        "log T grows by at most 1.25x from T=1e5 to 1e6 (asymptotic optimality) with at most 4 + log2 log T "
        "batches, on at least 2 of the 3 members of the eps/d family",
        experiment=regret_vs_horizon,
        check=_eoo_e4_asymptotic,
        paper="Theorem (asymptotic optimality with 3 batches as T -> inf; O(log log T) batches)",
        oracle=OPTIMAL_ARM, family=EOO_HORIZON,
    ),
    Claim(
        "On the largest random instance run (K=20, d=10 by default, arms shuffled), E4's regret / log T grows by at "
        "most 1.25x between the two largest T (1e5, 1e6) with at most 4 + log2 log T batches, and E4's regret at "
        "the largest T is below PhaElimD's, on at least 2 of 3 instance draws",
        experiment=regret_vs_horizon,
        check=_random_e4_asymptotic,
        paper="Theorem (asymptotic optimality); issue 25: E4 307.7k vs PhaElimD 65.4k at T=1e6 with gamma=10",
        oracle=OPTIMAL_ARM, family=RANDOM_20_10,
    ),
    Claim(
        "Minimax rate, 3 batches: with the official gamma = 10, E4's stopping test passes (it commits after batch 2, "
        "3 batches in all) in at least 90% of runs at the largest T (1e7) on the official random instance recipe "
        "(the largest run: K=20, d=10 by default), on at least 2 of 3 instance draws",
        experiment=stopping_vs_horizon,
        check=_official_gamma_commits,
        paper="Theorem (asymptotically optimal regret with only 3 batches as T -> inf); the paper's experiments stop "
              "at T = 1e5",
        oracle=OPTIMAL_ARM, family=RANDOM_STOPPING,
    ),
    Claim(
        "O(log T)-batch rate (our reading, T_l = 4^l d log(K T^2)): on the largest random instance run (K=20, d=10 "
        "by default), E4 with it uses at most log2 T batches at the largest T (1e6) and its regret there is below "
        "PhaElimD's, on at least 2 of 3 instance draws",
        experiment=regret_vs_horizon,
        check=lambda m: _random_batches_within(m, "e4-instance", "log2_largest_T")
        and _random_e4_under_phaelimd(m, "e4-instance"),
        paper="Theorem (instance-dependent regret with O(log T) batches, minimax and asymptotic optimality kept)",
        null=PHAELIMD_IN_E4_SLOT, oracle=OPTIMAL_ARM, family=RANDOM_20_10,
    ),
]

REGIMES = [
    Regime("The smallest T (of 2e4, 1e5, 1e6, 1e7) at which E4's stopping test passes in at least half the runs on "
           "random K=20, d=10 (0: at none), gamma = 1 and the official 10, official and per-seed instances",
           experiment=stopping_vs_horizon,
           metrics=[labelled("first_pass_T", instance="random", K=20, d=10, alg=alg, generator=generator)
                    for alg in ("e4", "e4-gamma10") for generator in ("official", "per_seed")],
           paper="Theorem: 3 batches as T -> inf; the paper's random experiments run T = 5e4"),
    Regime("On the End of Optimism instance the claims read (smallest d and eps run; d=2, eps=0.01, T=1e4 by "
           "default): E4's regret and batches beside the fully sequential LinUCB's and LinTS's (one pull per batch, "
           "T batches) and the batched baselines' and EndOA's; the claims compare E4 with the latter only",
           experiment=end_of_optimism_regret,
           metrics=[labelled("headline_regret", alg=alg) for alg in ("e4", "linucb", "lints", "phaelimd", "rs-oful",
                                                                      "endoa")]
           + [labelled("headline_batches", alg=alg) for alg in ("e4", "linucb", "lints")],
           paper="Fig. (End of Optimism d=2, eps=0.01): E4 ~155, IDS ~155 (sequential); issue #56: LinUCB 45.6, "
                 "LinTS 16.1, E4 186"),
]
