"""hellinger-sdr claims: what HC refinement is said to do to each initializer, over a family of single-index models."""

from __future__ import annotations

from icml24.core import Claim, Family

from .experiments import MIN_GAIN, _error_key, single_index

SIR_QUADRATIC = {"beta": "sparse", "design": "gaussian", "init": "sir", "model": "quadratic"}

# The claims speak of the paper's single-index models, not of one parametrisation of them: besides the official
# instance (sparse beta unnormalized, eps sd 0.2, p = 10), a unit-length sparse beta (Var(beta^T X) = 1: a
# signal-to-noise ratio 2 to 5 times lower) and p = 20 (10 inert covariates beside the official ones); at full also a
# noisier one (eps sd 0.5). The share is fixed before measuring: two thirds of the members (2 of 3 at quick, 3 of 4
# at full).
MODELS_FAMILY = Family(
    "single-index instances: official; unit-length sparse beta; p = 20 (10 inert covariates); full: eps sd 0.5",
    members={"official (sparse beta, sd 0.2, p = 10)": {}, "unit-length sparse beta": {"normalize_sparse": True},
             "p = 20": {"dimension": 20}},
    full={"official (sparse beta, sd 0.2, p = 10)": {}, "unit-length sparse beta": {"normalize_sparse": True},
          "p = 20": {"dimension": 20}, "eps sd 0.5": {"noise": 0.5}},
    share=2 / 3,
)
ON_THE_FAMILY = " (on at least two thirds of the family's instances: 2 of 3 at quick, 3 of 4 at full)"

CLAIMS = [
    Claim(
        "HC refinement lowers the mean error of the directional-regression initializer in at least 3 of the 4 "
        "models (sparse beta) and never raises any initializer's mean error by more than 0.02" + ON_THE_FAMILY,
        experiment=single_index,
        check=lambda m: m["dr_models_improved_sparse"] >= 3 and m["max_mean_error_increase"] <= 0.02,
        paper="Tables of the simulation study: HC-SDR improves SIR, SAVE, DR, MAVE, DCOV, HSIC and BCOV "
              "(qualitative; numbers not extracted)",
        family=MODELS_FAMILY,
    ),
    Claim(
        "SIR fails on the symmetric quadratic model (mean error >= 0.7) and its HC-refined version recovers the "
        "direction (mean error <= 0.4)" + ON_THE_FAMILY,
        experiment=single_index,
        check=lambda m: m[_error_key(False, **SIR_QUADRATIC)] >= 0.7 and m[_error_key(True, **SIR_QUADRATIC)] <= 0.4,
        paper="SIR is blind to y = (beta^T X)^2; the refinement maximizes a dependence measure that is not",
        family=MODELS_FAMILY,
    ),
    Claim(
        "Heavy-tailed design (i.i.d. t(3) covariates): HC refinement lowers the mean error of DR and of MAVE in at "
        "least 3 of the 4 models each, and DR's error averaged over the models falls by more than 2 standard errors"
        + ON_THE_FAMILY,
        experiment=single_index,
        # a gain counts beyond 2 standard errors of the mean over replicates, and never below MIN_GAIN (rounding)
        # (a run without the t3 design has no t3 metrics: the verdict is then an error naming them, never "fails")
        check=lambda m: (m["t3_dr_models_improved"] >= 3 and m["t3_mave_models_improved"] >= 3
                         and m["t3_dr_mean_gain"] > max(2 * m["t3_dr_mean_gain_se"], MIN_GAIN)),
        paper="Simulation study, heavy-tailed settings: the refinement helps most where moment-based SDR "
              "methods' linearity conditions fail (qualitative; numbers not extracted)",
        family=MODELS_FAMILY,
    ),
]

REGIMES: list = []
