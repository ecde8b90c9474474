"""kernel-ges claims and regimes: what the learned kernel is said to beat, read from the experiments' metrics."""

from __future__ import annotations

from icml24.core import Claim, Family, Regime

from .experiments import mixed, synthetic

# F1 and normalised-SHD gaps closer than this are equal: they are differences of means of a few values in steps of
# 1/6 or 1/9 (F1) and 1/(d (d - 1)) (SHD), so a real gap is >= 1e-3 at every setting, while rounding leaves 1e-16
TIE = 1e-9

# The paper's data types (official main.py --data_type con / mix / dis): its claims are about the learned kernel on
# its benchmark, not on one variant of it. The mixed member at full is issue #56's case (6 variables, n = 300, the
# scores told which columns are binned: every child width starts at 0.01 as the official mixed path does). The
# share is fixed before measuring: 2 of 3 at quick, 2 of 3 at full.
DATA_TYPES = Family(
    "the paper's data types: continuous, mixed (half the columns in 20 bins), discrete (every column binned)",
    members={"continuous": {}, "mixed": {"variant": "mixed"}, "discrete": {"variant": "discrete"}},
    share=2 / 3,
)
ON_THE_FAMILY = " (on at least 2 of the 3 data types: continuous, mixed, discrete)"

# Runtime is a reported metric (seconds per search of every method, cv_over_mi_time), not a claim: the paper makes no
# speed claim; issue 21 asks for runtime to be reported against causal-learn's CV score.
CLAIMS = [
    Claim(
        "The learned-kernel score's mean skeleton F1 is >= the best median-heuristic baseline's + 0.05 (our own "
        "pre-study target, not the paper's number; best of causal-learn CV, causal-learn marginal, our median-width "
        "score), and its normalised SHD is no worse" + ON_THE_FAMILY,
        experiment=synthetic,
        check=lambda m: m["mi_f1_gap"] >= 0.05 and m["mi_shd_gap"] <= TIE,  # a rounding-sized SHD excess is a tie
        paper="Tables 1-2 / TL;DR: the learned kernel beats the median-heuristic generalized scores",
        family=DATA_TYPES,
    ),
    Claim(
        "On the densest graphs the learned score's F1 beats the best median-heuristic baseline's, and there it closes "
        "at least as large a share of that baseline's shortfall from F1 = 1 as on the sparsest graphs"
        + ON_THE_FAMILY,
        experiment=synthetic,
        # The share, not the raw gap: a perfect search's raw gap is the baseline's shortfall, which at smoke is larger
        # on sparse graphs (the true CPDAG failed "the dense gap exceeds the sparse gap", #56); a share within TIE of
        # the sparse one is as large (the oracle's are both 1), a dense gap within TIE of 0 is no advantage.
        check=lambda m: m["dense_mi_f1_gap"] > TIE and m["dense_minus_sparse_share"] >= -TIE,
        paper="TL;DR: the learned kernel beats the median-heuristic scores, especially on dense graphs",
        family=DATA_TYPES,
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
