"""Enhancing Sufficient Dimension Reduction via Hellinger Correlation (Hong, Kim & Song, ICML 2024).

For a single-index model y = f(beta^T X) + eps the direction beta maximizes the Hellinger correlation between
beta^T X and y; HC-SDR estimates it by a nearest-neighbour Bhattacharyya statistic and refines the direction of an
existing SDR method (SIR, SAVE, DR, MAVE, DCOV) by simulated annealing then Nelder-Mead, on the paper's four
single-index models.
"""

from icml24.core import Paper

PAPER = Paper(
    slug="hellinger-sdr",
    title="Enhancing Sufficient Dimension Reduction via Hellinger Correlation",
    authors="Seungbeom Hong, Ilmun Kim, Jun Song",
    venue="ICML 2024",
    code="https://github.com/JSongLab/SDR_HC",
    summary=(
        "For a single-index model y = f(beta^T X) + eps, the direction beta maximizes the Hellinger correlation "
        "between beta^T X and y over the unit sphere. HC-SDR estimates it by the nearest-neighbour Bhattacharyya "
        "statistic on the rank scale and refines the direction of an existing SDR method (SIR, SAVE, directional "
        "regression, MAVE, distance covariance) by simulated annealing then Nelder-Mead in spherical "
        "coordinates. We simulate the paper's four models (linear, quadratic, exponential, sine; n = 400, "
        "p = 10, sparse and dense beta) and compare each initializer's error (sine of the angle to beta) alone "
        "and refined."
    ),
    deviations=[
        "Quick setting (5 replicates, set by cost; full: 100): sparse beta only; every initializer (SIR, SAVE, DR, "
        "MAVE, DCOV) alone and refined on the Gaussian design, DR and MAVE refined on the heavy-tailed one, since "
        "each refinement keeps the official optimizer budget (about 1.5 s).",
        "The heavy-tailed design (independent Student-t(3) covariates scaled to unit variance, the four links) is our "
        "reading of the paper's heavy-tailed settings, which the official scripts do not contain.",
        "The p = 20 family member appends 10 inert covariates (the same design, zero in beta) to the official 10; the "
        "official scripts run p = 10 only, so the claims' other dimension is our construction.",
        "The linear-model sanity bound (every method <= 0.2) is a property test, not a claim: the paper's number "
        "for it was not available to us.",
        "MAVE is the mean-subspace MAVE of Xia et al. (2002) started from OPG, bandwidth 2.34 n^(-1/(k+4)); the "
        "official code calls the R MAVE package's default method (csOPG).",
        "DCOV-SDR maximizes dCov with scipy's SLSQP (analytic gradient) from the best of 200 random unit vectors "
        "where the official code uses donlp2.",
        "The HSIC and BCOV initializers are not implemented.",
        "Nelder-Mead is scipy's, started from R's initial simplex and stopped by R's rule; annealing follows R's "
        "SANN schedule with numpy random numbers, so no run repeats R's random path.",
        "SIR/SAVE take the dr package's number of slices (max(8, p + 3)) but balanced sizes, where dr cuts "
        "slices of floor(n / h) while more than 2 responses remain (14 slices at n = 400, p = 10 where we make 13), "
        "and SAVE does not apply dr's slice-covariance factor (n_h - 1) / n_h * n / (n - 1); the parity fixture "
        "(recorded through R) measures the gap to dr's first direction, sine 0.021 (SIR) and 0.086 (SAVE), and "
        "rebuilds dr's directions from our slice moments to rounding.",
        "DR is the official drr (ceil(log n) slices) without its 1e-5 jitter and 7-decimal rounding of the "
        "covariance (within 3.9e-6 of it in the parity fixture).",
        "Nelder-Mead's gain over the annealed start is larger than R's nmmin (median 0.0129 vs 0.0068 on the "
        "parity data): R contracts after any reflection that is not a new best and stops when a shrink fails.",
        "The paper's tables were not available to us: the claims check its qualitative statements.",
    ],
)

from . import claims, experiments  # noqa: E402  (experiments register on PAPER, then the claims on them)
from .claims import CLAIMS, REGIMES  # noqa: E402

__all__ = ["PAPER", "CLAIMS", "REGIMES", "claims", "experiments"]
