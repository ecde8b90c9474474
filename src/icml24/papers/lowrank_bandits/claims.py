"""lowrank-bandits claims and regimes, with the instance families they speak of and their oracles (what a perfect
method gives in the method's slot: the true value, the optimal arms, zero regret)."""

from __future__ import annotations

from icml24.core import Claim, Family, Oracle, Regime

from .experiments import (
    best_policy,
    pe_error_distribution,
    policy_evaluation,
    regret,
    sample_complexity,
    size_sweep,
)

# A gain counts only beyond this relative tolerance: the compared numbers (slopes of log errors, sums of ~1e4 regrets,
# ratios of fitted sample counts) move by ~1e-13 relative under one rounding, and a tie (the null in the slot) is exact.
TIE = 1e-9

TRUE_VALUE = Oracle("the true value of the target policy (zero PE error) in RS-PE's slot", {"rspe_slot": "oracle"})
OPTIMAL_ARMS = Oracle("the optimal arm of every context in RS-BPI's slot", {"rsbpi_slot": "oracle"})
OPTIMAL_PLAY = Oracle("the optimal arm every round (zero pseudo-regret) in RS-RMIN's slot", {"rsrmin_slot": "oracle"})

# Issue #56: on the official matrix RS-PE's gain over IPS is ~20x (21.7x mean, 23.4x median at 30 x 80, r = 3;
# 23.7x at r = 5), on the incoherent unit-scale Gaussian matrix 2.35x / 3.54x. The official matrix is spiky (two
# entries of ~600 carry IPS's variance); the Gaussian one is incoherent with entries ~ N(0, 1) against unit noise.
# cheap (measured once, CPU s per quick seed x seeds, the members beyond {}): policy_evaluation (2.4 + 0.6 + 0.4) x 8,
# pe_error_distribution 0.9 + 0.9 + 0.6, best_policy (0.3 + 0.5 + 0.3) x 8, size_sweep (0.4 + 0.5) x 8,
# sample_complexity (0.5 + 0.4) x 6: ~50 s together; regret's members ((15.6 + 9.7) x 2) run with --family only.
OFFICIAL_AND_GAUSSIAN = Family(
    "the reward matrix: the official spiky one at 50 x 50 r = 2, 30 x 80 r = 3, 50 x 50 r = 5, and the incoherent "
    "Gaussian one (50 x 50, r = 2, entries ~ N(0, 1), unit noise)",
    members={"official 50x50 r=2": {}, "official 30x80 r=3": {"m": 30, "n": 80, "rank": 3},
             "official 50x50 r=5": {"rank": 5}, "gaussian 50x50 r=2": {"instance": "gaussian"}},
    share=0.75, cheap=True,
)
RANK_ONE = Family(
    "the rank-1 matrix, m = n: all ones (the paper's), an incoherent Gaussian one, the spiky official one (redrawn "
    "per seed and size)",
    members={"all ones": {}, "gaussian": {"instance": "gaussian"}, "official (spiky)": {"instance": "official"}},
    share=2 / 3, cheap=True,
)
INCOHERENT = Family(
    "incoherent Gaussian matrices (50 x 50) over rank and signal-to-noise: r = 2 and 3 at unit scale, r = 2 at "
    "scale 0.5",
    members={"gaussian r=2 scale 1": {}, "gaussian r=3 scale 1": {"rank": 3}, "gaussian r=2 scale 0.5": {"scale": 0.5}},
    share=2 / 3,
)


def _below(value: float, other: float) -> bool:
    """``value`` is below ``other`` by more than rounding (relative TIE)."""
    return value < other - TIE * abs(other)


CLAIMS = [
    Claim(
        "RS-PE's MEAN policy-evaluation error over seeds (the statistic the paper's figure plots) is at least 10x "
        "below IPS's for T >= 8k, leak-free (RS-PE at T sees only T samples), on at least 3 of the 4 matrices: the "
        "paper's claim is for its official spiky matrix (three shapes and ranks); on the incoherent Gaussian one "
        "the gain is smaller (issue #56: 2.35x), which the fourth member reports",
        experiment=policy_evaluation,
        check=lambda m: m["min_ips_over_rspe_T8k_plus"] >= 10.0,
        paper="Fig. (RS-PE vs SIPS vs IPS; official plot: np.mean + t-interval); official code: IPS 6.4 vs RS-PE "
              "0.15 at T = 8k",
        oracle=TRUE_VALUE, family=OFFICIAL_AND_GAUSSIAN,
    ),
    Claim(
        "Per repetition, RS-PE's error is below IPS's in at least 80% of repetitions at the largest T (8k), and "
        "its MEDIAN error is at least 10x below IPS's median there, on at least 3 of the 4 matrices (the official "
        "spiky one at three shapes and ranks; the incoherent Gaussian one is the fourth)",
        experiment=pe_error_distribution,
        check=lambda m: m["rspe_beats_ips_frac_largest_T"] >= 0.8
        and m["ips_error_largest_T_median"] >= 10.0 * m["rspe_error_largest_T_median"],
        paper="Fig. (RS-PE vs IPS), read per repetition instead of through the heavy-tailed mean",
        oracle=TRUE_VALUE, family=OFFICIAL_AND_GAUSSIAN,
    ),
    Claim(
        "PE error vs size: IPS grows with m + n faster than RS-PE, and RS-PE is at least 2x better at the largest "
        "size (160), on at least 2 of the 3 rank-1 matrices (all ones, Gaussian, official)",
        experiment=size_sweep,
        check=lambda m: m["ips_slope_vs_size"] - m["rspe_slope_vs_size"] > TIE and m["ips_over_rspe_largest"] >= 2.0,
        paper="size figure; our rerun of the official code at size 160: IPS 0.143 vs RS-PE 0.064",
        oracle=TRUE_VALUE, family=RANK_ONE,
    ),
    Claim(
        "RS-BPI's policy is within 0.1 of the optimal value at T = 8k and no worse than SBPI, on at least 3 of the "
        "4 matrices (the official spiky one at three shapes and ranks, the incoherent Gaussian one)",
        experiment=best_policy,
        check=lambda m: m["rsbpi_gap_T8000"] <= 0.1 and m["rsbpi_gap_T8000"] <= m["sbpi_gap_T8000"],
        paper="BPI figure; our rerun at T = 8k: best 39.63, RS-BPI 39.61, SBPI 38.44, Benchmark 38.33",
        oracle=OPTIMAL_ARMS, family=OFFICIAL_AND_GAUSSIAN,
    ),
    Claim(
        "RS-RMIN's regret grows no faster than sqrt(T) (log-log slope at most 0.65; the bound is an upper one, and "
        "the oracle's zero regret has slope 0) and is below LinUCB on one-hot features, per-pair UCB and the "
        "ESTR-style low-rank baseline at the largest T, on at least 2 of the 3 incoherent Gaussian matrices; the "
        "official spiky matrix is out of scope (uniform exploration misses its two spikes, and the bound assumes "
        "incoherence)",
        experiment=regret,
        check=lambda m: m["rsrmin_slope"] <= 0.65
        and _below(m["rsrmin_regret_last"], m["linucb_regret_last"])
        and _below(m["rsrmin_regret_last"], m["pairucb_regret_last"])
        and _below(m["rsrmin_regret_last"], m["estr_regret_last"]),
        paper="regret bound r^{5/4}(m+n)^{3/4} sqrt(T) (ICML abstract); no regret experiment in the official code",
        oracle=OPTIMAL_PLAY, family=INCOHERENT,
    ),
    Claim(
        "The samples RS-PE needs for a fixed PE accuracy grow at most linearly in m + n (log-log slope at most 1.3; "
        "the bound (m + n)/eps^2 is an upper one) and are fewer than IPS needs at the largest size, on at least 2 "
        "of the 3 rank-1 matrices (all ones, Gaussian, official)",
        experiment=sample_complexity,
        check=lambda m: m["sample_complexity_slope"] <= 1.3 and m["ips_over_rspe_samples_largest"] > 1.0 + TIE,
        paper="sample complexity (m + n)/epsilon^2 log(1/delta) (abstract); RS-PE's error far below IPS's (PE figures)",
        oracle=TRUE_VALUE, family=RANK_ONE,
    ),
]

REGIMES = [
    Regime("IPS's sample-complexity slope beside RS-PE's (IPS also needs about n/eps^2 samples for a deterministic "
           "target under uniform behaviour, so the slope alone does not tell RS-PE from IPS)",
           experiment=sample_complexity, metrics=["sample_complexity_slope", "ips_sample_complexity_slope"],
           paper="bound (m + n)/epsilon^2 (abstract)"),
    Regime("Signal-to-noise of the instance (root-mean-square entry over the noise std) beside the PE gain",
           experiment=policy_evaluation, metrics=["snr", "min_ips_over_rspe_T8k_plus", "median_ips_over_rspe_T8k_plus"],
           paper="pitfall: the official matrix's high SNR flatters the spectral methods; report the SNR"),
]
