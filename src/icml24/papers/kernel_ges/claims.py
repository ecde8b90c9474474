"""kernel-ges claims and regimes: what the learned kernel is said to beat, read from the experiments' metrics."""

from __future__ import annotations

from icml24.core import Claim, Regime

from .experiments import mixed, synthetic

TIE = 1e-9  # F1 gaps closer than this are equal (means of a few F1 values in steps of 1/6 or 1/9)

# Runtime is a reported metric (seconds per search of every method, cv_over_mi_time), not a claim: the paper makes no
# speed claim; issue 21 asks for runtime to be reported against causal-learn's CV score.
CLAIMS = [
    Claim(
        "The learned-kernel score's mean skeleton F1 is >= the best median-heuristic baseline's + 0.05 (our own "
        "pre-study target, not the paper's number; best of causal-learn CV, causal-learn marginal, our median-width "
        "score), and its normalised SHD is no worse",
        experiment=synthetic,
        check=lambda m: m["mi_f1_gap"] >= 0.05 and m["mi_shd_gap"] <= 0.0,
        paper="Tables 1-2 / TL;DR: the learned kernel beats the median-heuristic generalized scores",
    ),
    Claim(
        "On the densest graphs the learned score's F1 beats the best median-heuristic baseline's, by more than its "
        "gap on the sparsest graphs",
        experiment=synthetic,
        # equal gaps (a difference at rounding, 1e-16 at quick) are no advantage "especially on dense graphs"
        check=lambda m: m["dense_mi_f1_gap"] > 0.0 and m["dense_minus_sparse_gap"] > TIE,
        paper="TL;DR: the learned kernel beats the median-heuristic scores, especially on dense graphs",
    ),
]

REGIMES = [
    Regime("Normalised SHD of the empty graph (no search) beside the learned score's and the best baseline's",
           experiment=synthetic, metrics=["empty_shd", "mi_shd", "best_baseline_shd"],
           paper="issue #36: with the old data-fit term the empty graph scored 0.23, the learned score 0.22"),
    Regime("The median-width baseline at full strength: its skeleton F1 and SHD (non-empty graphs on data with "
           "signal) beside the empty graph's SHD",
           experiment=synthetic, metrics=["median_f1", "median_shd", "empty_shd"],
           paper="issue #36: with the old data-fit term the median widths returned empty graphs"),
    Regime("Mixed data (half the columns binned, official Part2Discrete): skeleton F1 of the learned score, "
           "causal-learn's marginal-score GES and the median widths, and the learned-minus-marginal difference",
           experiment=mixed, metrics=["mi_f1", "cl_marginal_f1", "median_f1", "mi_minus_cl_marginal_f1", "mi_shd",
                                      "cl_marginal_shd", "empty_shd"],
           paper="the paper's discrete/mixed experiments; issue #36 acceptance: learned >= causal-learn marginal"),
]
