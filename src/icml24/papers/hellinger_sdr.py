"""Enhancing Sufficient Dimension Reduction via Hellinger Correlation (Hong, Kim & Song, ICML 2024)."""

from __future__ import annotations

import time

import numpy as np

from icml24.core import Claim, Null, Paper, experiment, labelled, select
from icml24.sdr import (
    DESIGNS,
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
        "Quick setting (10 replicates): sparse beta only; every initializer (SIR, SAVE, DR, MAVE, DCOV) alone and "
        "refined on the Gaussian design, DR and MAVE refined on the heavy-tailed one, since each refinement keeps "
        "the official optimizer budget (about 1.5 s).",
        "The heavy-tailed design (independent Student-t(3) covariates scaled to unit variance, the four links) is our "
        "reading of the paper's heavy-tailed settings, which the official scripts do not contain.",
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


@experiment(
    PAPER,
    null=NO_REFINEMENT,
    quick={"betas": ["sparse"], "initializers": ["sir", "save", "dr", "mave", "dcov"],
           "refine": ["sir", "save", "dr", "mave", "dcov"], "refine_quadratic": [], "designs": ["gaussian", "t3"],
           "refine_heavy": ["dr", "mave"], "seeds": 10},
    full={"betas": ["sparse", "dense"], "initializers": ["sir", "save", "dr", "mave", "dcov"],
          "refine": ["sir", "save", "dr", "mave", "dcov"], "refine_quadratic": [], "designs": ["gaussian", "t3"],
          "refine_heavy": ["sir", "save", "dr", "mave", "dcov"], "seeds": 100},
    smoke={"betas": ["sparse"], "initializers": ["sir", "dr", "mave"], "refine": ["dr"], "refine_quadratic": ["sir"],
           "designs": ["gaussian", "t3"], "refine_heavy": ["dr", "mave"], "n": 150, "sa_maxiter": 300,
           "nm_maxfev": 300},
    threads=1,
)
def single_index(ctx, models: list[str] = MODELS, betas: list[str] = ("sparse",),
                 initializers: list[str] = ("sir", "save", "dr"), refine: list[str] = ("dr",),
                 refine_quadratic: list[str] = ("sir",), n: int = 400, noise: float = 0.2, sa_maxiter: int = 20_000,
                 nm_maxfev: int = 10_000, normalize_sparse: bool = False, refiner: str = "hc",
                 designs: list[str] = ("gaussian",), refine_heavy: list[str] = ("dr",)) -> dict[str, float]:
    """One replicate: every model x beta, each initializer alone, and HC-refined where asked (``refine``: on
    every model; ``refine_quadratic``: on the quadratic model too); error = sin of the angle to beta.

    Cost at quick: about 45 s per replicate (10 replicates, the least that puts the mean error's SE below the
    gaps the claims read): five initializers on two designs, each refined by simulated annealing (up to 20,000
    iterations) and Nelder-Mead (10,000 evaluations) on n = 400.

    Labelled metrics (``icml24.core.labelled``): ``error[beta=,design=,init=,model=,refined=False]`` (the
    initializer alone) and ``...,refined=True]`` (refined), ``b_gap[beta=,design=,init=,model=]`` (the refined
    objective B minus B at the true beta: negative means the optimizer found a direction the estimator prefers to
    the truth, so the remaining error is statistical, not an optimization failure). Regime:
    ``snr[beta=,design=,model=]`` (Var f / Var eps) and ``true_eta[...]`` (the estimated Hellinger correlation at
    the true beta).

    ``refiner`` fills the refined slot: "hc" (the method), or the nulls "none" (the initializer's own direction,
    no refinement) and "random" (a uniformly random unit direction, no data used); keys stay ``refined=True``.

    ``designs``: "gaussian" (the official X ~ N(0, I)) and "t3" (heavy-tailed i.i.d. t(3) covariates, refined
    initializers ``refine_heavy``).
    """
    if refiner not in ("hc", "none", "random"):
        raise ValueError(f"refiner must be 'hc', 'none' or 'random', got {refiner!r}")
    unknown = sorted(set(initializers) - set(INITIALIZERS)) + sorted(
        (set(refine) | set(refine_quadratic) | (set(refine_heavy) if set(designs) - {"gaussian"} else set()))
        - set(initializers))
    if set(designs) - set(DESIGNS) or not designs:
        raise ValueError(f"designs must be a non-empty subset of {', '.join(DESIGNS)}, got {list(designs)}")
    if unknown:
        raise ValueError(f"initializers must be among {', '.join(INITIALIZERS)}, refined ones among the initializers; "
                         f"got {unknown}")
    metrics: dict[str, float] = {"n_over_p": n / 10.0}
    seconds, refinements = 0.0, 0
    for design, kind in ((design, kind) for design in designs for kind in betas):
        if kind not in ("sparse", "dense"):
            raise ValueError(f"betas must be 'sparse' or 'dense', got {kind!r}")
        heavy = design != "gaussian"
        for model in models:
            stream = ("data", kind, model) if not heavy else ("data", design, kind, model)
            X, y, beta = single_index_data(model, ctx.rng(*stream), n=n, sparse=kind == "sparse",
                                           noise=noise, normalize_sparse=normalize_sparse, design=design)
            case = {"beta": kind, "design": design, "model": model}
            true_b = ProjectionObjective(X, y)(beta / np.linalg.norm(beta))
            metrics[labelled("snr", **case)] = signal_to_noise(model, kind == "sparse", noise, normalize_sparse)
            metrics[labelled("true_eta", **case)] = hellinger_from_bhattacharyya(true_b)
            shown = {}
            for name in initializers:
                init = make_initializer(name, random_state=ctx.child_seed("init", design, kind, model, name)).fit(X, y)
                metrics[labelled("error", **case, init=name, refined=False)] = _error(init.directions_, beta)
                shown[name.upper()] = init.directions_[:, 0]
                chosen = (name in refine_heavy if heavy
                          else name in refine or (model == "quadratic" and name in refine_quadratic))
                if not chosen:
                    continue
                if refiner == "hc":
                    start = time.perf_counter()
                    refined = HellingerSDR(init=init.directions_[:, 0], sa_maxiter=sa_maxiter, nm_maxfev=nm_maxfev,
                                           random_state=ctx.child_seed("hc", design, kind, model, name)).fit(X, y)
                    seconds += time.perf_counter() - start
                    refinements += 1
                    estimate, b_value = refined.directions_, refined.bhattacharyya_
                else:  # a null in the refined slot
                    direction = (init.directions_[:, 0] if refiner == "none"
                                 else ctx.rng("random-direction", design, kind, model, name
                                              ).standard_normal(X.shape[1]))
                    estimate = (direction / np.linalg.norm(direction))[:, None]
                    b_value = ProjectionObjective(X, y)(estimate[:, 0])
                metrics[labelled("error", **case, init=name, refined=True)] = _error(estimate, beta)
                metrics[labelled("b_gap", **case, init=name)] = b_value - true_b
                shown[f"HC-{name.upper()}" if refiner == "hc" else f"{refiner}-{name.upper()}"] = estimate[:, 0]
            if model == "quadratic" and kind == betas[0] and not heavy:
                _plot(ctx, X, y, beta, shown, f"{kind} quadratic model, replicate {ctx.seed}")
    ctx.artifact("timing", {"refinements": refinements, "seconds_per_refinement": seconds / max(refinements, 1)})
    return metrics


def _error_key(refined: bool, **case) -> str:
    """The key of one error: ``error[beta=,design=,init=,model=,refined=]``."""
    return labelled("error", **case, refined=refined)


SIR_QUADRATIC = {"beta": "sparse", "design": "gaussian", "init": "sir", "model": "quadratic"}


# an error is a sine in [0, 1]: a "gain" of a few 1e-16 is rounding (the no-refinement null held on it), a real one is
# of order 1e-2; an improvement counts only beyond this
MIN_GAIN = 1e-6


@single_index.summarizer
def _single_index_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Across replicates: models where refinement lowers DR's mean error, the worst mean increase, win rates."""
    means = {key: float(np.mean([m[key] for m in per_seed])) for key in per_seed[0]}
    cases = [{k: v for k, v in labels.items() if k != "refined"}  # every refined (case, initializer)
             for labels, _ in select(means, "error", refined=True)]
    pairs = [c for c in cases if c["design"] == "gaussian"]
    heavy = [c for c in cases if c["design"] != "gaussian"]

    def gain(m, c):  # error alone minus error refined: > MIN_GAIN when the refinement helps
        return m[_error_key(False, **c)] - m[_error_key(True, **c)]

    out: dict[str, float] = {}
    if pairs:
        out["max_mean_error_increase"] = max(-gain(means, c) for c in pairs)
    for design, name in sorted({(c["design"], c["init"]) for c in heavy}):
        mine = [c for c in heavy if (c["design"], c["init"]) == (design, name)]
        out[f"{design}_{name}_models_improved"] = float(sum(gain(means, c) > MIN_GAIN for c in mine))
        gains = np.array([[gain(m, c) for c in mine] for m in per_seed]).mean(axis=1)
        out[f"{design}_{name}_mean_gain"] = float(gains.mean())
        out[f"{design}_{name}_mean_gain_se"] = (float(gains.std(ddof=1) / np.sqrt(len(gains))) if len(gains) > 1
                                                else 0.0)
    for kind in ("sparse", "dense"):
        dr = [c for c in pairs if c["beta"] == kind and c["init"] == "dr"]
        if dr:
            out[f"dr_models_improved_{kind}"] = float(sum(gain(means, c) > MIN_GAIN for c in dr))
    for name in sorted({c["init"] for c in pairs}):
        wins = [gain(m, c) > MIN_GAIN for m in per_seed for c in pairs if c["init"] == name]
        out[f"{name}_refined_win_fraction"] = float(np.mean(wins))
    return out


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
        check=lambda m: m[_error_key(False, **SIR_QUADRATIC)] >= 0.7 and m[_error_key(True, **SIR_QUADRATIC)] <= 0.4,
        paper="SIR is blind to y = (beta^T X)^2; the refinement maximizes a dependence measure that is not",
    ),
    Claim(
        "Heavy-tailed design (i.i.d. t(3) covariates): HC refinement lowers the mean error of DR and of MAVE in at "
        "least 3 of the 4 models each, and DR's error averaged over the models falls by more than 2 standard errors",
        experiment=single_index,
        check=lambda m: (m.get("t3_dr_models_improved", 0.0) >= 3 and m.get("t3_mave_models_improved", 0.0) >= 3
                         and m.get("t3_dr_mean_gain", 0.0) > max(2 * m.get("t3_dr_mean_gain_se", 0.0), MIN_GAIN)),
        paper="Simulation study, heavy-tailed settings: the refinement helps most where moment-based SDR "
              "methods' linearity conditions fail (qualitative; numbers not extracted)",
    ),
]
