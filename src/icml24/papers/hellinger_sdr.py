"""Enhancing Sufficient Dimension Reduction via Hellinger Correlation (Hong, Kim & Song, ICML 2024)."""

from __future__ import annotations

import time

import numpy as np

from icml24.core import Claim, Null, Paper, experiment
from icml24.sdr import (
    INITIALIZERS,
    MODELS,
    HellingerSDR,
    ProjectionObjective,
    hellinger_from_bhattacharyya,
    make_initializer,
    signal_to_noise,
    single_index_data,
    subspace_distance,
)

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
        "Quick setting (20 replicates): sparse beta only, SIR/SAVE/DR alone, DR refined on all four models and SIR "
        "on the quadratic one, because each refinement keeps the official optimizer budget (about 1.5 s) and the "
        "full grid's 40 refinements per replicate (100 replicates, both betas, all five initializers) do not fit "
        "3 minutes.",
        "MAVE is the mean-subspace MAVE of Xia et al. (2002) started from OPG, bandwidth 2.34 n^(-1/(k+4)); the "
        "official code calls the R MAVE package's default method (csOPG).",
        "DCOV-SDR maximizes dCov with scipy's SLSQP (analytic gradient) from the best of 200 random unit vectors "
        "where the official code uses donlp2.",
        "The HSIC and BCOV initializers are not implemented.",
        "Nelder-Mead is scipy's, started from R's initial simplex and stopped by R's rule; annealing follows R's "
        "SANN schedule with numpy random numbers, so no run repeats R's random path.",
        "SIR/SAVE slice as the dr package's default (max(8, p + 3) balanced slices) and DR as the official drr "
        "(ceil(log n) slices) without its 1e-5 jitter; R is not installed here, so our initializers are checked "
        "against naive reference implementations, not against dr/MAVE.",
        "The paper's tables were not available to us: the claims check its qualitative statements.",
    ],
)


def _error(direction: np.ndarray, beta: np.ndarray) -> float:
    return subspace_distance(direction, beta)


def _plot(ctx, X, y, beta, directions: dict[str, np.ndarray], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(directions) + 1, figsize=(3.2 * (len(directions) + 1), 3), sharey=True)
    for ax, (label, direction) in zip(axes, [("true beta", beta), *directions.items()]):
        ax.scatter(X @ (direction / np.linalg.norm(direction)), y, s=4, alpha=0.6)
        ax.set_title(f"{label}: err {_error(direction, beta):.2f}", fontsize=9)
        ax.set_xlabel("projection")
    axes[0].set_ylabel("y")
    fig.suptitle(title, fontsize=10, y=1.04)
    ctx.figure("quadratic_projections", fig)


NO_REFINEMENT = Null("no refinement: the initializer's own direction in the refined slot", {"refiner": "none"},
                     cheap=True)
RANDOM_DIRECTION = Null("a uniformly random unit direction in the refined slot (no data used)", {"refiner": "random"},
                        cheap=True)


@experiment(
    PAPER,
    null=NO_REFINEMENT,
    quick={"betas": ["sparse"], "initializers": ["sir", "save", "dr"], "refine": ["dr"],
           "refine_quadratic": ["sir"], "seeds": 20},
    full={"betas": ["sparse", "dense"], "initializers": ["sir", "save", "dr", "mave", "dcov"],
          "refine": ["sir", "save", "dr", "mave", "dcov"], "refine_quadratic": [], "seeds": 100},
    smoke={"betas": ["sparse"], "initializers": ["sir", "dr"], "refine": ["dr"], "refine_quadratic": ["sir"],
           "n": 150, "sa_maxiter": 300, "nm_maxfev": 300},
    threads=1,
)
def single_index(ctx, models: list[str] = MODELS, betas: list[str] = ("sparse",),
                 initializers: list[str] = ("sir", "save", "dr"), refine: list[str] = ("dr",),
                 refine_quadratic: list[str] = ("sir",), n: int = 400, noise: float = 0.2, sa_maxiter: int = 20_000,
                 nm_maxfev: int = 10_000, normalize_sparse: bool = False, refiner: str = "hc") -> dict[str, float]:
    """One replicate: every model x beta, each initializer alone, and HC-refined where asked (``refine``: on
    every model; ``refine_quadratic``: on the quadratic model too); error = sin of the angle to beta.

    Keys: ``<beta>_<model>_<init>`` (alone), ``..._hc`` (refined), ``..._hc_B_gap`` (the refined objective B
    minus B at the true beta: negative means the optimizer found a direction the estimator prefers to the
    truth, so the remaining error is statistical, not an optimization failure). Regime: ``<beta>_<model>_snr``
    (Var f / Var eps) and ``<beta>_<model>_true_eta`` (the estimated Hellinger correlation at the true beta).

    ``refiner`` fills the refined slot: "hc" (the method), or the nulls "none" (the initializer's own direction,
    no refinement) and "random" (a uniformly random unit direction, no data used); keys stay ``..._hc``.
    """
    if refiner not in ("hc", "none", "random"):
        raise ValueError(f"refiner must be 'hc', 'none' or 'random', got {refiner!r}")
    unknown = sorted(set(initializers) - set(INITIALIZERS)) + sorted((set(refine) | set(refine_quadratic))
                                                                     - set(initializers))
    if unknown:
        raise ValueError(f"initializers must be among {', '.join(INITIALIZERS)}, refined ones among the initializers; "
                         f"got {unknown}")
    metrics: dict[str, float] = {"n_over_p": n / 10.0}
    seconds, refinements = 0.0, 0
    for kind in betas:
        if kind not in ("sparse", "dense"):
            raise ValueError(f"betas must be 'sparse' or 'dense', got {kind!r}")
        for model in models:
            X, y, beta = single_index_data(model, ctx.rng("data", kind, model), n=n, sparse=kind == "sparse",
                                           noise=noise, normalize_sparse=normalize_sparse)
            tag = f"{kind}_{model}"
            true_b = ProjectionObjective(X, y)(beta / np.linalg.norm(beta))
            metrics[f"{tag}_snr"] = signal_to_noise(model, kind == "sparse", noise, normalize_sparse)
            metrics[f"{tag}_true_eta"] = hellinger_from_bhattacharyya(true_b)
            shown = {}
            for name in initializers:
                init = make_initializer(name, random_state=ctx.child_seed("init", kind, model, name)).fit(X, y)
                metrics[f"{tag}_{name}"] = _error(init.directions_, beta)
                shown[name.upper()] = init.directions_[:, 0]
                if name not in refine and not (model == "quadratic" and name in refine_quadratic):
                    continue
                if refiner == "hc":
                    start = time.perf_counter()
                    refined = HellingerSDR(init=init.directions_[:, 0], sa_maxiter=sa_maxiter, nm_maxfev=nm_maxfev,
                                           random_state=ctx.child_seed("hc", kind, model, name)).fit(X, y)
                    seconds += time.perf_counter() - start
                    refinements += 1
                    estimate, b_value = refined.directions_, refined.bhattacharyya_
                else:  # a null in the refined slot
                    direction = (init.directions_[:, 0] if refiner == "none"
                                 else ctx.rng("random-direction", kind, model, name).standard_normal(X.shape[1]))
                    estimate = (direction / np.linalg.norm(direction))[:, None]
                    b_value = ProjectionObjective(X, y)(estimate[:, 0])
                metrics[f"{tag}_{name}_hc"] = _error(estimate, beta)
                metrics[f"{tag}_{name}_hc_B_gap"] = b_value - true_b
                shown[f"HC-{name.upper()}" if refiner == "hc" else f"{refiner}-{name.upper()}"] = estimate[:, 0]
            if model == "quadratic" and kind == betas[0]:
                _plot(ctx, X, y, beta, shown, f"{kind} quadratic model, replicate {ctx.seed}")
    ctx.artifact("timing", {"refinements": refinements, "seconds_per_refinement": seconds / max(refinements, 1)})
    return metrics


@single_index.summarizer
def _single_index_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Across replicates: models where refinement lowers DR's mean error, the worst mean increase, win rates."""
    means = {key: float(np.mean([m[key] for m in per_seed])) for key in per_seed[0]}
    pairs = [key[:-3] for key in means if key.endswith("_hc")]
    out: dict[str, float] = {}
    if pairs:
        out["max_mean_error_increase"] = max(means[f"{key}_hc"] - means[key] for key in pairs)
    for kind in ("sparse", "dense"):
        dr = [key for key in pairs if key.startswith(f"{kind}_") and key.endswith("_dr")]
        if dr:
            out[f"dr_models_improved_{kind}"] = float(sum(means[f"{key}_hc"] < means[key] for key in dr))
    for name in {key.rsplit("_", 1)[1] for key in pairs}:
        wins = [m[f"{key}_hc"] < m[key] for m in per_seed for key in pairs if key.endswith(f"_{name}")]
        out[f"{name}_refined_win_fraction"] = float(np.mean(wins))
    return out


def _linear_keys(m) -> list[str]:
    """The linear model's error keys present (alone and refined), whatever initializers ran."""
    return [key for name in INITIALIZERS for key in (f"sparse_linear_{name}", f"sparse_linear_{name}_hc") if key in m]


CLAIMS = [
    Claim(
        "HC refinement lowers the mean error of the directional-regression initializer in at least 3 of the 4 "
        "models (sparse beta) and never raises any initializer's mean error by more than 0.02",
        experiment=single_index,
        check=lambda m: m["dr_models_improved_sparse"] >= 3 and m["max_mean_error_increase"] <= 0.02,
        paper="Tables of the simulation study: HC-SDR improves SIR, SAVE, DR, MAVE, DCOV, HSIC and BCOV "
              "(qualitative; numbers not extracted)",
    ),
    Claim(
        "SIR fails on the symmetric quadratic model (mean error >= 0.7) and its HC-refined version recovers the "
        "direction (mean error <= 0.4)",
        experiment=single_index,
        check=lambda m: m["sparse_quadratic_sir"] >= 0.7 and m["sparse_quadratic_sir_hc"] <= 0.4,
        paper="SIR is blind to y = (beta^T X)^2; the refinement maximizes a dependence measure that is not",
    ),
    Claim(
        "On the linear model every initializer, alone and refined, has mean error <= 0.2 (sparse beta)",
        experiment=single_index,
        check=lambda m: max(m[key] for key in _linear_keys(m)) <= 0.2, null=RANDOM_DIRECTION,
        paper="spec pre-study target: all methods recover a linear index",
    ),
]
